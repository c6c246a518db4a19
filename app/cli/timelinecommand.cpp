// `ckptscope-cli timeline PATH...`: a training run's checkpoints over steps.
#include "clicommon.h"
#include "timelinereport.h"

#include "ckptscope/stats/tensorstats.h"

#include <algorithm>
#include <ctime>
#include <iostream>

namespace cli {

using nlohmann::ordered_json;
using namespace ckptscope;

namespace {

const char* kTimelineHelp =
    R"(Usage: ckptscope-cli timeline PATH... [--json] [--tensor NAME]... [--no-cache]

Reads a training run's checkpoints and follows every tensor over the steps.
PATH is a folder (the checkpoint files directly in it, recognised by content;
its Hugging Face "checkpoint-N" subfolders, one checkpoint each) or a file.
Shards (NAME-00001-of-00004.EXT) form one checkpoint; a file given twice
counts once. The first readable file in name order decides the kind of the
run (tensor files or gradient checkpoints); other files are listed as skipped,
with the reason.

The step of a checkpoint is its metadata "step", "global_step", "iteration" or
"iter" (digits), a gradient checkpoint's step, else a number in its name
(after step/global_step/iter/iteration/checkpoint/ckpt, else the last number
that is not part of a dtype like bf16 or a shard like 00001-of-00004).
Checkpoints are sorted by step, then name; those without a step come last.

Summaries (statistics and a fine histogram per tensor) are cached in
$XDG_CACHE_HOME/ckptscope (default ~/.cache/ckptscope), keyed on the file's
device, inode, size, mtime, ctime and path; CKPTSCOPE_CACHE_MAX_BYTES caps
its size (default 1 GiB, least recently used entries go first).

Options:
  --json          machine-readable output (series per tensor, metadata per
                  key, first checkpoint with NaN/Inf, cache hits and misses)
  --tensor NAME   only this tensor (repeatable)
  --no-cache      neither read nor write the cache

Exit status: 0 when at least one checkpoint was read, 1 when none was,
2 usage error.
)";

struct TimelineOptions {
    std::vector<std::string> paths;
    std::vector<std::string> tensors;
    bool json = false;
    bool noCache = false;
    bool help = false;
};

TimelineOptions parseTimelineOptions(const std::vector<std::string>& args) {
    TimelineOptions o;
    bool optionsEnded = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (optionsEnded || a.empty() || a[0] != '-' || a == "-") {
            o.paths.push_back(a);
        } else if (a == "--") {
            optionsEnded = true;
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--no-cache") {
            o.noCache = true;
        } else if (a == "-h" || a == "--help") {
            o.help = true;
        } else if (a == "--tensor") {
            if (i + 1 >= args.size())
                throw UsageError("--tensor needs a value");
            o.tensors.push_back(args[++i]);
        } else {
            throw UsageError("unknown option " + a);
        }
    }
    if (!o.help && o.paths.empty())
        throw UsageError("timeline needs at least one PATH (a folder or a checkpoint file)");
    return o;
}

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
    const TimelineOptions o = parseTimelineOptions(args);
    if (o.help) {
        std::cout << kTimelineHelp;
        return kOk;
    }
    RunOptions ro;
    ro.useCache = !o.noCache;
    const Run run = readRun(o.paths, ro);
    TimelineReport report{run, {}, {}, !o.noCache};
    report.tensors = selectSeries(tensorSeries(run), o.tensors);
    for (BlobSeries& b : blobSeries(run))
        if (o.tensors.empty() ||
            std::find(o.tensors.begin(), o.tensors.end(), b.name) != o.tensors.end())
            report.blobs.push_back(std::move(b));
    if (!run.checkpoints.empty()) {
        for (const std::string& want : o.tensors) {
            const bool known = std::any_of(report.tensors.begin(), report.tensors.end(),
                                           [&](const TensorSeries& s) { return s.name == want; }) ||
                               std::any_of(report.blobs.begin(), report.blobs.end(),
                                           [&](const BlobSeries& s) { return s.name == want; });
            if (!known)
                throw UsageError("no checkpoint of the run has a tensor named '" + want + "'");
        }
    }
    if (o.json)
        std::cout << timelineJson(report).dump(2, ' ', false,
                                               ordered_json::error_handler_t::replace)
                  << "\n";
    else
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
