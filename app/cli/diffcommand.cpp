// `ckptscope-cli diff A B`: exit 0 no differences, 1 differences, 2 trouble
// (as diff, cmp and h5diff).
#include "clicommon.h"
#include "clijson.h"
#include "textformat.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/common/pathlabels.h"
#include "ckptscope/diff/gradientdiff.h"
#include "ckptscope/diff/tensordiff.h"

#include <algorithm>
#include <cmath>
#include <iostream>

namespace cli {

using nlohmann::ordered_json;
using namespace ckptscope;

namespace {

enum DiffExit { kNoDifferences = 0, kDifferences = 1, kTrouble = 2 };

struct DiffArgs {
    std::string a, b;
    bool json = false;
    DiffOptions options;
    std::vector<std::string> tensors;
    NameMapOptions names;
};

double tolerance(const std::string& flag, const std::string& v) {
    if (const auto x = parseTolerance(v))
        return *x;
    throw UsageError(flag + " takes a finite number >= 0, not '" + v + "'");
}

OptionSpec toleranceOption(const char* name, const char* value, const char* help) {
    return {name, value, help, false, "", [name](const std::string& v) { tolerance(name, v); }};
}

const CommandSpec kDiff = {
    "diff",
    {"A", "B"},
    "Compares B with A (the reference): two tensor files tensor by tensor (same\n"
    "name, k-th occurrence with k-th), element by element when shape and stored\n"
    "count agree; or two gradient checkpoints (step, loss CID, timestamp, nodes\n"
    "by id - or by op and topological position when fewer than half the ids\n"
    "match -, edges as multisets, optimizer blobs). Elements differ when exactly\n"
    "one is NaN, when one is infinite and the other not the same infinity, or\n"
    "when |b - a| > atol + rtol * |a|; integers compare exactly (b - a in\n"
    "128 bits), F64 in double, complex values as torch.isclose (NaN when a\n"
    "part is; the moduli |b - a| and |a|; the figures and histogram of\n"
    "|b - a|), quantized ones by their stored integers, exactly. Blobs of\n"
    "equal length, a multiple of 4, compare as f32. Text: a summary line (the files by the "
    "shortest parts of\n"
    "their paths that differ), then what differs: tensors with NaN/Inf\n"
    "mismatches first, then by relative L2 change; a dtype column when dtypes\n"
    "differ. Equal values in another dtype are \"dtype_changed\". Each file's\n"
    "warnings go to stderr and, with --json, into its \"a\" or \"b\" object's\n"
    "\"warnings\"; a figure beyond the double range (F64 values near its top)\n"
    "is null in JSON and named in the tensor's \"warnings\" and on stderr.\n"
    "A GGUF file against a Hugging Face model (safetensors, OXCK) pairs llama.cpp's\n"
    "tensor names with the originals (token_embd.weight = model.embed_tokens.weight,\n"
    "blk.N.attn_q.weight = model.layers.N.self_attn.q_proj.weight, …) for the\n"
    "Llama, Mistral, Qwen2 and Qwen3 architectures, and compares a Llama or\n"
    "Mistral q/k tensor with its rows in the other file's order (llama.cpp\n"
    "interleaves them per head); rows name both tensors (JSON: \"name_b\").\n",
    {jsonOption(),
     toleranceOption("--atol", "X",
                     "absolute tolerance (default 0: exact equality,\n-0 == +0, NaN == NaN)"),
     toleranceOption("--rtol", "Y", "relative tolerance (default 0)"),
     tensorOption("only this tensor or optimizer blob, by A's name or, in a pair\nof mapped names, "
                  "B's (repeatable)"),
     binsOption("bins of --json's histogram of B - A, 1 to 100000\n"
                "(default 64: differences are read finer than values)"),
     {"--no-map", "",
      "pair tensors by their own names only (no llama.cpp name map; a GGUF's\n"
      "q/k rows are then compared as stored, in llama.cpp's rotary order,\n"
      "whatever --rename pairs them with)"},
     {"--rename", "REGEX=REPLACEMENT",
      "rewrite B's tensor names before pairing (ECMAScript regex, $1 in the\n"
      "replacement; after the built-in map; repeatable)",
      true, "",
      [](const std::string& v) {
          try {
              checkRename(v);
          } catch (const std::invalid_argument& e) {
              throw UsageError(e.what());
          }
      }},
     {"--strip-prefix", "PREFIX", "pair names without this prefix on either side (\"module.\")"}},
    "diff needs two files, A and B (got {got})",
    {},
    "Exit status (as diff, cmp and h5diff): 0 no differences, 1 anything differs,\n"
    "2 trouble: a file missing or damaged, a tensor file against a gradient\n"
    "checkpoint, a --tensor name in neither file, a usage error.\n",
};

DiffArgs diffArgs(const ParsedArgs& p) {
    DiffArgs d;
    d.a = p.operands()[0];
    d.b = p.operands()[1];
    d.json = p.has("--json");
    if (p.has("--atol"))
        d.options.atol = tolerance("--atol", p.value("--atol"));
    if (p.has("--rtol"))
        d.options.rtol = tolerance("--rtol", p.value("--rtol"));
    // The histogram of B - A is --json's: the text report has none, and
    // computing it would be a second pass over every pair for nothing.
    if (!d.json && p.has("--bins"))
        throw UsageError("--bins sets the histogram of --json; the text report has none");
    d.options.bins = !d.json ? 0 : p.has("--bins") ? parseBins(p.value("--bins")) : 64;
    d.tensors = p.values("--tensor");
    d.names.builtIn = !p.has("--no-map");
    d.names.renames = p.values("--rename");
    d.names.stripPrefix = p.value("--strip-prefix");
    return d;
}

ordered_json sideJson(const Document& doc) {
    return {{"path", doc.path()},
            {"format", doc.formatModule().name},
            {"file_size", doc.fileSize()},
            {"warnings", warningsJson(doc)}};
}

// The element fields of the contract; all null when nothing was compared.
void elementJson(ordered_json& j, const std::optional<ElementDiff>& e) {
    j["count"] = e ? ordered_json(e->count) : ordered_json();
    j["differing"] = e ? ordered_json(e->differing) : ordered_json();
    j["nan_mismatch"] = e ? ordered_json(e->nanMismatch) : ordered_json();
    j["inf_mismatch"] = e ? ordered_json(e->infMismatch) : ordered_json();
    j["max_abs_diff"] = e ? orNull(e->maxAbsDiff) : ordered_json();
    j["mean_abs_diff"] = e ? orNull(e->meanAbsDiff) : ordered_json();
    j["rel_l2"] = e ? orNull(e->relL2) : ordered_json();
    j["cosine"] = e ? orNull(e->cosine) : ordered_json();
    if (e && !e->histogram.counts.empty())
        j["histogram"] = {
            {"lo", e->histogram.lo}, {"hi", e->histogram.hi}, {"counts", e->histogram.counts}};
    else
        j["histogram"] = nullptr;
}

ordered_json tensorDiffJson(const Document& a, const Document& b, const DiffOptions& o,
                            const TensorDiff& d) {
    ordered_json j;
    j["format"] = "tensors";
    j["a"] = sideJson(a);
    j["b"] = sideJson(b);
    j["tolerance"] = {{"atol", o.atol}, {"rtol", o.rtol}};
    ordered_json meta = ordered_json::array();
    for (const MetadataDiffEntry& m : d.metadata) {
        ordered_json e = {{"key", m.key},
                          {"status", diffStatusName(m.status)},
                          {"a", orNull(m.a)},
                          {"b", orNull(m.b)}};
        if (!m.typeA.empty() || !m.typeB.empty()) { // the values' types differ
            e["type_a"] = m.typeA;
            e["type_b"] = m.typeB;
        }
        if (!m.itemA.empty()) { // two arrays of one summary: their first differing item
            e["item_a"] = m.itemA;
            e["item_b"] = m.itemB;
        }
        meta.push_back(std::move(e));
    }
    j["metadata"] = std::move(meta);
    ordered_json tensors = ordered_json::array();
    for (const TensorDiffEntry& t : d.tensors) {
        ordered_json e;
        e["name"] = t.name;
        if (!t.nameB.empty())
            e["name_b"] = t.nameB;
        e["status"] = diffStatusName(t.status);
        if (!t.tiedTo.empty())
            e["tied_to"] = t.tiedTo;
        e["shape_a"] = orNull(t.shapeA);
        e["shape_b"] = orNull(t.shapeB);
        e["dtype_a"] = orNull(t.dtypeA);
        e["dtype_b"] = orNull(t.dtypeB);
        elementJson(e, t.elements);
        if (t.elements)
            if (const auto w = overflowedFigures(*t.elements); !w.empty())
                e["warnings"] = w;
        tensors.push_back(std::move(e));
    }
    j["tensors"] = std::move(tensors);
    const TensorDiffSummary& s = d.summary;
    j["summary"] = {{"same", s.same},
                    {"changed", s.changed},
                    {"added", s.added},
                    {"removed", s.removed},
                    {"shape_changed", s.shapeChanged},
                    {"dtype_changed", s.dtypeChanged},
                    {"tied", s.tied},
                    {"differing_elements", s.differingElements}};
    return j;
}

ordered_json fieldValueJson(const FieldValue& v) {
    if (const auto* n = std::get_if<uint64_t>(&v))
        return *n;
    if (const auto* s = std::get_if<std::string>(&v))
        return *s;
    return nullptr;
}

ordered_json gradientDiffJson(const Document& a, const Document& b, const GradientDiff& d) {
    ordered_json j;
    j["format"] = "gradient";
    j["a"] = sideJson(a);
    j["b"] = sideJson(b);
    ordered_json fields = ordered_json::array();
    for (const FieldDiff& f : d.fields)
        fields.push_back({{"field", f.field},
                          {"status", diffStatusName(f.status)},
                          {"a", fieldValueJson(f.a)},
                          {"b", fieldValueJson(f.b)}});
    j["fields"] = std::move(fields);
    ordered_json nodes = ordered_json::array();
    for (const NodeDiff& n : d.nodes)
        nodes.push_back({{"id", n.id},
                         {"status", diffStatusName(n.status)},
                         {"op_a", orNull(n.opA)},
                         {"op_b", orNull(n.opB)},
                         {"changed", n.changed}});
    j["nodes"] = std::move(nodes);
    auto edges = [](const std::vector<Edge>& list) {
        ordered_json out = ordered_json::array();
        for (const Edge& e : list)
            out.push_back({e.first, e.second});
        return out;
    };
    j["edges"] = {{"added", edges(d.edgesAdded)}, {"removed", edges(d.edgesRemoved)}};
    ordered_json blobs = ordered_json::array();
    for (const BlobDiff& o : d.optimizerState) {
        ordered_json e;
        e["name"] = o.name;
        e["status"] = diffStatusName(o.status);
        e["bytes_a"] = orNull(o.bytesA);
        e["bytes_b"] = orNull(o.bytesB);
        e["differing_bytes"] = orNull(o.differingBytes);
        if (o.f32) {
            ordered_json f;
            elementJson(f, o.f32);
            e["f32"] = std::move(f);
        } else {
            e["f32"] = nullptr;
        }
        blobs.push_back(std::move(e));
    }
    j["optimizer_state"] = std::move(blobs);
    j["node_matching"] = d.structureMatching ? "structure" : "id";
    const GradientDiffSummary& s = d.summary;
    j["summary"] = {{"nodes_same", s.nodesSame},
                    {"nodes_changed", s.nodesChanged},
                    {"nodes_added", s.nodesAdded},
                    {"nodes_removed", s.nodesRemoved},
                    {"edges_added", s.edgesAdded},
                    {"edges_removed", s.edgesRemoved},
                    {"optimizer_changed", s.optimizerChanged}};
    return j;
}

std::string shapeChange(const TensorDiffEntry& t) {
    const std::string a = t.shapeA ? fmt::shape(*t.shapeA) : "-";
    const std::string b = t.shapeB ? fmt::shape(*t.shapeB) : "-";
    return a == b ? a : a + " -> " + b;
}

std::string numberOr(const std::optional<ElementDiff>& e, std::optional<double> ElementDiff::*f) {
    return e && (*e).*f ? fmt::figure(*((*e).*f)) : "-";
}

// "F32", or "F32 -> F16" when the dtypes differ.
std::string dtypeChange(const TensorDiffEntry& t) {
    const std::string a = t.dtypeA.value_or("-"), b = t.dtypeB.value_or("-");
    return a == b ? a : a + " -> " + b;
}

// "NaN 3, Inf 1": the pairs where NaN or an infinity stands against
// anything but itself; "-" without any.
std::string nonFiniteText(const std::optional<ElementDiff>& e) {
    if (!e || (e->nanMismatch == 0 && e->infMismatch == 0))
        return "-";
    std::string out;
    if (e->nanMismatch)
        out = "NaN " + fmt::grouped(e->nanMismatch);
    if (e->infMismatch)
        out += (out.empty() ? "Inf " : ", Inf ") + fmt::grouped(e->infMismatch);
    return out;
}

void printTensorSummary(const std::string& labelA, const std::string& labelB, const TensorDiff& d,
                        size_t metaChanged) {
    const TensorDiffSummary& s = d.summary;
    std::cout << labelA << " -> " << labelB << ": " << s.changed << " changed, ";
    if (s.dtypeChanged > 0)
        std::cout << s.dtypeChanged << " dtype changed, ";
    std::cout << s.added << " added, " << s.removed << " removed, " << s.shapeChanged
              << " shape changed, " << s.same << " same; ";
    if (s.tied > 0) // a tied weight one file stores once: not a difference
        std::cout << s.tied << " tied; ";
    std::cout << fmt::counted(s.differingElements, "element differs", "elements differ") << "; ";
    if (s.nonFiniteMismatch > 0)
        std::cout << fmt::counted(s.nonFiniteMismatch, "tensor", "tensors")
                  << " with NaN/Inf mismatches; ";
    std::cout << metaChanged << " of "
              << fmt::counted(d.metadata.size(), "metadata entry differs",
                              "metadata entries differ")
              << "\n";
}

void printTensorTable(const std::vector<const TensorDiffEntry*>& changed) {
    const bool dtypes = std::any_of(changed.begin(), changed.end(), [](auto* t) {
        return t->dtypeA && t->dtypeB && *t->dtypeA != *t->dtypeB;
    });
    const bool nonFinite = std::any_of(changed.begin(), changed.end(),
                                       [](auto* t) { return nonFiniteMismatches(*t) > 0; });
    const bool mapped =
        std::any_of(changed.begin(), changed.end(), [](auto* t) { return !t->nameB.empty(); });
    std::vector<std::string> header = {"name", "status", "shape"};
    std::vector<bool> right = {false, false, false};
    if (mapped) { // B's own name beside A's
        header.insert(header.begin() + 1, "name in B");
        right.insert(right.begin() + 1, false);
    }
    auto column = [&](const char* name, bool alignRight) {
        header.push_back(name);
        right.push_back(alignRight);
    };
    if (dtypes)
        column("dtype", false);
    if (nonFinite)
        column("nan/inf", false);
    for (const char* name : {"differing", "count", "max|d|", "mean|d|", "rel_l2", "cosine"})
        column(name, true);
    TextTable table(header, right);
    for (const TensorDiffEntry* t : changed) {
        const auto& e = t->elements;
        std::vector<std::string> row = {
            t->name, t->tiedTo.empty() ? diffStatusName(t->status) : "tied to " + t->tiedTo,
            shapeChange(*t)};
        if (mapped)
            row.insert(row.begin() + 1, t->nameB.empty() ? "=" : t->nameB);
        if (dtypes)
            row.push_back(dtypeChange(*t));
        if (nonFinite)
            row.push_back(nonFiniteText(e));
        for (std::string cell :
             {e ? fmt::grouped(e->differing) : "-", e ? fmt::grouped(e->count) : "-",
              numberOr(e, &ElementDiff::maxAbsDiff), numberOr(e, &ElementDiff::meanAbsDiff),
              numberOr(e, &ElementDiff::relL2), numberOr(e, &ElementDiff::cosine)})
            row.push_back(std::move(cell));
        table.addRow(std::move(row));
    }
    std::cout << "\n" << table.render();
    if (nonFinite)
        std::cout << "max|d|, mean|d|, rel_l2 and cosine over finite pairs\n";
}

void printTensorText(const Document& a, const Document& b, const TensorDiff& d) {
    const auto metaChanged =
        size_t(std::count_if(d.metadata.begin(), d.metadata.end(),
                             [](auto& m) { return m.status != DiffStatus::Same; }));
    const auto [labelA, labelB] = distinguishingPaths(a.path(), b.path());
    printTensorSummary(labelA, labelB, d, metaChanged);
    if (!d.nameMap.empty())
        std::cout << "tensor names paired by llama.cpp's map for " << printable(d.nameMap)
                  << " (--no-map to turn off)\n";
    std::vector<const TensorDiffEntry*> changed;
    for (const TensorDiffEntry& t : d.tensors)
        if (t.status != DiffStatus::Same)
            changed.push_back(&t); // a tied one too, saying to which tensor
    // Most changed first: NaN/Inf mismatches, then by rel_l2.
    std::stable_sort(changed.begin(), changed.end(),
                     [](auto* x, auto* y) { return changedMore(*x, *y); });
    if (!changed.empty())
        printTensorTable(changed);
    if (metaChanged > 0) {
        std::cout << "\nmetadata:\n";
        for (const MetadataDiffEntry& m : d.metadata)
            if (m.status != DiffStatus::Same)
                std::cout << "  " << printable(m.key) << " (" << diffStatusName(m.status)
                          << "): " << printable(m.shown(false).value_or("-")) << " -> "
                          << printable(m.shown(true).value_or("-")) << "\n";
    }
}

std::string fieldText(const FieldValue& v) {
    if (const auto* n = std::get_if<uint64_t>(&v))
        return std::to_string(*n);
    if (const auto* s = std::get_if<std::string>(&v))
        return printable(*s);
    return "null";
}

void printGradientText(const Document& a, const Document& b, const GradientDiff& d) {
    const GradientDiffSummary& s = d.summary;
    const auto [labelA, labelB] = distinguishingPaths(a.path(), b.path());
    std::cout << labelA << " -> " << labelB << " (nodes matched by "
              << (d.structureMatching ? "structure" : "id")
              << "): " << fmt::counted(s.nodesChanged, "node", "nodes") << " changed, "
              << s.nodesAdded << " added, " << s.nodesRemoved << " removed, " << s.nodesSame
              << " same; " << fmt::counted(s.edgesAdded, "edge", "edges") << " added, "
              << s.edgesRemoved << " removed; " << s.optimizerChanged << " of "
              << fmt::counted(d.optimizerState.size(), "optimizer blob differs",
                              "optimizer blobs differ")
              << "\n";
    for (const FieldDiff& f : d.fields)
        if (f.status != DiffStatus::Same)
            std::cout << "  " << f.field << ": " << fieldText(f.a) << " -> " << fieldText(f.b)
                      << "\n";
    if (!d.nodes.empty()) {
        TextTable table({"node", "status", "op", "changed"});
        for (const NodeDiff& n : d.nodes) {
            std::string op = n.opA.value_or("-");
            if (n.opB && n.opB != n.opA)
                op = n.opA ? *n.opA + " -> " + *n.opB : *n.opB;
            std::string fields;
            for (const std::string& c : n.changed)
                fields += (fields.empty() ? "" : ", ") + c;
            table.addRow({n.id, diffStatusName(n.status), op, fields});
        }
        std::cout << "\n" << table.render();
    }
    for (const auto& [list, what] :
         {std::pair{&d.edgesAdded, "added"}, {&d.edgesRemoved, "removed"}})
        for (const Edge& e : *list)
            std::cout << "  edge " << what << ": " << printable(e.first) << " -> "
                      << printable(e.second) << "\n";
    TextTable blobs({"optimizer blob", "status", "bytes", "differing bytes", "differing f32",
                     "max|d|", "rel_l2"},
                    {false, false, true, true, true, true, true});
    bool anyBlob = false;
    for (const BlobDiff& o : d.optimizerState) {
        if (o.status == DiffStatus::Same)
            continue;
        anyBlob = true;
        const std::string bytesA = o.bytesA ? fmt::grouped(*o.bytesA) : "-";
        const std::string bytesB = o.bytesB ? fmt::grouped(*o.bytesB) : "-";
        blobs.addRow(
            {o.name, diffStatusName(o.status), bytesA == bytesB ? bytesA : bytesA + " -> " + bytesB,
             o.differingBytes ? fmt::grouped(*o.differingBytes) : "-",
             o.f32 ? fmt::grouped(o.f32->differing) : "-",
             numberOr(o.f32, &ElementDiff::maxAbsDiff), numberOr(o.f32, &ElementDiff::relL2)});
    }
    if (anyBlob)
        std::cout << "\n" << blobs.render();
}

} // namespace

int runDiff(const std::vector<std::string>& args) {
    const auto p = parseCommand(kDiff, args); // UsageError: exit 2 from main
    if (!p)
        return kNoDifferences;
    const DiffArgs d = diffArgs(*p);
    try {
        const auto a = openDocument(d.a);
        const auto b = openDocument(d.b);
        // Any two tensor files compare (formats beyond OXCK included); a
        // gradient checkpoint only with another.
        if (a->hasTensors() != b->hasTensors()) {
            auto kind = [](const Document& doc) {
                return !doc.hasTensors()
                           ? std::string("a ") + doc.formatModule().description
                           : std::string("a tensor file (") + formatName(doc.format()) + ")";
            };
            std::cerr << b->path() << ": error: is " << kind(*b) << " but " << a->path() << " is "
                      << kind(*a)
                      << "; a tensor file and a gradient checkpoint cannot be compared\n";
            return kTrouble;
        }
        bool differs = false;
        if (!a->hasTensors()) {
            const GradientDiff g =
                diffGradients(*a->gradient(), *b->gradient(), d.options, d.tensors);
            differs = g.differs();
            if (d.json)
                printJson(std::cout, gradientDiffJson(*a, *b, g));
            else
                printGradientText(*a, *b, g);
        } else {
            const TensorDiff t = diffTensors(*a, *b, d.options, d.tensors, d.names);
            differs = t.differs();
            for (const TensorDiffEntry& e : t.tensors)
                if (e.elements)
                    for (const std::string& w : overflowedFigures(*e.elements))
                        std::cerr << "ckptscope-cli: warning: " << printable(e.name) << ": " << w
                                  << "\n";
            if (d.json)
                printJson(std::cout, tensorDiffJson(*a, *b, d.options, t));
            else
                printTensorText(*a, *b, t);
        }
        std::cout.flush();
        return differs ? kDifferences : kNoDifferences;
    } catch (const OpenError& e) {
        std::cerr << e.file() << ": error: " << e.detail() << "\n";
    } catch (const UnknownTensorError& e) {
        std::cerr << "ckptscope-cli: error: " << e.what() << " (" << d.a << ", " << d.b << ")\n";
    } catch (const std::exception& e) {
        std::cerr << errorLine(e.what()) << "\n";
    }
    return kTrouble;
}

} // namespace cli
