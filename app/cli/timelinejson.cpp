// The JSON of `timeline --json` (contract in README and issue 12).
#include "clijson.h"
#include "statsjson.h"
#include "timelinereport.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/run/metadatanumber.h"
#include "ckptscope/run/optimizeroutliers.h"

#include <cmath>
#include <filesystem>

namespace cli {

using nlohmann::ordered_json;
using namespace ckptscope;

namespace {

ordered_json checkpointsJson(const Run& run) {
    ordered_json list = ordered_json::array();
    for (const RunCheckpoint& c : run.checkpoints) {
        ordered_json j;
        j["path"] = c.path;
        j["step"] = orNull(c.step);
        j["step_source"] = stepSourceName(c.stepSource);
        j["file_size"] = c.fileSize;
        j["mtime"] =
            c.mtimeNs ? ordered_json(utcTime(*c.mtimeNs)) : ordered_json(); // null: unknown
        ordered_json side = ordered_json::array(); // names: they lie in the checkpoint's folder
        for (const std::string& path : c.sideFiles)
            side.push_back(std::filesystem::path(path).filename().string());
        j["side_files"] = std::move(side);
        j["optimizer_file"] =
            c.optimizerFile.empty() ? ordered_json() : ordered_json(c.optimizerFile);
        list.push_back(std::move(j));
    }
    return list;
}

// config.json's facts under its own keys ("architecture": architectures[0]),
// sizes as numbers.
ordered_json modelConfigJson(const ModelConfig& config) {
    ordered_json j;
    j["path"] = config.path;
    for (const auto& [key, value] : config.rows()) {
        const auto size = parseStepValue(value);
        j[key] = size ? ordered_json(*size) : ordered_json(value);
    }
    return j;
}

ordered_json skippedJson(const Run& run) {
    ordered_json list = ordered_json::array();
    for (const SkippedPath& s : run.skipped)
        list.push_back({{"path", s.path}, {"reason", s.reason}});
    return list;
}

ordered_json outliersJson(const Run& run) {
    ordered_json list = ordered_json::array();
    for (const OptimizerOutlier& o : optimizerOutliers(run)) {
        ordered_json j;
        j["name"] = o.name;
        j["step"] = orNull(o.step);
        j["kind"] = outlierKindName(o.kind);
        if (o.kind == OptimizerOutlier::Kind::UpdateToWeight) {
            j["update_to_weight"] = o.value;
            j["median"] = o.reference;
        } else {
            j["exp_avg_sq_sqrt_rms"] = o.value;
            j["previous"] = o.reference;
        }
        j["factor"] = o.factor;
        list.push_back(std::move(j));
    }
    return list;
}

// What a tensor run writes besides its series, computed before a byte is
// written (a failure then leaves no half-written output).
struct TensorRunParts {
    UpdatesByTensor updates; // each checkpoint's update per tensor
    bool anyUpdates = false;
    ordered_json metadata, firstNonfinite, outliers;
};

TensorRunParts tensorRunParts(const TimelineReport& r) {
    const Run& run = r.run;
    TensorRunParts parts;
    parts.updates = updatesByTensor(run);
    parts.anyUpdates = runHasUpdates(run);
    parts.metadata = ordered_json::array();
    for (const MetadataSeries& m : metadataSeries(run)) {
        ordered_json values = ordered_json::array();
        for (const auto& v : m.values) // a trainer log's values are numbers (NaN: null)
            values.push_back(m.numbers && v ? orNull(metadataNumber(*v)) : orNull(v));
        parts.metadata.push_back({{"key", m.key}, {"values", std::move(values)}});
    }
    if (const auto first = firstNonfinite(run, r.tensors))
        parts.firstNonfinite = {
            {"index", first->index}, {"step", orNull(first->step)}, {"tensors", first->tensors}};
    parts.outliers = outliersJson(run);
    return parts;
}

// Streamed a tensor's series at a time: 30 checkpoints of 50 000 tensors
// would make a DOM of 1.5 million points.
void writeTensorRun(JsonStreamWriter& w, const TimelineReport& r, const TensorRunParts& parts) {
    const Run& run = r.run;
    w.key("tensors");
    w.beginArray();
    for (const TensorSeries& s : r.tensors) {
        ordered_json series = ordered_json::array();
        for (size_t c = 0; c < run.checkpoints.size(); ++c) {
            const TensorSummary* t = s.point(run, c);
            ordered_json point;
            if (t)
                putStatsFields(DomFields{point}, t->stats, false);
            // With optimizer state each point carries its checkpoint's
            // update ("optimizer", null where a checkpoint has none).
            if (t && parts.anyUpdates) {
                const ParameterUpdate* u =
                    s.occurrence == 0 ? updateOf(parts.updates, c, s.name) : nullptr;
                point["optimizer"] = u ? parameterUpdateJson(*u) : ordered_json();
            }
            series.push_back(std::move(point));
        }
        writeDom(w, {{"name", s.name}, {"series", std::move(series)}});
        w.chunkDone();
    }
    w.endArray();
    w.key("metadata");
    writeDom(w, parts.metadata);
    w.key("first_nonfinite");
    writeDom(w, parts.firstNonfinite);
    w.key("optimizer_outliers");
    writeDom(w, parts.outliers);
}

// Everything trainer_state.json logged, per key: steps and values side by
// side (NaN and ±Infinity, which JSON lacks, as null); null without a state.
ordered_json trainerHistoryJson(const Run& run) {
    if (run.trainerHistoryFile.empty())
        return nullptr;
    ordered_json series = ordered_json::array();
    for (const auto& [key, logged] : run.trainerHistory) {
        ordered_json steps = ordered_json::array(), values = ordered_json::array();
        for (const auto& [step, v] : logged) {
            steps.push_back(step);
            values.push_back(std::isfinite(v) ? ordered_json(v) : ordered_json());
        }
        series.push_back(
            {{"key", key}, {"steps", std::move(steps)}, {"values", std::move(values)}});
    }
    return {{"file", run.trainerHistoryFile}, {"series", std::move(series)}};
}

void writeGradientRun(JsonStreamWriter& w, const TimelineReport& r) {
    const Run& run = r.run;
    ordered_json nodes = ordered_json::array(), edges = ordered_json::array(),
                 forward = ordered_json::array(), backward = ordered_json::array();
    for (const RunCheckpoint& c : run.checkpoints) {
        nodes.push_back(c.summary.graph.nodes);
        edges.push_back(c.summary.graph.edges);
        forward.push_back(c.summary.graph.forwardDone);
        backward.push_back(c.summary.graph.backwardDone);
    }
    w.key("series");
    writeDom(w, {{"node_count", std::move(nodes)},
                 {"edge_count", std::move(edges)},
                 {"forward_done", std::move(forward)},
                 {"backward_done", std::move(backward)}});
    w.key("optimizer_state");
    w.beginArray();
    for (const BlobSeries& b : r.blobs) {
        ordered_json series = ordered_json::array();
        for (size_t c = 0; c < run.checkpoints.size(); ++c) {
            ordered_json point;
            if (b.at[c]) {
                const BlobSummary& s = run.checkpoints[c].summary.blobs[*b.at[c]];
                point["bytes"] = s.bytes;
                if (s.stats)
                    putStatsFields(DomFields{point}, *s.stats, false);
            }
            series.push_back(std::move(point));
        }
        writeDom(w, {{"name", b.name}, {"series", std::move(series)}});
        w.chunkDone();
    }
    w.endArray();
}

} // namespace

void writeTimeline(JsonStreamWriter& w, const TimelineReport& r) {
    const Run& run = r.run;
    const bool gradient = run.kind == RunKind::Gradient;
    // Everything but the series first: nothing is written before it is known.
    const ordered_json checkpoints = checkpointsJson(run), skipped = skippedJson(run);
    const ordered_json config =
        run.modelConfig ? modelConfigJson(*run.modelConfig) : ordered_json();
    const ordered_json history = trainerHistoryJson(run);
    const TensorRunParts parts = gradient ? TensorRunParts{} : tensorRunParts(r);
    w.beginObject();
    // A run that read nothing has no kind; it reports as an (empty) tensor run.
    w.key("format");
    w.value(gradient ? "gradient" : "tensors");
    w.key("checkpoints");
    writeDom(w, checkpoints);
    w.key("skipped");
    writeDom(w, skipped);
    w.key("side_files");
    writeDom(w, run.sideFiles);
    w.key("warnings");
    writeDom(w, run.warnings);
    w.key("model_config");
    writeDom(w, config);
    w.key("trainer_history");
    writeDom(w, history);
    if (gradient)
        writeGradientRun(w, r);
    else
        writeTensorRun(w, r, parts);
    w.key("cache");
    writeDom(w, {{"hits", run.cacheHits}, {"misses", run.cacheMisses}});
    w.endObject();
}

} // namespace cli
