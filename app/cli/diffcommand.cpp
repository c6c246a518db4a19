// `ckptscope-cli diff A B`: exit 0 no differences, 1 differences, 2 trouble
// (as diff, cmp and h5diff).
#include "clicommon.h"
#include "clijson.h"
#include "statsjson.h"
#include "textformat.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/common/numberformat.h"
#include "ckptscope/common/pathlabels.h"
#include "ckptscope/diff/gradientdiff.h"
#include "ckptscope/diff/tensordiff.h"

#include <algorithm>
#include <cmath>
#include <iostream>

namespace cli {

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

void writeSide(JsonStreamWriter& w, const char* key, const Document& doc) {
    w.key(key);
    w.beginObject();
    w.key("path");
    w.value(doc.path());
    w.key("format");
    w.value(doc.formatModule().name);
    w.key("file_size");
    w.value(uint64_t(doc.fileSize()));
    writeWarnings(w, doc);
    w.endObject();
}

// {"name": count, ...}: a comparison's summary.
void writeCounts(JsonStreamWriter& w, const char* key,
                 std::initializer_list<std::pair<const char*, uint64_t>> counts) {
    w.key(key);
    w.beginObject();
    for (const auto& [name, n] : counts) {
        w.key(name);
        w.value(n);
    }
    w.endObject();
}

void writeStringOrNull(JsonStreamWriter& w, const char* key, const std::optional<std::string>& v) {
    w.key(key);
    w.valueOrNull(v);
}

// The element fields of the contract; all null when nothing was compared.
void writeElements(JsonStreamWriter& w, const std::optional<ElementDiff>& e) {
    for (const auto& [key, field] : {std::pair{"count", &ElementDiff::count},
                                     {"differing", &ElementDiff::differing},
                                     {"nan_mismatch", &ElementDiff::nanMismatch},
                                     {"inf_mismatch", &ElementDiff::infMismatch}}) {
        w.key(key);
        if (e)
            w.value((*e).*field);
        else
            w.null();
    }
    const StreamFields fields{w};
    for (const auto& [key, field] : {std::pair{"max_abs_diff", &ElementDiff::maxAbsDiff},
                                     {"mean_abs_diff", &ElementDiff::meanAbsDiff},
                                     {"rel_l2", &ElementDiff::relL2},
                                     {"cosine", &ElementDiff::cosine}})
        fields.numberOrNull(key, e ? (*e).*field : std::nullopt);
    w.key("histogram");
    if (e && !e->histogram.counts.empty())
        writeHistogram(w, e->histogram);
    else
        w.null();
}

// Streamed, a tensor at a time: the DOM of 50 000 tensors' comparisons
// took as long as comparing them, and 300 MB.
void writeTensorDiff(JsonStreamWriter& w, const Document& a, const Document& b,
                     const DiffOptions& o, const TensorDiff& d) {
    w.beginObject();
    w.key("format");
    w.value("tensors");
    writeSide(w, "a", a);
    writeSide(w, "b", b);
    w.key("tolerance");
    w.beginObject();
    w.key("atol");
    w.dumpNumber(o.atol);
    w.key("rtol");
    w.dumpNumber(o.rtol);
    w.endObject();
    w.key("metadata");
    w.beginArray();
    for (const MetadataDiffEntry& m : d.metadata) {
        w.beginObject();
        w.key("key");
        w.value(m.key);
        w.key("status");
        w.value(diffStatusName(m.status));
        writeStringOrNull(w, "a", m.a);
        writeStringOrNull(w, "b", m.b);
        if (!m.typeA.empty() || !m.typeB.empty()) { // the values' types differ
            w.key("type_a");
            w.value(m.typeA);
            w.key("type_b");
            w.value(m.typeB);
        }
        if (!m.itemA.empty()) { // two arrays of one summary: their first differing item
            w.key("item_a");
            w.value(m.itemA);
            w.key("item_b");
            w.value(m.itemB);
        }
        w.endObject();
        w.chunkDone();
    }
    w.endArray();
    w.key("tensors");
    w.beginArray();
    for (const TensorDiffEntry& t : d.tensors) {
        w.beginObject();
        w.key("name");
        w.value(t.name);
        if (!t.nameB.empty()) {
            w.key("name_b");
            w.value(t.nameB);
        }
        w.key("status");
        w.value(diffStatusName(t.status));
        if (!t.tiedTo.empty()) {
            w.key("tied_to");
            w.value(t.tiedTo);
        }
        for (const auto& [key, shape] : {std::pair{"shape_a", &t.shapeA}, {"shape_b", &t.shapeB}}) {
            w.key(key);
            if (*shape)
                w.uintArray(**shape);
            else
                w.null();
        }
        writeStringOrNull(w, "dtype_a", t.dtypeA);
        writeStringOrNull(w, "dtype_b", t.dtypeB);
        writeElements(w, t.elements);
        if (t.elements)
            if (const auto warnings = overflowedFigures(*t.elements); !warnings.empty()) {
                w.key("warnings");
                w.stringArray(warnings);
            }
        w.endObject();
        w.chunkDone();
    }
    w.endArray();
    const TensorDiffSummary& s = d.summary;
    writeCounts(w, "summary",
                {{"same", s.same},
                 {"changed", s.changed},
                 {"added", s.added},
                 {"removed", s.removed},
                 {"shape_changed", s.shapeChanged},
                 {"dtype_changed", s.dtypeChanged},
                 {"tied", s.tied},
                 {"differing_elements", s.differingElements}});
    w.endObject();
}

void writeFieldValue(JsonStreamWriter& w, const char* key, const FieldValue& v) {
    w.key(key);
    if (const auto* n = std::get_if<uint64_t>(&v))
        w.value(*n);
    else if (const auto* text = std::get_if<std::string>(&v))
        w.value(*text);
    else
        w.null();
}

void writeEdges(JsonStreamWriter& w, const char* key, const std::vector<Edge>& edges) {
    w.key(key);
    w.beginArray();
    for (const Edge& e : edges) {
        w.beginArray();
        w.value(e.first);
        w.value(e.second);
        w.endArray();
        w.chunkDone();
    }
    w.endArray();
}

// Streamed as the tensors' comparison is (a graph of 100 000 nodes).
void writeGradientDiff(JsonStreamWriter& w, const Document& a, const Document& b,
                       const GradientDiff& d) {
    w.beginObject();
    w.key("format");
    w.value("gradient");
    writeSide(w, "a", a);
    writeSide(w, "b", b);
    w.key("fields");
    w.beginArray();
    for (const FieldDiff& f : d.fields) {
        w.beginObject();
        w.key("field");
        w.value(f.field);
        w.key("status");
        w.value(diffStatusName(f.status));
        writeFieldValue(w, "a", f.a);
        writeFieldValue(w, "b", f.b);
        w.endObject();
        w.chunkDone();
    }
    w.endArray();
    w.key("nodes");
    w.beginArray();
    for (const NodeDiff& n : d.nodes) {
        w.beginObject();
        w.key("id");
        w.value(n.id);
        w.key("status");
        w.value(diffStatusName(n.status));
        writeStringOrNull(w, "op_a", n.opA);
        writeStringOrNull(w, "op_b", n.opB);
        w.key("changed");
        w.stringArray(n.changed);
        w.endObject();
        w.chunkDone();
    }
    w.endArray();
    w.key("edges");
    w.beginObject();
    writeEdges(w, "added", d.edgesAdded);
    writeEdges(w, "removed", d.edgesRemoved);
    w.endObject();
    w.key("optimizer_state");
    w.beginArray();
    for (const BlobDiff& o : d.optimizerState) {
        w.beginObject();
        w.key("name");
        w.value(o.name);
        w.key("status");
        w.value(diffStatusName(o.status));
        for (const auto& [key, field] : {std::pair{"bytes_a", &o.bytesA},
                                         {"bytes_b", &o.bytesB},
                                         {"differing_bytes", &o.differingBytes}}) {
            w.key(key);
            w.valueOrNull(*field);
        }
        w.key("f32");
        if (o.f32) {
            w.beginObject();
            writeElements(w, o.f32);
            w.endObject();
        } else {
            w.null();
        }
        w.endObject();
        w.chunkDone();
    }
    w.endArray();
    w.key("node_matching");
    w.value(d.structureMatching ? "structure" : "id");
    const GradientDiffSummary& s = d.summary;
    writeCounts(w, "summary",
                {{"nodes_same", s.nodesSame},
                 {"nodes_changed", s.nodesChanged},
                 {"nodes_added", s.nodesAdded},
                 {"nodes_removed", s.nodesRemoved},
                 {"edges_added", s.edgesAdded},
                 {"edges_removed", s.edgesRemoved},
                 {"optimizer_changed", s.optimizerChanged}});
    w.endObject();
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
            if (d.json) {
                JsonStreamWriter w(std::cout);
                writeGradientDiff(w, *a, *b, g);
                endJsonOutput(w);
            } else
                printGradientText(*a, *b, g);
        } else {
            const TensorDiff t = diffTensors(*a, *b, d.options, d.tensors, d.names);
            differs = t.differs();
            for (const TensorDiffEntry& e : t.tensors)
                if (e.elements)
                    for (const std::string& w : overflowedFigures(*e.elements))
                        std::cerr << "ckptscope-cli: warning: " << printable(e.name) << ": " << w
                                  << "\n";
            if (d.json) {
                JsonStreamWriter w(std::cout);
                writeTensorDiff(w, *a, *b, d.options, t);
                endJsonOutput(w);
            } else
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
