// The human-readable report of `timeline`: one line per checkpoint, what
// the Trainer logged, then what stands out (first NaN/Inf, tensors whose L2
// norm grew most).
#include "textformat.h"
#include "timelinereport.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/run/optimizeroutliers.h"

#include <cmath>

namespace cli {

using namespace ckptscope;

namespace {

std::string stepText(const std::optional<uint64_t>& step) {
    return step ? std::to_string(*step) : "-";
}

std::string modifiedText(const std::optional<int64_t>& ns) {
    if (!ns)
        return "-"; // a URL whose server sent no Last-Modified
    std::string t = utcTime(*ns);
    if (t.size() == 20) // "2026-11-29T08:00:03Z" → "2026-11-29 08:00:03"
        t = t.substr(0, 10) + " " + t.substr(11, 8);
    return t;
}

std::string tensorTable(const TimelineReport& r) {
    TextTable table({"step", "from", "checkpoint", "size", "modified (UTC)", "tensors", "NaN/Inf"},
                    {true, false, false, true, false, true, true});
    for (const RunCheckpoint& c : r.run.checkpoints) {
        uint64_t bad = 0;
        for (const TensorSummary& t : c.summary.tensors)
            bad += (t.stats.nan + t.stats.posInf + t.stats.negInf) > 0;
        table.addRow({stepText(c.step), stepSourceName(c.stepSource), c.name,
                      fmt::bytes(c.fileSize), modifiedText(c.mtimeNs),
                      fmt::grouped(c.summary.tensors.size()),
                      bad ? fmt::counted(bad, "tensor", "tensors") : ""});
    }
    return table.render("  ");
}

std::string gradientTable(const TimelineReport& r) {
    TextTable table({"step", "checkpoint", "size", "modified (UTC)", "nodes", "edges", "forward",
                     "backward", "optimizer state"},
                    {true, false, true, false, true, true, true, true, true});
    for (const RunCheckpoint& c : r.run.checkpoints) {
        uint64_t blobBytes = 0;
        for (const BlobSummary& b : c.summary.blobs)
            blobBytes += b.bytes;
        const GraphCounts& g = c.summary.graph;
        table.addRow({stepText(c.step), c.name, fmt::bytes(c.fileSize), modifiedText(c.mtimeNs),
                      fmt::grouped(g.nodes), fmt::grouped(g.edges), fmt::grouped(g.forwardDone),
                      fmt::grouped(g.backwardDone), fmt::bytes(blobBytes)});
    }
    return table.render("  ");
}

// The parameters whose optimizer figures stand out, when the run has
// optimizer state.
std::string optimizerFindings(const Run& run) {
    if (!runHasUpdates(run))
        return {};
    const std::vector<OptimizerOutlier> outliers = optimizerOutliers(run);
    if (outliers.empty())
        return "  No parameter's update / weight is " + fmt::display(kOutlierFactor) +
               "× off its checkpoint's median, no second moment grew " +
               fmt::display(kSecondMomentGrowth) + "× between checkpoints.\n";
    std::string out = "  Optimizer outliers (update / weight " + fmt::display(kOutlierFactor) +
                      "× off the checkpoint's median; mean exp_avg_sq grown " +
                      fmt::display(kSecondMomentGrowth) + "× since the last checkpoint):\n";
    TextTable table({"tensor", "step", "what", "value", "against", "factor"},
                    {false, true, false, true, true, true});
    for (const OptimizerOutlier& o : outliers) {
        const bool ratio = o.kind == OptimizerOutlier::Kind::UpdateToWeight;
        table.addRow({o.name, stepText(o.step), ratio ? "update / weight" : "sqrt(v) growth",
                      fmt::display(o.value),
                      (ratio ? "median " : "was ") + fmt::display(o.reference),
                      outlierFactorText(o.factor)});
    }
    return out + table.render("    ");
}

std::string findings(const TimelineReport& r) {
    const Run& run = r.run;
    std::string out = optimizerFindings(run);
    if (const auto first = firstNonfinite(run, r.tensors)) {
        const RunCheckpoint& c = run.checkpoints[first->index];
        out += "  First NaN/Inf: step " + stepText(first->step) + " (" + printable(c.name) +
               "), in " + fmt::counted(first->tensors.size(), "tensor", "tensors") + ":";
        for (size_t i = 0; i < first->tensors.size() && i < kNonfiniteNamed; ++i)
            out += (i ? ", " : " ") + printable(first->tensors[i]);
        if (first->tensors.size() > kNonfiniteNamed)
            out += ", and " + fmt::grouped(first->tensors.size() - kNonfiniteNamed) + " more";
        out += "\n";
    } else {
        out += "  No NaN or Inf in any checkpoint.\n";
    }
    const auto growth = largestL2Growth(run, r.tensors, kL2GrowthListed);
    if (growth.empty()) {
        out += "  No tensor's L2 norm grew between its first and last checkpoint.\n";
        return out;
    }
    out += "  L2 norm grew most (first → last checkpoint holding the tensor):\n";
    TextTable table({"tensor", "L2 first", "L2 last", "ratio", "steps"},
                    {false, true, true, true, false});
    for (const L2Change& g : growth)
        table.addRow({r.tensors[g.series].name, fmt::display(g.first), fmt::display(g.last),
                      "×" + fmt::display(g.ratio),
                      stepText(run.checkpoints[g.firstIndex].step) + " → " +
                          stepText(run.checkpoints[g.lastIndex].step)});
    return out + table.render("    ");
}

// What the Trainer logged, a line per key: how often, the last value and
// the extremes with their steps (a spike between checkpoints shows here).
std::string trainerLogText(const Run& run) {
    TextTable table({"key", "logged", "last", "lowest", "highest", "NaN/Inf"},
                    {false, true, true, true, true, true});
    std::vector<LoggedSummary> rows;
    for (const auto& entry : run.trainerHistory)
        rows.push_back(summarizeLogged(entry.second));
    // The value columns in one notation (fmt::exactColumn): "0.0005" beside
    // "0.00097", never "5e-04", in a column and along a row.
    using Pick = std::optional<LoggedSummary::Entry> LoggedSummary::*;
    const Pick picks[] = {&LoggedSummary::last, &LoggedSummary::lowest, &LoggedSummary::highest};
    std::vector<double> values;
    for (const LoggedSummary& l : rows)
        for (Pick pick : picks)
            if (l.*pick)
                values.push_back((l.*pick)->second);
    const std::vector<std::string> texts = fmt::exactColumn(values);
    std::vector<std::vector<std::string>> columns(3);
    size_t next = 0;
    for (const LoggedSummary& l : rows)
        for (size_t c = 0; c < 3; ++c)
            columns[c].push_back(l.*picks[c]
                                     ? texts[next++] + " at " + std::to_string((l.*picks[c])->first)
                                     : std::string("–"));
    size_t i = 0;
    for (const auto& entry : run.trainerHistory) {
        const LoggedSummary& l = rows[i];
        table.addRow({entry.first, fmt::grouped(l.logged), columns[0][i], columns[1][i],
                      columns[2][i], l.nonFinite ? fmt::grouped(l.nonFinite) : ""});
        ++i;
    }
    return table.render("  ");
}

} // namespace

std::string timelineText(const TimelineReport& r) {
    const Run& run = r.run;
    std::string out;
    if (run.kind) {
        const bool gradient = *run.kind == RunKind::Gradient;
        const size_t n = run.checkpoints.size();
        out += (gradient ? fmt::counted(n, "gradient checkpoint", "gradient checkpoints")
                         : fmt::counted(n, "tensor checkpoint", "tensor checkpoints")) +
               ", by step:\n";
        out += gradient ? gradientTable(r) : tensorTable(r);
    } else {
        out += "No checkpoint could be read.\n";
    }
    if (run.modelConfig) {
        out += "\nModel (" + printable(run.modelConfig->path) + "):";
        for (const auto& [key, value] : run.modelConfig->rows())
            out += " " + key + " " + printable(value) + ";";
        out.back() = '\n';
    }
    if (!run.trainerHistoryFile.empty())
        out += "\nLogged by the Trainer (" + printable(run.trainerHistoryFile) + "):" +
               (run.trainerHistory.empty() ? " nothing under the log keys\n"
                                           : "\n" + trainerLogText(run));
    if (!run.warnings.empty()) {
        out += "\nWarnings:\n";
        for (const std::string& w : run.warnings)
            out += "  " + w + "\n"; // the core's text, escaped where it quotes a file
    }
    if (!run.skipped.empty()) {
        out += "\nSkipped " + fmt::grouped(run.skipped.size()) + ":\n";
        for (const SkippedPath& s : run.skipped)
            out += "  " + printable(s.path) + ": " + s.reason + "\n";
    }
    if (run.kind == RunKind::Tensors)
        out += "\nFindings:\n" + findings(r);
    out += "\nCache: ";
    out += r.cacheUsed ? fmt::counted(run.cacheHits, "hit", "hits") + ", " +
                             fmt::counted(run.cacheMisses, "miss", "misses") + "\n"
                       : "not used (--no-cache)\n";
    return out;
}

} // namespace cli
