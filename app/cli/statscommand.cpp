#include "clicommon.h"
#include "clijson.h"
#include "statsjson.h"
#include "textformat.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/export/csvwriter.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/stats/documentstats.h"
#include "ckptscope/stats/tensorstats.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <iostream>

namespace cli {

using nlohmann::ordered_json;
using namespace ckptscope;

namespace {

// One thing to summarise: a tensor of an OXCK file, or an optimizer blob of
// a gradient checkpoint read as f32.
struct Target {
    std::string name;
    std::function<StatsResult(const StatsOptions&)> compute;
    size_t tensor = 0;     // the tensor's index, in a file of tensors
    bool f32Values = true; // every value a float32 (extremeText)
};

std::vector<Target> targets(const Document& doc, const std::vector<std::string>& names) {
    std::vector<Target> all;
    if (doc.hasTensors()) {
        for (size_t i = 0; i < doc.tensors().size(); ++i)
            all.push_back({doc.tensors()[i].name,
                           [&doc, i](const StatsOptions& options) {
                               return computeTensorStats(doc, i, options);
                           },
                           i, exactInF32(doc.tensors()[i].dtype)});
    } else {
        for (const auto& [name, bytes] : doc.gradient()->optimizerState) {
            if (bytes.size() % 4 != 0)
                continue;
            const uint8_t* data = bytes.data();
            const uint64_t count = bytes.size() / 4;
            all.push_back({name, [data, count](const StatsOptions& options) {
                               return computeStats(
                                   count,
                                   [data](uint64_t first, uint64_t n, float* out) {
                                       std::memcpy(out, data + first * 4, size_t(n) * 4);
                                   },
                                   options);
                           }});
        }
    }
    if (names.empty())
        return all;
    std::vector<Target> chosen;
    for (const std::string& want : names) {
        if (std::any_of(chosen.begin(), chosen.end(),
                        [&](const Target& t) { return t.name == want; }))
            continue; // named twice: one row
        auto it =
            std::find_if(all.begin(), all.end(), [&](const Target& t) { return t.name == want; });
        if (it == all.end())
            throw UsageError(doc.path() + " has no tensor named '" + want + "'");
        chosen.push_back(*it);
    }
    return chosen;
}

ordered_json statsJson(const std::string& name, const StatsResult& r) {
    ordered_json j;
    j["name"] = name;
    putStatsFields(j, r.stats, true);
    if (r.histogram.counts.empty())
        j["histogram"] = nullptr;
    else
        j["histogram"] = {
            {"lo", r.histogram.lo}, {"hi", r.histogram.hi}, {"counts", r.histogram.counts}};
    return j;
}

const CommandSpec kStats = {
    "stats",
    {"FILE"},
    "Per-tensor statistics over the stored values: count, finite, NaN, +-Inf,\n"
    "zeros, min, max, mean, std (population), L2 norm; with --json also a\n"
    "histogram over the finite range. For gradient checkpoints, optimizer-state\n"
    "blobs whose length is a multiple of 4 are read as f32 little-endian. The\n"
    "file's warnings go to stderr and, with --json, into \"warnings\".\n",
    {tensorOption("only this tensor (repeatable)"),
     binsOption("histogram bins of --json, 1 to 100000 (default 32)"),
     jsonOption(),
     {"--csv", "",
      "one row per tensor (the --json fields but the histogram),\nRFC 4180, empty for null"}},
    {},
    "FILE [--tensor NAME]... [--json [--bins N] | --csv]",
    kFileExitStatus,
};

} // namespace

int runStats(const std::vector<std::string>& args) {
    const auto p = parseCommand(kStats, args);
    if (!p)
        return kOk;
    const bool json = p->has("--json"), csv = p->has("--csv");
    if (json && csv)
        throw UsageError("--json and --csv exclude each other");
    // Only --json prints a histogram, and only what is printed is computed:
    // for a quantized file the histogram is most of the time (a second pass).
    if (!json && p->has("--bins"))
        throw UsageError("--bins sets the histogram of --json; the table and --csv have none");
    const auto doc = openDocument(p->operands()[0]);
    StatsOptions options;
    options.bins = !json ? 0 : p->has("--bins") ? parseBins(p->value("--bins")) : 32;
    ordered_json list = ordered_json::array();
    TextTable table(
        {"name", "count", "finite", "nan", "inf", "zeros", "min", "max", "mean", "std", "l2"},
        {false, true, true, true, true, true, true, true, true, true, true});
    const std::vector<Target> chosen = targets(*doc, p->values("--tensor"));
    std::vector<StatsResult> results;
    try {
        if (doc->hasTensors()) { // all at once: small tensors one per core
            std::vector<size_t> indices;
            for (const Target& t : chosen)
                indices.push_back(t.tensor);
            results = computeTensorStats(*doc, indices, options);
        } else {
            for (const Target& t : chosen)
                results.push_back(t.compute(options));
        }
    } catch (const SourceChangedError& e) {
        throw OpenError(doc->path(), e.what());
    } catch (const CheckpointError& e) {
        throw OpenError(doc->path(), e.what());
    }
    // The header only once every row is known: a failed read (a Q8_1 tensor)
    // leaves no half-written CSV on stdout.
    if (csv)
        std::cout << csvLine(statsCsvHeader());
    ordered_json warnings = json ? warningsJson(*doc) : ordered_json();
    for (size_t k = 0; k < chosen.size(); ++k) {
        const Target& t = chosen[k];
        const StatsResult& r = results[k];
        for (const std::string& field : overflowedFields(r.stats, true)) {
            std::cerr << doc->path() << ": warning: " << printable(t.name) << ": " << field << "\n";
            if (json)
                warnings.push_back(t.name + ": " + field);
        }
        if (json) {
            list.push_back(statsJson(t.name, r));
            continue;
        }
        if (csv) {
            std::cout << csvLine(statsCsvRow(t.name, r));
            continue;
        }
        const TensorStats& s = r.stats;
        table.addRow({t.name, fmt::grouped(s.count), fmt::grouped(s.finite), fmt::grouped(s.nan),
                      fmt::grouped(s.posInf + s.negInf), fmt::grouped(s.zeros),
                      extremeText(s, false, t.f32Values), extremeText(s, true, t.f32Values),
                      fmt::figure(s.mean), fmt::figure(s.std), fmt::figure(s.l2)});
    }
    if (json) {
        ordered_json out;
        out["tensors"] = std::move(list);
        out["warnings"] = std::move(warnings);
        printJson(std::cout, out);
    } else if (!csv) {
        std::cout << table.render();
    }
    return kOk;
}

} // namespace cli
