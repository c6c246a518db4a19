#pragma once

#include "ckptscope/run/runseries.h"

#include <string>
#include <vector>

namespace ckptscope {
class JsonStreamWriter;
}

namespace cli {

// What `timeline` reports, derived once from the run and the --tensor names.
struct TimelineReport {
    const ckptscope::Run& run;
    std::vector<ckptscope::TensorSeries> tensors; // after --tensor
    std::vector<ckptscope::BlobSeries> blobs;     // after --tensor (gradient runs)
    bool cacheUsed = true;
};

// "2026-11-29T08:00:03Z" (UTC, whole seconds).
std::string utcTime(int64_t ns);

// `timeline --json`, streamed to w.
void writeTimeline(ckptscope::JsonStreamWriter& w, const TimelineReport& report);
std::string timelineText(const TimelineReport& report);

} // namespace cli
