#include "ckptscope/formats/safetensors/safetensorsindex.h"

#include "formats/safetensors/toplevelkeys.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/oxck/metadatacodec.h"

#include <nlohmann/json.hpp>

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
    size_t headerOrder = 0;
};

Entry parseTensor(const std::string& file, const std::string& name, const json& v, size_t order) {
    const std::string where = "header (byte 8): tensor " + quotedName(name) + ": ";
    if (!v.is_object())
        fail(file, where + "expected an object with dtype, shape and data_offsets", 8);
    Entry e;
    e.headerOrder = order;
    e.tensor.name = name;
    e.tensor.headerOffset = 8;
    const auto dtype = v.find("dtype");
    if (dtype == v.end() || !dtype->is_string())
        fail(file, where + "expected \"dtype\" as a string", 8);
    const std::string dtypeText = dtype->get<std::string>();
    const auto parsed = parseDtype(dtypeText);
    if (!parsed) {
        const bool known = std::any_of(std::begin(kKnownUnsupported), std::end(kKnownUnsupported),
                                       [&](const char* n) { return dtypeText == n; });
        fail(file,
             where +
                 (known ? "dtype " + quotedName(dtypeText) + " is not supported"
                        : "unknown dtype " + quotedName(dtypeText)) +
                 "; expected one of BOOL, U8, I8, U16, I16, F16, BF16, U32, I32, F32, F64, U64, "
                 "I64, F8_E4M3, F8_E5M2",
             8);
    }
    e.tensor.dtype = *parsed;
    const auto shape = v.find("shape");
    if (shape == v.end() || !shape->is_array())
        fail(file, where + "expected \"shape\" as an array of non-negative integers", 8);
    uint64_t elements = 1; // [] is a scalar: one element
    bool overflow = false;
    for (const json& d : *shape) {
        if (!d.is_number_unsigned())
            fail(file, where + "shape " + shape->dump() + ": expected non-negative integers", 8);
        const uint64_t n = d.get<uint64_t>();
        e.tensor.shape.push_back(n);
        if (n != 0 && elements > UINT64_MAX / n)
            overflow = true;
        else
            elements *= n;
    }
    if (overflow &&
        std::find(e.tensor.shape.begin(), e.tensor.shape.end(), 0) == e.tensor.shape.end())
        fail(file, where + "shape " + shape->dump() + ": the element count overflows 64 bits", 8);
    if (overflow)
        elements = 0;
    const auto offsets = v.find("data_offsets");
    if (offsets == v.end() || !offsets->is_array() || offsets->size() != 2 ||
        !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
        fail(file, where + "expected \"data_offsets\" as [BEGIN, END], non-negative integers", 8);
    e.begin = (*offsets)[0].get<uint64_t>();
    e.end = (*offsets)[1].get<uint64_t>();
    if (e.end < e.begin)
        fail(file,
             where + "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                 "] end before they begin",
             8);
    const size_t size = dtypeSize(*parsed);
    if (elements > UINT64_MAX / size)
        fail(file, where + "shape " + shape->dump() + ": the byte size overflows 64 bits", 8);
    if (e.end - e.begin != elements * size)
        fail(file,
             where + "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                 "] hold " + std::to_string(e.end - e.begin) + " bytes, but shape " +
                 shape->dump() + " of " + dtypeText + " needs " + std::to_string(elements) + " × " +
                 std::to_string(size) + " = " + std::to_string(elements * size),
             8);
    e.tensor.dataLen = elements;
    e.tensor.elementCount = elements;
    return e;
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
ParsedHeader parseHeader(const std::string& file, const std::string& text) {
    ParsedHeader parsed;
    try {
        parsed.object = json::parse(text);
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
    json::sax_parse(text, &keys); // a parse error: the DOM parse above reported it
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
// before ended, the first at 0 and the last at the end of the file.
void checkTiling(const std::string& file, std::vector<Entry>& entries, uint64_t dataStart,
                 uint64_t dataSize) {
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    uint64_t expected = 0;
    const Entry* previous = nullptr;
    for (const Entry& e : entries) {
        const std::string where = "header (byte 8): tensor " + quotedName(e.tensor.name) + ": ";
        const std::string range =
            "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
        if (e.end > dataSize)
            fail(file,
                 where + range + " run past the end of the data buffer (" +
                     std::to_string(dataSize) + " bytes from byte " + std::to_string(dataStart) +
                     ")",
                 8, CheckpointError::Kind::Truncated);
        if (e.begin != expected)
            fail(file,
                 where + range + (e.begin < expected ? " overlap " : " leave a gap after ") +
                     (previous ? "tensor " + quotedName(previous->tensor.name) +
                                     ", which ends at " + std::to_string(expected)
                               : std::string("the start of the data buffer")) +
                     "; the tensors must tile the data buffer",
                 8);
        expected = e.end;
        previous = &e;
    }
    if (expected != dataSize)
        fail(file,
             "byte " + std::to_string(dataStart + expected) + ": " +
                 std::to_string(dataSize - expected) +
                 " bytes follow the last tensor's data; the tensors must end where the file ends",
             dataStart + expected);
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
    std::string text(size_t(index.headerLength), '\0');
    source.read(8, text.data(), text.size());
    if (!isValidUtf8(text))
        fail(file, "header (byte 8): not UTF-8 text", 8, CheckpointError::Kind::InvalidUtf8);

    const ParsedHeader header = parseHeader(file, text);
    std::vector<Entry> entries;
    entries.reserve(header.order.size());
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
                index.metadata.emplace_back(m.key(), m->get<std::string>());
            }
            continue;
        }
        entries.push_back(parseTensor(file, key, value, entries.size()));
    }
    std::sort(index.metadata.begin(), index.metadata.end());

    checkTiling(file, entries, index.dataStart, source.size() - index.dataStart);
    index.tensors.reserve(entries.size());
    for (Entry& e : entries) {
        e.tensor.dataOffset = index.dataStart + e.begin;
        index.tensors.push_back(std::move(e.tensor));
    }
    return index;
}

} // namespace ckptscope
