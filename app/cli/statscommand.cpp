#include "clicommon.h"
#include "clijson.h"
#include "statsjson.h"
#include "textformat.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/common/numberformat.h"
#include "ckptscope/export/csvwriter.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/optimizer/parameterupdate.h"
#include "ckptscope/stats/documentstats.h"
#include "ckptscope/stats/tensorstats.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>

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
    // Why the tensor has no statistics (statisticsNote: complex, quantized
    // values), its row saying so; null when it has them.
    const char* without = nullptr;
};

// A row for a tensor without statistics: its count, and why (the table's
// notes, grouped by reason, are printed under it).
void addRowWithout(const Target& t, uint64_t count, JsonStreamWriter* json, bool csv,
                   const Document& doc, TextTable& table,
                   std::vector<std::pair<std::string, std::string>>& notes) {
    if (json) {
        json->beginObject();
        json->key("name");
        json->value(t.name);
        json->key("count");
        json->value(count);
        for (const char* field : {"finite", "nan", "inf", "pos_inf", "neg_inf", "zeros", "min",
                                  "max", "mean", "std", "l2", "finite_sum", "histogram"}) {
            json->key(field);
            json->null();
        }
        json->key("note");
        json->value(t.without);
        json->endObject();
    } else if (csv) {
        std::cout << csvLine(statsCsvRowWithout(t.name, count));
        std::cerr << doc.path() << ": note: " << printable(t.name) << ": " << t.without << "\n";
    } else {
        table.addRow({t.name, fmt::grouped(count), "-", "-", "-", "-", "-", "-", "-", "-", "-"});
        auto it = std::find_if(notes.begin(), notes.end(),
                               [&](const auto& n) { return n.first == t.without; });
        if (it == notes.end())
            notes.push_back({t.without, printable(t.name)});
        else
            it->second += ", " + printable(t.name);
    }
}

std::vector<Target> targets(const Document& doc, const std::vector<std::string>& names) {
    std::vector<Target> all;
    if (doc.hasTensors()) {
        for (size_t i = 0; i < doc.tensors().size(); ++i)
            all.push_back({doc.tensors()[i].name,
                           [&doc, i](const StatsOptions& options) {
                               return computeTensorStats(doc, i, options);
                           },
                           i, exactInF32(doc.tensors()[i].dtype), statisticsNote(doc, i)});
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

void writeStats(JsonStreamWriter& w, const std::string& name, const StatsResult& r) {
    w.beginObject();
    w.key("name");
    w.value(name);
    putStatsFields(StreamFields{w}, r.stats, true);
    w.key("histogram");
    if (r.histogram.counts.empty())
        w.null();
    else
        writeHistogram(w, r.histogram);
    w.endObject();
}

const CommandSpec kStats = {
    "stats",
    {"FILE"},
    "Per-tensor statistics over the stored values: count, finite, NaN, +-Inf,\n"
    "zeros, min, max, mean, std (population), L2 norm; with --json also a\n"
    "histogram over the finite range. For gradient checkpoints, optimizer-state\n"
    "blobs whose length is a multiple of 4 are read as f32 little-endian. The\n"
    "file's warnings go to stderr and, with --json, into \"warnings\". Complex\n"
    "tensors (C64, C128) have none: each gets its count and a note (--json:\n"
    "null figures and \"note\"; --csv: empty cells).\n"
    "\n"
    "With --optimizer, FILE is a checkpoint with its optimizer state (a Trainer\n"
    "checkpoint folder, its optimizer.pt with the model beside it, a Lightning\n"
    ".ckpt) and each parameter gets the last update the optimizer applied to\n"
    "it, from the state saved after that update. Adam and AdamW: u = lr * m^ /\n"
    "(sqrt(v^) + eps), m^ = exp_avg / (1 - beta1^step), v^ = exp_avg_sq /\n"
    "(1 - beta2^step) (max_exp_avg_sq with amsgrad); SGD with momentum: u = lr *\n"
    "momentum_buffer. Figures: RMS and max |u|, update / weight (RMS(u) /\n"
    "RMS(w)), RMS of exp_avg and of sqrt(exp_avg_sq), and the decoupled weight\n"
    "decay lr * weight_decay * w apart (AdamW; Adam and AdamW of torch before\n"
    "2.6 keep alike parameter groups, so it is given for both). Other\n"
    "optimizers' state gets no figure; a note says why. One pass over weights\n"
    "and moments together.\n",
    {tensorOption("only this tensor (repeatable)"),
     binsOption("histogram bins of --json, 1 to 100000 (default 32)"),
     jsonOption(),
     {"--csv", "",
      "one row per tensor (the --json fields but the histogram),\nRFC 4180, empty for null"},
     {"--optimizer", "",
      "the update each parameter last received, from the\noptimizer state (see above)"}},
    {},
    "FILE [--tensor NAME]... [--json [--bins N] | --csv | --optimizer [--json]]",
    kFileExitStatus,
};

// The name a parameter's row goes by: its weight tensor's, else its own.
std::string rowName(const OptimizerCheckpoint& state, const ParameterState& p) {
    return p.weight ? state.model->tensors()[*p.weight].name : p.parameter;
}

int runOptimizerStats(const ParsedArgs& p) {
    if (p.has("--csv") || p.has("--bins"))
        throw UsageError("--optimizer gives the optimizer's figures, as a table or --json; "
                         "--csv and --bins are for the tensors' statistics");
    const std::string& path = p.operands()[0];
    OptimizerCheckpoint state = openOptimizerCheckpoint(path);
    printWarnings(*state.optimizer, state.optimizer->path());
    if (state.model && state.model != state.optimizer)
        printWarnings(*state.model, state.model->path());
    for (const std::string& w : state.warnings)
        std::cerr << state.optimizer->path() << ": warning: " << w << "\n";
    const std::vector<std::string> wanted = p.values("--tensor");
    if (!wanted.empty()) {
        std::vector<ParameterState> kept;
        for (const std::string& want : wanted) {
            auto it = std::find_if(state.parameters.begin(), state.parameters.end(),
                                   [&](const ParameterState& s) {
                                       return rowName(state, s) == want || s.parameter == want;
                                   });
            if (it == state.parameters.end())
                throw UsageError(path + " has no parameter with optimizer state named '" + want +
                                 "'");
            if (std::none_of(kept.begin(), kept.end(),
                             [&](const ParameterState& s) { return s.parameter == it->parameter; }))
                kept.push_back(*it);
        }
        state.parameters = std::move(kept);
    }
    const std::vector<ParameterUpdate> updates = computeParameterUpdates(state);
    if (p.has("--json")) {
        // Streamed a parameter at a time (an optimizer of 200 000 tensors).
        JsonStreamWriter w(std::cout);
        w.beginObject();
        w.key("model");
        if (state.model)
            w.value(state.model->path());
        else
            w.null();
        w.key("optimizer_file");
        w.value(state.optimizer->path());
        w.key("tensors");
        w.beginArray();
        for (size_t k = 0; k < updates.size(); ++k) {
            writeDom(w, {{"name", rowName(state, state.parameters[k])},
                         {"optimizer", parameterUpdateJson(updates[k])}});
            w.chunkDone();
        }
        w.endArray();
        std::vector<std::string> more; // the model's warnings, then the pairing's
        if (state.model && state.model != state.optimizer)
            for (const auto& warning : state.model->warnings())
                more.push_back(warning.message);
        more.insert(more.end(), state.warnings.begin(), state.warnings.end());
        writeWarnings(w, *state.optimizer, more);
        w.endObject();
        endJsonOutput(w);
        return kOk;
    }
    TextTable table({"name", "rule", "step", "lr", "update rms", "update max", "update/weight",
                     "exp_avg rms", "sqrt(v) rms", "decay rms"},
                    {false, false, true, true, true, true, true, true, true, true});
    // Notes once each, with every parameter they are about.
    std::vector<std::pair<std::string, std::vector<std::string>>> notes;
    for (size_t k = 0; k < updates.size(); ++k) {
        const ParameterUpdate& u = updates[k];
        const std::string name = rowName(state, state.parameters[k]);
        table.addRow({name, updateRuleName(u.rule), fmt::figure(u.step), fmt::figure(u.lr),
                      fmt::figure(u.updateRms), fmt::figure(u.updateMax),
                      fmt::figure(u.updateToWeight), fmt::figure(u.expAvgRms),
                      fmt::figure(u.expAvgSqSqrtRms), fmt::figure(u.decayRms)});
        if (u.note.empty())
            continue;
        auto it = std::find_if(notes.begin(), notes.end(),
                               [&](const auto& n) { return n.first == u.note; });
        if (it == notes.end())
            notes.push_back({u.note, {name}});
        else
            it->second.push_back(name);
    }
    std::cout << "Model      " << (state.model ? printable(state.model->path()) : "none") << "\n"
              << "Optimizer  " << printable(state.optimizer->path()) << "\n\n"
              << table.render();
    for (const auto& [note, names] : notes) {
        std::string who;
        for (const std::string& n : names)
            who += (who.empty() ? "" : ", ") + printable(n);
        std::cout << "\nnote: " << who << ": " << note << "\n";
    }
    return kOk;
}

} // namespace

int runStats(const std::vector<std::string>& args) {
    const auto p = parseCommand(kStats, args);
    if (!p)
        return kOk;
    if (p->has("--optimizer"))
        return runOptimizerStats(*p);
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
    TextTable table(
        {"name", "count", "finite", "nan", "inf", "zeros", "min", "max", "mean", "std", "l2"},
        {false, true, true, true, true, true, true, true, true, true, true});
    const std::vector<Target> chosen = targets(*doc, p->values("--tensor"));
    std::vector<StatsResult> results(chosen.size());
    try {
        if (doc->hasTensors()) { // all at once: small tensors one per core
            std::vector<size_t> indices, rows;
            for (size_t k = 0; k < chosen.size(); ++k) {
                if (chosen[k].without) {
                    results[k].stats.count = doc->tensors()[chosen[k].tensor].dataLen;
                    continue;
                }
                indices.push_back(chosen[k].tensor);
                rows.push_back(k);
            }
            std::vector<StatsResult> computed = computeTensorStats(*doc, indices, options);
            for (size_t k = 0; k < rows.size(); ++k)
                results[rows[k]] = std::move(computed[k]);
        } else {
            results.clear();
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
    // --json is streamed a tensor at a time: the DOM of 50 000 tensors'
    // histograms had taken longer than their statistics, and 190 MB.
    std::optional<JsonStreamWriter> out;
    if (json) {
        out.emplace(std::cout);
        out->beginObject();
        out->key("tensors");
        out->beginArray();
    }
    std::vector<std::string> overflowed; // --json's warnings beyond the document's
    std::vector<std::pair<std::string, std::string>> notes; // the table's: reason, names
    for (size_t k = 0; k < chosen.size(); ++k) {
        const Target& t = chosen[k];
        const StatsResult& r = results[k];
        if (t.without) {
            addRowWithout(t, r.stats.count, out ? &*out : nullptr, csv, *doc, table, notes);
            continue;
        }
        for (const std::string& field : overflowedFields(r.stats, true)) {
            std::cerr << doc->path() << ": warning: " << printable(t.name) << ": " << field << "\n";
            if (json)
                overflowed.push_back(t.name + ": " + field);
        }
        if (json) {
            writeStats(*out, t.name, r);
            out->chunkDone();
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
        out->endArray();
        writeWarnings(*out, *doc, overflowed);
        out->endObject();
        endJsonOutput(*out);
    } else if (!csv) {
        std::cout << table.render();
        for (const auto& [note, names] : notes)
            std::cout << "\nnote: " << names << ": " << note << "\n";
    }
    return kOk;
}

} // namespace cli
