#include "ckptscope/formats/safetensors/safetensorsindex.h"

#include "formats/safetensors/toplevelkeys.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/oxck/metadatacodec.h"

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace ckptscope {

namespace {

// A map-backed object (lookups in log n): ordered_json finds each key by a
// linear scan, which made a 200 000-tensor header take minutes. The header's
// own order is recorded as it is parsed (ParsedHeader::order).
using json = nlohmann::json;

// Dtypes the reference knows that Ckptscope does not decode: refused by name.
constexpr const char* kKnownUnsupported[] = {"F4",          "F6_E2M3",     "F6_E3M2", "F8_E8M0",
                                             "F8_E4M3FNUZ", "F8_E5M2FNUZ", "C64"};

uint64_t u64le(const uint8_t* b) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = v << 8 | b[i];
    return v;
}

[[noreturn]] void fail(const std::string& file, const std::string& message,
                       std::optional<uint64_t> offset = std::nullopt,
                       CheckpointError::Kind kind = CheckpointError::Kind::Invalid) {
    throw CheckpointError(kind, file + ": " + message, offset);
}

// "[json.exception.parse_error.101] parse error at line 1, column 16: …" →
// "parse error at line 1, column 16: …".
std::string jsonMessage(const std::exception& e) {
    std::string m = e.what();
    if (!m.empty() && m[0] == '[') {
        const size_t close = m.find("] ");
        if (close != std::string::npos)
            m.erase(0, close + 2);
    }
    return m;
}

struct Entry {
    TensorEntry tensor;
    uint64_t begin = 0, end = 0;
};

// "[1,2]": a shape as nlohmann's dump() writes an array of unsigned integers.
std::string shapeText(const std::vector<uint64_t>& shape) {
    std::string t = "[";
    for (size_t i = 0; i < shape.size(); ++i)
        t += (i ? "," : "") + std::to_string(shape[i]);
    return t + "]";
}

// A tensor's dtype, or the error naming it.
Dtype checkedDtype(const std::string& file, const std::string& name, std::string_view dtypeText) {
    const auto parsed = parseDtype(dtypeText);
    if (parsed)
        return *parsed;
    const bool known = std::any_of(std::begin(kKnownUnsupported), std::end(kKnownUnsupported),
                                   [&](const char* n) { return dtypeText == n; });
    const std::string quoted = quotedName(std::string(dtypeText));
    fail(file,
         "header (byte 8): tensor " + quotedName(name) + ": " +
             (known ? "dtype " + quoted + " is not supported" : "unknown dtype " + quoted) +
             "; expected one of BOOL, U8, I8, U16, I16, F16, BF16, U32, I32, F32, F64, U64, "
             "I64, F8_E4M3, F8_E5M2",
         8);
}

// The checks of one tensor once its dtype is known and its shape read (both
// parsers below end here, so a tensor is judged and worded one way);
// `offsets` is empty when data_offsets is not two counts.
Entry checkedTensor(const std::string& file, std::string name, Dtype dtype,
                    std::string_view dtypeText, std::vector<uint64_t> shape,
                    std::optional<std::pair<uint64_t, uint64_t>> offsets) {
    const auto where = [&] { return "header (byte 8): tensor " + quotedName(name) + ": "; };
    uint64_t elements = 1; // [] is a scalar: one element
    bool overflow = false, zero = false;
    for (const uint64_t n : shape) {
        zero = zero || n == 0;
        if (n != 0 && elements > UINT64_MAX / n)
            overflow = true;
        else
            elements *= n;
    }
    if (overflow && !zero)
        fail(file, where() + "shape " + shapeText(shape) + ": the element count overflows 64 bits",
             8);
    if (overflow)
        elements = 0;
    if (!offsets)
        fail(file, where() + "expected \"data_offsets\" as [BEGIN, END], non-negative integers", 8);
    const auto [begin, end] = *offsets;
    if (end < begin)
        fail(file,
             where() + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                 "] end before they begin",
             8);
    const size_t size = dtypeSize(dtype);
    if (elements > UINT64_MAX / size)
        fail(file, where() + "shape " + shapeText(shape) + ": the byte size overflows 64 bits", 8);
    if (end - begin != elements * size)
        fail(file,
             where() + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                 "] hold " + std::to_string(end - begin) + " bytes, but shape " + shapeText(shape) +
                 " of " + std::string(dtypeText) + " needs " + std::to_string(elements) + " × " +
                 std::to_string(size) + " = " + std::to_string(elements * size),
             8);
    Entry e;
    e.begin = begin;
    e.end = end;
    e.tensor.name = std::move(name);
    e.tensor.headerOffset = 8;
    e.tensor.dtype = dtype;
    e.tensor.shape = std::move(shape);
    e.tensor.dataLen = elements;
    e.tensor.elementCount = elements;
    return e;
}

Entry parseTensor(const std::string& file, const std::string& name, const json& v) {
    const std::string where = "header (byte 8): tensor " + quotedName(name) + ": ";
    if (!v.is_object())
        fail(file, where + "expected an object with dtype, shape and data_offsets", 8);
    const auto dtype = v.find("dtype");
    if (dtype == v.end() || !dtype->is_string())
        fail(file, where + "expected \"dtype\" as a string", 8);
    const std::string& dtypeText = dtype->get_ref<const std::string&>();
    const Dtype parsed = checkedDtype(file, name, dtypeText);
    const auto shape = v.find("shape");
    if (shape == v.end() || !shape->is_array())
        fail(file, where + "expected \"shape\" as an array of non-negative integers", 8);
    std::vector<uint64_t> dims;
    dims.reserve(shape->size());
    for (const json& d : *shape) {
        if (!d.is_number_unsigned()) // -0 too, as Hugging Face's reader (a float to serde_json)
            fail(file, where + "shape " + shape->dump() + ": expected non-negative integers", 8);
        dims.push_back(d.get<uint64_t>());
    }
    const auto offsets = v.find("data_offsets");
    std::optional<std::pair<uint64_t, uint64_t>> range;
    if (offsets != v.end() && offsets->is_array() && offsets->size() == 2 &&
        (*offsets)[0].is_number_unsigned() && (*offsets)[1].is_number_unsigned())
        range.emplace((*offsets)[0].get<uint64_t>(), (*offsets)[1].get<uint64_t>());
    return checkedTensor(file, name, parsed, dtypeText, std::move(dims), range);
}

} // namespace

std::string safetensorsProbeFailure(const ByteSource& source) {
    uint8_t head[9] = {};
    if (source.size() < 8)
        return "the file has " + std::to_string(source.size()) +
               " bytes; a safetensors file begins with an 8-byte header length";
    source.read(0, head, size_t(std::min<uint64_t>(source.size(), 9)));
    const uint64_t n = u64le(head);
    if (n < 2)
        return "byte 0: header length " + std::to_string(n) +
               " is below 2 (the smallest header is {})";
    if (n > kSafetensorsMaxHeader)
        return "byte 0: header length " + std::to_string(n) + " is over the limit of " +
               std::to_string(kSafetensorsMaxHeader) + " bytes";
    if (source.size() < 9)
        return "the file ends after the header length " + std::to_string(n) +
               " at byte 8; expected the header there";
    if (head[8] != '{')
        return "byte 8: expected '{' to open the JSON header";
    return {};
}

bool looksLikeSafetensors(const ByteSource& source) {
    if (source.size() < 9)
        return false;
    uint8_t head[9];
    source.read(0, head, 9);
    const uint64_t n = u64le(head);
    return n >= 2 && n <= kSafetensorsMaxHeader && head[8] == '{';
}

namespace {

struct ParsedHeader {
    json object;
    std::vector<std::string> order; // top-level keys as the file lists them
};

// The header text parsed, refusing a name given twice (a JSON object keeps
// one of two equal keys silently, so the keys are also read in order).
ParsedHeader parseHeader(const std::string& file, std::string_view text) {
    ParsedHeader parsed;
    try {
        parsed.object = json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {
        fail(file, "header (byte 8): not valid JSON: " + jsonMessage(e), 8,
             CheckpointError::Kind::BadMetadata);
    }
    if (!parsed.object.is_object())
        fail(file,
             "header (byte 8): expected a JSON object, found " +
                 std::string(parsed.object.type_name()),
             8, CheckpointError::Kind::BadMetadata);
    parsed.order.reserve(parsed.object.size());
    TopLevelKeys keys([&](const std::string& key) {
        parsed.order.push_back(key);
        return true;
    });
    // A parse error: the DOM parse above reported it.
    json::sax_parse(text.begin(), text.end(), &keys);
    if (parsed.order.size() != parsed.object.size()) {
        // Fewer keys kept than read: find the first one read twice.
        std::unordered_set<std::string_view> seen;
        for (const std::string& key : parsed.order)
            if (!seen.insert(key).second)
                fail(file, "header (byte 8): tensor name " + quotedName(key) + " is given twice",
                     8);
    }
    return parsed;
}

// The data must be tiled: sorted by offset, each tensor starts where the one
// before ended, the first at 0 and the last at the end of the file. Returns
// the entries' positions in offset order (ties in header order); positions
// are sorted rather than the entries, which are large.
std::vector<uint32_t> checkTiling(const std::string& file, const std::vector<Entry>& entries,
                                  uint64_t dataStart, uint64_t dataSize) {
    std::vector<uint32_t> order(entries.size());
    for (uint32_t i = 0; i < order.size(); ++i)
        order[i] = i;
    const auto before = [&](uint32_t a, uint32_t b) {
        const Entry &x = entries[a], &y = entries[b];
        return x.begin != y.begin ? x.begin < y.begin : x.end != y.end ? x.end < y.end : a < b;
    };
    if (!std::is_sorted(order.begin(), order.end(), before))
        std::sort(order.begin(), order.end(), before);
    uint64_t expected = 0;
    const Entry* previous = nullptr;
    for (const uint32_t i : order) {
        const Entry& e = entries[i];
        if (e.end <= dataSize && e.begin == expected) {
            expected = e.end;
            previous = &e;
            continue;
        }
        const std::string where = "header (byte 8): tensor " + quotedName(e.tensor.name) + ": ";
        const std::string range =
            "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
        if (e.end > dataSize)
            fail(file,
                 where + range + " run past the end of the data buffer (" +
                     std::to_string(dataSize) + " bytes from byte " + std::to_string(dataStart) +
                     ")",
                 8, CheckpointError::Kind::Truncated);
        fail(file,
             where + range + (e.begin < expected ? " overlap " : " leave a gap after ") +
                 (previous ? "tensor " + quotedName(previous->tensor.name) + ", which ends at " +
                                 std::to_string(expected)
                           : std::string("the start of the data buffer")) +
                 "; the tensors must tile the data buffer",
             8);
    }
    if (expected != dataSize)
        fail(file,
             "byte " + std::to_string(dataStart + expected) + ": " +
                 std::to_string(dataSize - expected) +
                 " bytes follow the last tensor's data; the tensors must end where the file ends",
             dataStart + expected);
    return order;
}

// What a header holds: its tensors in header order and its metadata.
struct HeaderContent {
    std::vector<Entry> entries;
    std::vector<std::pair<std::string, std::string>> metadata;
};

// Whether a name occurs twice: an open-addressed table of positions, one
// allocation (a node-based set allocates per name, which cost more than
// simdjson's whole parse at 200,000 tensors). Names made to collide (the
// hash is not keyed) cannot make it quadratic: past a long probe the names
// are sorted instead.
bool anyRepeated(const std::vector<std::string_view>& names) {
    size_t capacity = 16;
    while (capacity < 2 * names.size())
        capacity <<= 1;
    constexpr uint32_t kEmpty = UINT32_MAX;
    constexpr size_t kLongProbe = 64;
    std::vector<uint32_t> slots(capacity, kEmpty);
    const std::hash<std::string_view> hash;
    for (uint32_t i = 0; i < names.size(); ++i)
        for (size_t at = hash(names[i]) & (capacity - 1), probe = 0;;
             at = (at + 1) & (capacity - 1), ++probe) {
            if (probe == kLongProbe) {
                std::vector<std::string_view> sorted = names;
                std::sort(sorted.begin(), sorted.end());
                return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
            }
            if (slots[at] == kEmpty) {
                slots[at] = i;
                break;
            }
            if (names[slots[at]] == names[i])
                return true;
        }
    return false;
}

// The header read by simdjson, which validates the whole text (UTF-8
// included) at gigabytes a second, where nlohmann's DOM took most of the
// time to open a model of many tensors (issue 38). `text` has
// simdjson::SIMDJSON_PADDING readable bytes past its end. Only the types a
// well-formed header has are read here; at anything else (a parse error, a
// name or field given twice, a value of another type) this gives up
// (nullopt) and the nlohmann reader below reads the header again, so that
// every type and syntax error is found and worded by one reader. The checks
// of a tensor's values (checkedDtype, checkedTensor) are shared.
std::optional<HeaderContent> readFast(const std::string& file, std::string_view text) {
    namespace dom = simdjson::dom;
    // simdjson reads -0 as the integer 0, where the reference refuses it as
    // a count: any "-0" (in a string too) is left to the reader below.
    if (text.find("-0") != std::string_view::npos)
        return std::nullopt;
    dom::parser parser;
    dom::object top;
    if (parser.parse(text.data(), text.size(), false).get_object().get(top) != simdjson::SUCCESS)
        return std::nullopt;
    // A name given twice: the reader below names it.
    std::vector<std::string_view> names;
    names.reserve(top.size());
    for (const dom::key_value_pair field : top)
        names.push_back(field.key);
    if (anyRepeated(names))
        return std::nullopt;

    HeaderContent content;
    content.entries.reserve(top.size());
    for (const dom::key_value_pair field : top) {
        if (field.key == "__metadata__") {
            dom::object meta;
            if (field.value.get_object().get(meta) != simdjson::SUCCESS)
                return std::nullopt;
            std::unordered_set<std::string_view> metaKeys;
            for (const dom::key_value_pair m : meta) {
                std::string_view value;
                if (!metaKeys.insert(m.key).second ||
                    m.value.get_string().get(value) != simdjson::SUCCESS)
                    return std::nullopt;
                content.metadata.emplace_back(m.key, value);
            }
            continue;
        }
        dom::object tensor;
        if (field.value.get_object().get(tensor) != simdjson::SUCCESS)
            return std::nullopt;
        std::optional<std::string_view> dtype;
        std::optional<dom::array> shape, offsets;
        for (const dom::key_value_pair f : tensor) {
            if (f.key == "dtype") {
                std::string_view t;
                if (dtype || f.value.get_string().get(t) != simdjson::SUCCESS)
                    return std::nullopt;
                dtype = t;
            } else if (f.key == "shape" || f.key == "data_offsets") {
                auto& slot = f.key == "shape" ? shape : offsets;
                dom::array a;
                if (slot || f.value.get_array().get(a) != simdjson::SUCCESS)
                    return std::nullopt;
                slot = a;
            }
        }
        if (!dtype || !shape || !offsets || offsets->size() != 2)
            return std::nullopt;
        // simdjson keeps a non-negative integer that fits as int64 (and -0,
        // excluded above): take counts as u64 either way, anything else to
        // the reader below.
        const auto countOf = [](dom::element e) -> std::optional<uint64_t> {
            uint64_t n = 0;
            if (e.get_uint64().get(n) != simdjson::SUCCESS)
                return std::nullopt;
            return n;
        };
        std::vector<uint64_t> dims;
        dims.reserve(shape->size());
        for (const dom::element d : *shape) {
            const auto n = countOf(d);
            if (!n)
                return std::nullopt;
            dims.push_back(*n);
        }
        const auto begin = countOf(offsets->at(0).value_unsafe());
        const auto end = countOf(offsets->at(1).value_unsafe());
        if (!begin || !end)
            return std::nullopt;
        std::string name(field.key);
        const Dtype parsed = checkedDtype(file, name, *dtype);
        content.entries.push_back(checkedTensor(file, std::move(name), parsed, *dtype,
                                                std::move(dims), std::pair{*begin, *end}));
    }
    return content;
}

// The header read by nlohmann's parser, each type and syntax error found
// and worded (readFast gives up to it).
HeaderContent readChecked(const std::string& file, std::string_view text) {
    if (!isValidUtf8(text))
        fail(file, "header (byte 8): not UTF-8 text", 8, CheckpointError::Kind::InvalidUtf8);
    const ParsedHeader header = parseHeader(file, text);
    HeaderContent content;
    content.entries.reserve(header.order.size());
    for (const std::string& key : header.order) {
        const json& value = header.object.find(key).value();
        if (key == "__metadata__") {
            if (!value.is_object())
                fail(file, "header (byte 8): __metadata__: expected an object of strings", 8,
                     CheckpointError::Kind::BadMetadata);
            for (auto m = value.begin(); m != value.end(); ++m) {
                if (!m->is_string())
                    fail(file,
                         "header (byte 8): __metadata__: the value of " + quotedName(m.key()) +
                             " is " + std::string(m->type_name()) + "; expected a string",
                         8, CheckpointError::Kind::BadMetadata);
                content.metadata.emplace_back(m.key(), m->get<std::string>());
            }
            continue;
        }
        content.entries.push_back(parseTensor(file, key, value));
    }
    return content;
}

} // namespace

SafetensorsIndex readSafetensorsIndex(const ByteSource& source) {
    const std::string& file = source.name();
    if (const std::string why = safetensorsProbeFailure(source); !why.empty())
        fail(file, "not a safetensors file: " + why, 0, CheckpointError::Kind::InvalidMagic);
    SafetensorsIndex index;
    uint8_t head[8];
    source.read(0, head, 8);
    index.headerLength = u64le(head);
    const uint64_t available = source.size() - 8;
    if (index.headerLength > available)
        fail(file,
             "byte 0: header length " + std::to_string(index.headerLength) +
                 " runs past the end of the file (" + std::to_string(available) +
                 " bytes follow the length)",
             0, CheckpointError::Kind::Truncated);
    index.dataStart = 8 + index.headerLength;
    // Zeroed padding past the text for simdjson's vector reads.
    std::string buffer(size_t(index.headerLength) + simdjson::SIMDJSON_PADDING, '\0');
    source.read(8, buffer.data(), size_t(index.headerLength));
    const std::string_view text(buffer.data(), size_t(index.headerLength));

    std::optional<HeaderContent> content = readFast(file, text);
    if (!content)
        content = readChecked(file, text);
    std::vector<Entry>& entries = content->entries;
    index.metadata = std::move(content->metadata);
    std::sort(index.metadata.begin(), index.metadata.end());

    const std::vector<uint32_t> order =
        checkTiling(file, entries, index.dataStart, source.size() - index.dataStart);
    index.tensors.reserve(entries.size());
    for (const uint32_t i : order) {
        Entry& e = entries[i];
        e.tensor.dataOffset = index.dataStart + e.begin;
        index.tensors.push_back(std::move(e.tensor));
    }
    return index;
}

} // namespace ckptscope
