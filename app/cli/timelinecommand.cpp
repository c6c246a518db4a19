// `ckptscope-cli timeline PATH...`: a training run's checkpoints over steps.
#include "clicommon.h"
#include "clijson.h"
#include "timelinereport.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/stats/tensorstats.h"

#include <algorithm>
#include <ctime>
#include <iostream>

namespace cli {

using nlohmann::ordered_json;
using namespace ckptscope;

namespace {

const CommandSpec kTimeline = {
    "timeline",
    {"PATH..."},
    R"(Reads a training run's checkpoints and follows every tensor over the steps.
PATH is a folder (the checkpoint files directly in it, recognised by content;
its Hugging Face "checkpoint-N" subfolders, one checkpoint each, with the
Trainer's trainer_state.json, config.json and optimizer.pt; DeepSpeed's
"global_stepN" and DCP's "step-N" subfolders, one model each) or a file; a
folder may be an s3:// prefix, a file any URL.
Shards (NAME-00001-of-00004.EXT) form one checkpoint; a file given twice
counts once. The first readable file in name order decides the kind of the
run (tensor files or gradient checkpoints); other files are listed as skipped,
with the reason.

The step of a checkpoint is its metadata "step", "global_step", "iteration" or
"iter" (digits), a gradient checkpoint's step, else a number in its name
(after step/global_step/iter/iteration/checkpoint/ckpt, else the last number
that is not part of a dtype like bf16 or a shard like 00001-of-00004).
Checkpoints are sorted by step, then name; those without a step come last.

Summaries (statistics and a 64-bin histogram per tensor, and each
parameter's last update where a checkpoint holds optimizer state) are cached in
$XDG_CACHE_HOME/ckptscope (default ~/.cache/ckptscope), keyed on the file's
device, inode, size, mtime, ctime and path; CKPTSCOPE_CACHE_MAX_BYTES caps
its size (default 1 GiB, least recently used entries go first).
)",
    {jsonOption("machine-readable output (series per tensor, metadata per\n"
                "key, the Trainer's whole log, first checkpoint with NaN/Inf,\n"
                "cache hits and misses)"),
     tensorOption("only this tensor (repeatable)"),
     {"--no-cache", "", "neither read nor write the cache"}},
    "timeline needs at least one PATH (a folder or a checkpoint file)",
    {},
    "Exit status: 0 when at least one checkpoint was read, 1 when none was,\n"
    "2 usage error.\n",
};

} // namespace

std::string utcTime(int64_t ns) {
    const auto seconds = std::time_t(ns >= 0 ? ns / 1'000'000'000 : (ns + 1) / 1'000'000'000 - 1);
    std::tm tm{};
    if (!gmtime_r(&seconds, &tm))
        return "?";
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

int runTimeline(const std::vector<std::string>& args) {
    const auto p = parseCommand(kTimeline, args);
    if (!p)
        return kOk;
    const std::vector<std::string> names = p->values("--tensor");
    const bool noCache = p->has("--no-cache");
    RunOptions ro;
    ro.useCache = !noCache;
    const Run run = readRun(p->operands(), ro);
    TimelineReport report{run, {}, {}, !noCache};
    report.tensors = selectSeries(tensorSeries(run), names);
    for (BlobSeries& b : blobSeries(run))
        if (names.empty() || std::find(names.begin(), names.end(), b.name) != names.end())
            report.blobs.push_back(std::move(b));
    if (!run.checkpoints.empty()) {
        for (const std::string& want : names) {
            const bool known = std::any_of(report.tensors.begin(), report.tensors.end(),
                                           [&](const TensorSeries& s) { return s.name == want; }) ||
                               std::any_of(report.blobs.begin(), report.blobs.end(),
                                           [&](const BlobSeries& s) { return s.name == want; });
            if (!known)
                throw UsageError("no checkpoint of the run has a tensor named '" + want + "'");
        }
    }
    if (p->has("--json")) {
        JsonStreamWriter w(std::cout);
        writeTimeline(w, report);
        endJsonOutput(w);
    } else
        std::cout << timelineText(report);
    if (run.checkpoints.empty()) {
        std::cerr << "ckptscope-cli: error: no checkpoint could be read"
                  << (run.skipped.empty() ? " (no files found)" : " (see the skipped files)")
                  << "\n";
        return kInvalidFile;
    }
    return kOk;
}

} // namespace cli
