#include "clicommon.h"
#include "clijson.h"
#include "gradientinfojson.h"
#include "textformat.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/common/numberformat.h"
#include "ckptscope/formats/oxck/metadatacodec.h"
#include "ckptscope/formats/pytorch/numpyarrays.h"
#include "ckptscope/formats/pytorch/picklescan.h"
#include "ckptscope/io/httpsource.h"

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <type_traits>
#include <variant>

namespace cli {

using nlohmann::ordered_json;
using namespace ckptscope;

namespace {

// A sharded model: its shards' names as the index writes them, and the
// index's own metadata (numbers as JSON numbers).
void addShardsJson(ordered_json& j, const Document& doc) {
    j["shards"] = ordered_json::array();
    for (const IndexShard& s : doc.shards())
        j["shards"].push_back(s.name);
    j["index_metadata"] = ordered_json::object();
    for (const MetadataRow& row : doc.indexMetadata()) {
        const ordered_json parsed = ordered_json::parse(row.value, nullptr, false);
        j["index_metadata"][row.key] = row.kind == MetadataKind::Integer && !parsed.is_discarded()
                                           ? parsed
                                           : ordered_json(row.value);
    }
}

// OXCK, safetensors and GGUF: the same fields (safetensors has no
// version/flags; GGUF adds its data section and each key's type).

// Stands for a part of tensorFileJson's result that printTensorFileJson
// writes straight to the output with the core's stream writer (the tensor
// list, a pickle's storages, its object tree): 200 000 ordered_json objects
// cost seconds and gigabytes, and parsing the tree back costs time
// quadratic in a dict's keys (an optimizer's 100 000 states).
constexpr const char* kSpliced = "@@ckptscope:spliced@@";

// A pickle's storages (one row each, with how many tensors view it: never
// their names, so 200 000 tensors on one storage stay small) and imports
// (each unsafe call with its arguments, as `objects` writes them).
void writeStoragesJson(JsonStreamWriter& w, const Document& doc) {
    std::vector<uint64_t> viewers(doc.storages().size(), 0);
    for (const TensorEntry& t : doc.tensors())
        if (t.view != kNoView && doc.views().at(t.view).pieces.empty())
            ++viewers.at(doc.views()[t.view].storage);
    w.beginArray();
    for (size_t i = 0; i < doc.storages().size(); ++i) {
        const TensorStorage& s = doc.storages()[i];
        w.beginObject();
        w.key("key");
        w.value(s.key);
        w.key("dtype");
        w.value(dtypeName(s.dtype));
        w.key("numel");
        w.value(uint64_t(s.bytes / std::max<size_t>(dtypeSize(s.dtype), 1)));
        w.key("nbytes");
        w.value(uint64_t(s.bytes));
        w.key("offset");
        w.value(uint64_t(s.offset));
        w.key("tensors");
        w.value(viewers[i]);
        w.endObject();
    }
    w.endArray();
}

// `names`: the tensors' names, as an object tree's Tensor nodes number them.
void addPickleJson(ordered_json& j, const Document& doc, const std::vector<std::string>& names) {
    j["storages"] = kSpliced; // writeStoragesJson
    ordered_json imports = ordered_json::array();
    CallArguments arguments(doc.objects(), names);
    for (const PickleImport& imp : doc.imports()) {
        ordered_json calls = ordered_json::array();
        for (uint32_t c : imp.calls)
            calls.push_back(callJson(arguments, c));
        imports.push_back({{"name", imp.name},
                           {"count", imp.count},
                           {"risk", importRiskName(imp.risk)},
                           {"calls", std::move(calls)}});
    }
    j["pickle_imports"] = std::move(imports);
    // NumPy arrays are not tensors: listed apart, their values with them
    // (up to kArrayValues elements; past that null: export the file's
    // tensors instead, or read the array with NumPy).
    constexpr uint64_t kArrayValues = 65536;
    ordered_json arrays = ordered_json::array();
    for (const NumpyArray& a : numpyArrays(doc.objects())) {
        ordered_json e = {{"path", a.path},
                          {"dtype", a.dtype},
                          {"shape", a.shape},
                          {"fortran_order", a.fortranOrder},
                          {"nbytes", a.nbytes}};
        if (!a.role.empty())
            e["role"] = a.role;
        const auto v = numpyValues(doc.objects(), a);
        const size_t n = v ? v->integers.size() + v->unsigned_.size() + v->reals.size() : 0;
        e["values"] = !v || n > kArrayValues  ? ordered_json()
                      : !v->integers.empty()  ? ordered_json(v->integers)
                      : !v->unsigned_.empty() ? ordered_json(v->unsigned_)
                                              : ordered_json(v->reals);
        arrays.push_back(std::move(e));
    }
    j["arrays"] = std::move(arrays);
}

void writeNumbers(JsonStreamWriter& w, const char* key, const std::vector<uint64_t>& values) {
    w.key(key);
    w.uintArray(values);
}

// A piece of a tensor made of pieces: its box, its storage and where its
// bytes are — its file, first byte and length (a DCP chunk: its torch.save
// archive's, not read at open).
void writePieceJson(JsonStreamWriter& w, const Document& doc, const TensorPiece& p) {
    w.beginObject();
    writeNumbers(w, "offsets", p.offsets);
    writeNumbers(w, "sizes", p.sizes);
    const TensorStorage& st = doc.storages().at(p.storage);
    w.key("storage_key");
    w.value(st.key);
    w.key("storage_offset");
    w.value(p.elementOffset);
    uint64_t elements = 1;
    for (uint64_t x : p.sizes)
        elements *= x;
    const size_t size = dtypeSize(st.dtype);
    if (!doc.shards().empty()) {
        w.key("file");
        w.value(doc.shards().at(st.shard).name);
    }
    w.key("offset");
    w.value(st.deferred ? st.offset : st.offset + p.elementOffset * size);
    w.key("length");
    w.value(st.deferred ? st.containerBytes : elements * size);
    w.endObject();
}

// A view's storage, offset and strides, or its pieces.
void writeViewJson(JsonStreamWriter& w, const Document& doc, const TensorView& v) {
    if (!v.pieces.empty()) {
        w.key("chunks");
        w.beginArray();
        for (const TensorPiece& p : v.pieces)
            writePieceJson(w, doc, p);
        w.endArray();
        return;
    }
    w.key("storage_key");
    w.value(doc.storages().at(v.storage).key);
    w.key("storage_offset");
    w.value(v.elementOffset);
    w.key("stride");
    if (v.strides.empty()) {
        w.null();
    } else {
        w.beginArray();
        for (int64_t x : v.strides)
            w.value(x);
        w.endArray();
    }
}

// What a pickled tensor is beyond its view.
void writeTraitsJson(JsonStreamWriter& w, const Document& doc, const TensorTraits& traits) {
    if (traits.sameAs != UINT32_MAX) {
        w.key("same_as");
        w.value(doc.tensors().at(traits.sameAs).name);
    }
    if (traits.meta) { // a dtype and a shape, no values
        w.key("meta");
        w.value(true);
    }
    w.key("requires_grad");
    w.value(traits.requiresGrad);
    w.key("is_parameter");
    w.value(traits.isParameter);
    if (!traits.parameter.empty()) {
        w.key("parameter");
        w.value(traits.parameter);
        w.key("parameter_inferred");
        w.value(true);
    }
}

// One tensor's entry of info --json, in nlohmann's dump(2) layout.
void writeTensorJson(JsonStreamWriter& w, const Document& doc, size_t i) {
    const TensorEntry& t = doc.tensors()[i];
    const auto optional = [&](const char* key, const auto& v) {
        w.key(key);
        if (v)
            w.value(*v);
        else
            w.null();
    };
    w.beginObject();
    w.key("name");
    w.value(t.name);
    writeNumbers(w, "shape", t.shape);
    w.key("data_len");
    w.value(t.dataLen);
    optional("element_count", t.elementCount);
    optional("size_bytes", tensorSizeBytes(t));
    w.key("offset");
    w.value(t.dataOffset);
    w.key("dtype");
    w.value(dtypeName(t.dtype));
    if (doc.formatModule().quantized) {
        w.key("bits_per_weight");
        if (const auto bpw = tensorBitsPerWeight(t))
            w.number(*bpw);
        else
            w.null();
    }
    if (doc.isSharded()) {
        w.key("file");
        w.value(doc.shards().at(t.shard).name);
    }
    if (t.view != kNoView)
        writeViewJson(w, doc, doc.views().at(t.view));
    if (!doc.traits().empty())
        writeTraitsJson(w, doc, doc.traits().at(i));
    w.endObject();
}

// Where an s3:// file's credentials, region and endpoint came from; "".
std::string accessOf(const Document& doc) {
    const auto* http = dynamic_cast<const HttpSource*>(&doc.source());
    return http ? http->access() : std::string();
}

std::vector<HeaderField> headerFields(const Document& doc) {
    const FormatModule& m = doc.formatModule();
    return m.headerFields ? m.headerFields(doc.index()) : std::vector<HeaderField>{};
}

// What follows "Format" in `info`: the format's title and its header's
// fields ("GGUF version 3, alignment 32, data from byte 1,088"); for a model
// in several files, how many (the header's fields are the first file's).
std::string formatLine(const Document& doc, const std::vector<HeaderField>& header) {
    const FormatModule& m = doc.formatModule();
    const size_t parts = doc.isSharded() ? doc.shards().size() : 0;
    std::vector<std::string> fields;
    for (const HeaderField& f : header)
        if (!f.line && !f.text.empty())
            fields.push_back(f.label + " " + f.text);
    if (fields.empty()) {
        if (parts)
            return std::string(m.description) + " (" +
                   fmt::counted(parts, m.partWord, m.partWords) + ")";
        return m.title ? m.title : m.description;
    }
    std::string line = std::string(m.title ? m.title : m.description) + " " + fields[0];
    std::string rest;
    for (size_t i = 1; i < fields.size(); ++i)
        rest += (i > 1 ? ", " : "") + fields[i];
    if (parts)
        return line + " " + m.partWord + " model (" + fmt::counted(parts, m.partWord, m.partWords) +
               "; the first's " + rest + ")";
    return rest.empty() ? line : line + ", " + rest;
}

ordered_json tensorFileJson(const Document& doc, const std::vector<std::string>& names) {
    ordered_json j;
    j["format"] = doc.formatModule().name; // "dcp", "deepspeed" for a folder format
    j["file_size"] = doc.fileSize();
    if (const std::string access = accessOf(doc); !access.empty())
        j["access"] = access; // an s3:// file's credentials' source, never a secret
    for (const HeaderField& f : headerFields(doc))
        j[f.key] = std::visit(
            [](const auto& v) {
                if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>)
                    return ordered_json();
                else
                    return ordered_json(v);
            },
            f.value);
    j["metadata"] = ordered_json::object();
    for (const auto& [k, v] : doc.metadata())
        j["metadata"][k] = v;
    if (doc.formatModule().typedMetadata) { // each key's own type ("u32", "arr[str]")
        j["metadata_types"] = ordered_json::object();
        for (const MetadataRow& row : doc.metadataRows())
            j["metadata_types"][row.key] = row.type;
    }
    if (doc.isSharded())
        addShardsJson(j, doc);
    // A shape whose product overflows makes the sums meaningless: null, not
    // a saturated number a script could mistake for a count.
    const bool overflow = std::any_of(doc.tensors().begin(), doc.tensors().end(),
                                      [](const TensorEntry& t) { return !t.elementCount; });
    const bool bytesOverflow = overflow || doc.totalBytes() == UINT64_MAX;
    j["num_params"] = overflow ? ordered_json() : ordered_json(doc.numParams());
    j["total_bytes"] = bytesOverflow ? ordered_json() : ordered_json(doc.totalBytes());
    // Each tensor's entry is written straight into the text
    // (printTensorFileJson): 200 000 ordered_json objects cost seconds.
    j["tensors"] = kSpliced;
    if (!doc.storages().empty())
        j["tensors_sharing_storage"] = doc.tensorsSharingStorage();
    if (doc.formatModule().pickled)
        addPickleJson(j, doc, names);
    if (!doc.objects().empty())
        j["objects"] = kSpliced;
    j["warnings"] = warningsJson(doc);
    return j;
}

void printTensorFileJson(const Document& doc) {
    std::vector<std::string> names; // once, for the imports' calls and the tree
    names.reserve(doc.tensors().size());
    for (const TensorEntry& t : doc.tensors())
        names.push_back(t.name);
    const std::string text =
        tensorFileJson(doc, names).dump(2, ' ', false, ordered_json::error_handler_t::replace);
    const auto tensors = [&](JsonStreamWriter& w) {
        w.beginArray();
        for (size_t i = 0; i < doc.tensors().size(); ++i)
            writeTensorJson(w, doc, i);
        w.endArray();
    };
    const auto objects = [&](JsonStreamWriter& w) { writeObjectJson(w, doc.objects(), names); };
    const auto storages = [&](JsonStreamWriter& w) { writeStoragesJson(w, doc); };
    // In the order tensorFileJson puts them; each written where its marker
    // stands, one level deep.
    const std::pair<const char*, std::function<void(JsonStreamWriter&)>> parts[] = {
        {"tensors", tensors}, {"storages", storages}, {"objects", objects}};
    const std::string value = '"' + std::string(kSpliced) + '"';
    size_t from = 0;
    for (const auto& [key, write] : parts) {
        const std::string marker = std::string("\n  \"") + key + "\": " + value;
        const size_t at = text.find(marker, from);
        if (at == std::string::npos)
            continue;
        const size_t valueAt = at + marker.size() - value.size();
        std::cout.write(text.data() + from, std::streamsize(valueAt - from));
        JsonStreamWriter w(std::cout);
        w.nestIn(1);
        write(w);
        w.flush();
        from = at + marker.size();
    }
    std::cout.write(text.data() + from, std::streamsize(text.size() - from));
    std::cout << '\n';
}

std::map<std::string, size_t> opCounts(const ComputationGraphStore& graph) {
    std::map<std::string, size_t> ops;
    for (const auto& [id, node] : graph.nodes())
        ++ops[node.op];
    return ops;
}

void printTensorFile(const Document& doc) {
    const FormatModule& m = doc.formatModule();
    std::cout << "File        " << doc.path() << " (" << fmt::bytes(doc.fileSize()) << ")\n";
    if (const std::string access = accessOf(doc); !access.empty())
        std::cout << "Access      " << printable(access) << "\n";
    const std::vector<HeaderField> fields = headerFields(doc);
    std::cout << "Format      " << formatLine(doc, fields) << "\n";
    for (const HeaderField& f : fields)
        if (f.line && !f.text.empty())
            std::cout << f.label << std::string(f.label.size() < 12 ? 12 - f.label.size() : 1, ' ')
                      << printable(f.text) << "\n";
    // The sums saturate: a shape whose count overflows has no true total.
    const uint64_t params = doc.numParams(), stored = doc.totalBytes();
    std::cout << "Tensors     " << fmt::grouped(doc.tensors().size()) << "\n"
              << "Parameters  "
              << (params == UINT64_MAX ? "overflows 64 bits" : fmt::grouped(params)) << " ("
              << (stored == UINT64_MAX ? "overflows 64 bits" : fmt::bytes(stored)) << ")\n";
    if (!doc.metadata().empty()) {
        std::cout << "\nMetadata\n";
        const bool typed = m.typedMetadata;
        TextTable table(typed ? std::vector<std::string>{"key", "type", "value"}
                              : std::vector<std::string>{"key", "value"});
        for (const MetadataRow& row : doc.metadataRows())
            table.addRow(typed ? std::vector<std::string>{row.key, row.type, row.value}
                               : std::vector<std::string>{row.key, row.value});
        std::cout << table.render("  ");
    }
    if (!doc.indexMetadata().empty()) {
        std::cout << "\nIndex metadata\n";
        TextTable table({"key", "value"});
        for (const MetadataRow& row : doc.indexMetadata())
            table.addRow({row.key, row.value});
        std::cout << table.render("  ");
    }
    if (!doc.tensors().empty()) {
        std::cout << "\nTensors\n";
        std::vector<std::string> header = {"#",      "name", "shape", "elements",
                                           "stored", "size", "offset"};
        std::vector<bool> right = {true, false, false, true, true, true, true};
        if (!m.f32Only) {
            header.insert(header.begin() + 2, "dtype");
            right.insert(right.begin() + 2, false);
        }
        if (m.quantized) {
            header.push_back("bpw");
            right.push_back(true);
        }
        if (doc.isSharded()) { // the offset is within this file
            header.push_back("file");
            right.push_back(false);
        }
        TextTable table(header, right);
        size_t i = 0;
        for (const TensorEntry& t : doc.tensors()) {
            const bool known = t.elementCount.has_value();
            const auto bytes = tensorSizeBytes(t);
            std::vector<std::string> row = {
                std::to_string(i++),       t.name,
                fmt::shape(t.shape),       known ? fmt::grouped(*t.elementCount) : "overflow",
                fmt::grouped(t.dataLen),   bytes ? fmt::bytes(*bytes) : std::string(fmt::kMissing),
                fmt::grouped(t.dataOffset)};
            if (!m.f32Only)
                row.insert(row.begin() + 2, dtypeName(t.dtype));
            if (m.quantized) {
                const auto bpw = tensorBitsPerWeight(t);
                row.push_back(bpw ? fmt::display(*bpw) : std::string(fmt::kMissing));
            }
            if (doc.isSharded())
                row.push_back(doc.shards().at(t.shard).name);
            table.addRow(std::move(row));
        }
        std::cout << table.render("  ");
    }
}

void printGradient(const Document& doc) {
    const GradientCheckpoint& g = *doc.gradient();
    const ComputationNode* loss = g.lossNode();
    std::cout << "File        " << doc.path() << " (" << fmt::bytes(doc.fileSize()) << ")\n"
              << "Format      gradient checkpoint (JSON)\n"
              << "Step        " << g.step << "\n"
              << "Timestamp   " << g.timestamp << "\n"
              << "Loss CID    " << printable(g.lossCid.value_or("(none)")) << "\n"
              << "Loss node   " << (loss ? printable(loss->id + " (" + loss->op + ")") : "(none)")
              << "\n"
              << "Graph       " << fmt::counted(g.graph.nodeCount(), "node", "nodes") << ", "
              << fmt::counted(g.graph.edgeCount(), "edge", "edges") << ", "
              << doc.graphSplit().cycle.size() << " on cycles\n";
    std::cout << "\nOps\n";
    TextTable ops({"op", "nodes"}, {false, true});
    for (const auto& [op, n] : opCounts(g.graph))
        ops.addRow({op, fmt::grouped(n)});
    std::cout << ops.render("  ");
    if (!g.optimizerState.empty()) {
        std::cout << "\nOptimizer state\n";
        TextTable blobs({"name", "bytes"}, {false, true});
        for (const auto& [name, bytes] : g.optimizerState)
            blobs.addRow({name, fmt::bytes(bytes.size())});
        std::cout << blobs.render("  ");
    }
}

const CommandSpec kInfo = {
    "info",
    {"FILE"},
    "Header, metadata and tensors of an OXCK, safetensors or GGUF file (with\n"
    "each tensor's dtype; GGUF: each key's type and each tensor's bits per\n"
    "weight), or the graph summary of a gradient checkpoint, and every\n"
    "warning. The format is detected from the content, not the file name.\n",
    {jsonOption()},
    {},
    {},
    kFileExitStatus,
};

} // namespace

int runInfo(const std::vector<std::string>& args) {
    const auto p = parseCommand(kInfo, args);
    if (!p)
        return kOk;
    const bool json = p->has("--json");
    const auto doc = openDocument(p->operands()[0]);
    if (json && !doc->hasTensors()) {
        const GradientInfo info{*doc, doc->graphSplit(), opCounts(doc->gradient()->graph)};
        std::string text;
        writeGradientInfoJson(info, text);
        text += '\n';
        std::cout.write(text.data(), std::streamsize(text.size()));
    } else if (json) {
        printTensorFileJson(*doc);
    } else if (doc->hasTensors()) {
        printTensorFile(*doc);
    } else {
        printGradient(*doc);
    }
    keepUntilExit(doc);
    return kOk;
}

} // namespace cli
