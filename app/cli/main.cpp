// ckptscope-cli: the command-line twin of the Ckptscope browser.
#include "clicommon.h"

#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/io/httpsource.h"
#include "ckptscope/io/hugepageheap.h"

#include <csignal>
#include <iostream>

namespace {

const char* kHelp = R"(Usage: ckptscope-cli COMMAND FILE [OPTIONS]

Inspects checkpoints of these formats, detected from the content, not the
file name:
{formats}
A sharded model opens by its index (NAME.safetensors.index.json,
pytorch_model.bin.index.json) or by the folder holding it, as one model; so
does a DeepSpeed ZeRO folder (holding latest, or a global_stepN folder),
assembled from its ranks' partitions, and a PyTorch distributed checkpoint
(DCP: the folder holding .metadata and the ranks' .distcp files). A FILE may
be an http:// or https:// URL: only the bytes needed are read, by range
requests (the Hugging Face token in HF_TOKEN or ~/.cache/huggingface/token
goes to huggingface.co or HF_ENDPOINT's host only); or s3://BUCKET/KEY, read
the same way, signed with the credentials the AWS CLI would use
(AWS_ACCESS_KEY_ID…, AWS_PROFILE in ~/.aws/credentials and ~/.aws/config;
AWS_REGION; AWS_ENDPOINT_URL_S3 for an S3-compatible store); and
s3://BUCKET/PREFIX/ wherever a folder goes (a sharded model, a DCP or
DeepSpeed folder, a run), listed with ListObjectsV2.

Commands:
  info FILE [--json]        header, metadata, tensors (OXCK, safetensors: with
                            each tensor's dtype) or graph summary
                            (gradient checkpoint), and every warning
  stats FILE [--tensor NAME]... [--json [--bins N] | --csv | --optimizer [--json]]
                            per-tensor statistics over the stored values:
                            count, finite, NaN, +-Inf, zeros, min, max, mean,
                            std (population), L2 norm (min and max as
                            stored: whole integers, floats to the last
                            digit); with --json also an N-bin histogram
                            (default 32) over the finite range. For gradient
                            checkpoints, optimizer-state blobs whose length is
                            a multiple of 4 are read as f32 little-endian.
                            --csv: one row per tensor (the --json fields
                            but the histogram), RFC 4180, empty for null.
                            --optimizer: the last update each parameter
                            received (Adam, SGD), from the optimizer state of
                            a Trainer folder, optimizer.pt, Lightning .ckpt
                            or DeepSpeed folder: update RMS and max, update /
                            weight, moments' RMS, decoupled decay.
  export FILE --tensor NAME -o OUT [--format npy|csv|raw]
                            one tensor's values: .npy (its dtype and shape),
                            .csv (rows x last dimension, exact float text)
                            or raw little-endian bytes; -o - writes to
                            standard output and needs --format
  convert IN OUT [--shard-size SIZE] [--include-optimizer] [--weights KIND]
                            OXCK, GGUF or PyTorch -> OUT.safetensors or
                            OUT.npz; safetensors, GGUF or PyTorch -> OUT.oxck
                            (values converted to f32; GGUF block types
                            dequantized, F16 and BF16 kept in safetensors;
                            a PyTorch view written contiguous, a pickle's
                            values that are not tensors left out, each
                            named); the format from OUT's extension; a
                            sharded model or GGUF split -> one
                            OUT.safetensors, or with --shard-size Hugging
                            Face shards and their index; a DeepSpeed folder
                            -> its fp32 master weights by parameter name
                            (--weights module: as saved), a DCP folder -> its
                            model (--include-optimizer: optim.* too)
  layout FILE [--json]      layered drawing of a gradient checkpoint's graph:
                            a summary (nodes, edges, ranks, crossings, edges
                            reversed to break cycles, size), or with --json
                            every node's centre, size and rank, every edge's
                            route from border to border, and the crossings
  graph FILE [--dot]        the computation graph as Graphviz DOT (the default
                            and only format): labels are ops, the loss node is
                            highlighted
  render FILE -o OUT.svg|OUT.png [--left-right]
                            draw a gradient checkpoint's computation graph as
                            the browser does, without a display

  diff A B [--json [--bins N]] [--atol X] [--rtol Y] [--tensor NAME]...
       [--no-map] [--rename REGEX=REPLACEMENT]... [--strip-prefix PREFIX]
                            compare B with A (the reference): two tensor
                            files (any format above) tensor by tensor (same
                            name, k-th occurrence with k-th), element by
                            element when shape and stored count agree; or
                            two gradient checkpoints (step, loss CID,
                            timestamp, nodes by id — or by op and
                            topological position when fewer than half the ids
                            match —, edges as multisets, optimizer blobs).
                            Elements differ when exactly one is NaN, when one
                            is infinite and the other not the same infinity,
                            or when |b - a| > atol + rtol * |a| (defaults 0:
                            exact equality, -0 == +0, NaN == NaN). Blobs of
                            equal length, a multiple of 4, compare as f32.
                            Text: a summary line, then what differs, NaN/Inf
                            mismatches first, then by relative L2 change.
                            --tensor limits the tensors (optimizer blobs)
                            compared, by A's name or a mapped pair's B name;
                            --bins sets --json's histogram of B - A
                            (default 64).
  timeline PATH... [--tensor NAME]... [--no-cache] [--json]
                            a training run: the checkpoints in folders (and
                            their checkpoint-N or global_stepN subfolders) or
                            files, ordered by step, each tensor's statistics
                            over the steps, the first NaN/Inf, and where the
                            checkpoints hold optimizer state each parameter's
                            last update and the outliers among them;
                            summaries are cached (see
                            'ckptscope-cli timeline --help')

  scan PATH... [--json]     what each PyTorch file's pickle would import and
                            call when loaded (never run): every global with
                            its count and risk (safe, unsafe, unknown) and
                            the arguments of each unsafe call; folders
                            searched; exit 1 when anything is unsafe

  generate oxck OUT [--tensors N] [--size BYTES] [--seed S]
  generate gradient OUT [--nodes N] [--optimizer-bytes BYTES] [--seed S]
  generate gguf OUT [--type TYPE] [--size BYTES] [--f32-twin FILE]
                            write a synthetic transformer-like checkpoint
                            (for samples and benchmarks); sizes take K, M, G;
                            the graph has exactly N nodes (3 or more,
                            default 2000); a GGUF holds one block type and
                            may come with its f32 values as safetensors

Options:
  --json        machine-readable output on stdout
  --header 'NAME: VALUE'
                an HTTP header sent with every request for a URL (repeatable,
                any command; not sent on when a redirect leaves the host)
  --no-sign-request
                read s3:// objects unsigned (a public bucket), whatever
                credentials are set (any command)
  -h, --help    this help; after a command (ckptscope-cli diff --help),
                that command's usage and options
  --version     the version

Exit status of info, stats, layout, graph, render, export, convert and
generate: 0 success,
1 the file is invalid or unreadable (message on stderr as "FILE: error: ..."),
2 usage error.
Exit status of diff (as diff, cmp and h5diff): 0 no differences, 1 anything
differs (a tensor, a metadata entry, a graph field, node, edge or blob),
2 trouble: a file missing or damaged ("FILE: error: ..." names it), a tensor
file against a gradient checkpoint, a --tensor name in neither file, a usage
error.
Exit status of scan: 1 anything unsafe was found, else 2 a file or pickle
could not be read, else 0.
Warnings about a file go to stderr as "FILE: warning: ..." and, with --json,
into the output: "warnings" of info, stats and layout, "a"/"b" "warnings" of
diff.
)";

// Takes every "--header V" / "--header=V" and "--no-sign-request" out of
// args (they apply to all URLs, whatever the command) into the HTTP options.
std::vector<std::string> takeHeaders(std::vector<std::string> args) {
    std::vector<std::string> rest;
    for (size_t i = 0; i < args.size(); ++i) {
        std::string value;
        if (args[i] == "--") {
            rest.insert(rest.end(), args.begin() + long(i), args.end());
            break;
        }
        if (args[i] == "--no-sign-request") {
            ckptscope::defaultHttpOptions().noSignRequest = true;
            continue;
        }
        if (args[i] == "--header") {
            if (i + 1 == args.size())
                throw cli::UsageError("--header needs a value ('NAME: VALUE')");
            value = args[++i];
        } else if (args[i].rfind("--header=", 0) == 0) {
            value = args[i].substr(9);
        } else {
            rest.push_back(args[i]);
            continue;
        }
        const size_t colon = value.find(':');
        if (colon == 0 || colon == std::string::npos || value.find_first_of(" \t\r\n") < colon ||
            value.find_first_of("\r\n") != std::string::npos)
            throw cli::UsageError("--header wants 'NAME: VALUE' (a name, a colon, a value)");
        ckptscope::defaultHttpOptions().headers.push_back(value);
    }
    return rest;
}

// The help with every format read named from the registry (a new module
// appears by itself).
std::string helpText() {
    std::string text = kHelp;
    const std::string key = "{formats}\n";
    const size_t at = text.find(key);
    if (at != std::string::npos) {
        std::string list;
        for (const ckptscope::FormatModule& m : ckptscope::formatModules())
            list += std::string("  ") + m.description + " (" + m.extension + ")\n";
        text.replace(at, key.size(), list);
    }
    return text;
}

} // namespace

int main(int argc, char** argv) {
    // Fresh heap pages dominate a short run on a VM (info on a 7 MB gradient
    // file: ~6 000 page faults); 2 MiB pages make that a few dozen.
    ckptscope::reserveHugePageHeap(size_t(64) << 20);
    std::signal(SIGXFSZ, SIG_IGN); // over a size limit a write fails (EFBIG), no kill
    std::ios::sync_with_stdio(false);
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::cerr << helpText();
        return cli::kUsage;
    }
    const std::string& cmd = args[0];
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
        std::cout << helpText();
        return cli::kOk;
    }
    if (cmd == "--version") {
        std::cout << "ckptscope-cli " << CKPTSCOPE_VERSION << "\n";
        return cli::kOk;
    }
    try {
        const std::vector<std::string> rest = takeHeaders({args.begin() + 1, args.end()});
        if (cmd == "info")
            return cli::runInfo(rest);
        if (cmd == "scan")
            return cli::runScan(rest);
        if (cmd == "stats")
            return cli::runStats(rest);
        if (cmd == "generate")
            return cli::runGenerate(rest);
        if (cmd == "layout")
            return cli::runLayout(rest);
        if (cmd == "graph")
            return cli::runGraph(rest);
        if (cmd == "render")
            return cli::runRender(rest);
        if (cmd == "export")
            return cli::runExport(rest);
        if (cmd == "convert")
            return cli::runConvert(rest);
        if (cmd == "diff")
            return cli::runDiff(rest);
        if (cmd == "timeline")
            return cli::runTimeline(rest);
        throw cli::UsageError("unknown command '" + cmd + "'");
    } catch (const cli::UsageError& e) {
        std::cerr << "ckptscope-cli: error: " << e.what()
                  << "\nTry 'ckptscope-cli --help' for more information.\n";
        return cli::kUsage;
    } catch (const ckptscope::OpenError& e) {
        std::cerr << e.file() << ": error: " << e.detail() << "\n";
        return cli::kInvalidFile;
    } catch (const std::exception& e) {
        // Reads after opening (values): the message begins with the file.
        std::cerr << cli::errorLine(e.what()) << "\n";
        return cli::kInvalidFile;
    }
}
