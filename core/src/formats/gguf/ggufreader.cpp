#include "ckptscope/formats/gguf/ggufreader.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/bytecursor.h"
#include "formats/gguf/ggmltype.h"
#include "formats/magicbytes.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <iterator>
#include <optional>
#include <string_view>
#include <unordered_set>

namespace ckptscope::gguf {

namespace {

using Kind = CheckpointError::Kind;

// ggml's limits (gguf.cpp): longer strings and arrays are refused, not read.
constexpr uint64_t kMaxStringLength = uint64_t(1) << 30;
constexpr uint64_t kMaxArrayItems = uint64_t(1) << 30;
constexpr uint32_t kMaxDims = 4;      // GGML_MAX_DIMS
constexpr size_t kMaxNameLength = 64; // GGML_MAX_NAME, with its NUL
// ggml refuses arrays of arrays; files written by other tools nest them, so
// we read them, but only this deep (each level is a recursion).
constexpr int kMaxArrayDepth = 8;
constexpr uint32_t kDefaultAlignment = 32;

// Smallest encodings, to check a count against the bytes left before reading
// the items: a key/value is a string length, a type and a one-byte value; a
// tensor info a name length, n_dims, a type and an offset.
constexpr uint64_t kMinKeyValueBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;
// Counts fit the bytes left, but a row costs more memory than its bytes:
// reserve at most this many ahead; beyond, the vectors grow as rows are read.
constexpr uint64_t kMaxReserve = 1 << 16;

[[noreturn]] void fail(const ByteSource& source, uint64_t offset, const std::string& message,
                       Kind kind = Kind::Invalid) {
    throw CheckpointError(kind, source.name() + ": byte " + std::to_string(offset) + ": " + message,
                          offset);
}

// Bytes of one value of a fixed-size type; 0 for str/arr and unknown codes.
uint64_t scalarBytes(uint32_t type) {
    switch (ValueType(type)) {
    case ValueType::U8:
    case ValueType::I8:
    case ValueType::Bool:
        return 1;
    case ValueType::U16:
    case ValueType::I16:
        return 2;
    case ValueType::U32:
    case ValueType::I32:
    case ValueType::F32:
        return 4;
    case ValueType::U64:
    case ValueType::I64:
    case ValueType::F64:
        return 8;
    case ValueType::Str:
    case ValueType::Array:
        return 0;
    }
    return 0;
}

bool knownType(uint32_t type) {
    return type <= uint32_t(ValueType::F64);
}

bool isIntegerType(uint32_t type) {
    switch (ValueType(type)) {
    case ValueType::U8:
    case ValueType::I8:
    case ValueType::U16:
    case ValueType::I16:
    case ValueType::U32:
    case ValueType::I32:
    case ValueType::U64:
    case ValueType::I64:
        return true;
    default:
        return false;
    }
}

template <typename T> T load(const std::string& bytes) {
    T v;
    std::memcpy(&v, bytes.data(), sizeof v);
    return v;
}

// A fixed-size value's bytes as text: decimal integers, the shortest f32/f64
// text that reads back exactly, true/false.
std::string scalarText(uint32_t type, const std::string& b) {
    switch (ValueType(type)) {
    case ValueType::U8:
        return std::to_string(load<uint8_t>(b));
    case ValueType::I8:
        return std::to_string(load<int8_t>(b));
    case ValueType::U16:
        return std::to_string(load<uint16_t>(b));
    case ValueType::I16:
        return std::to_string(load<int16_t>(b));
    case ValueType::U32:
        return std::to_string(load<uint32_t>(b));
    case ValueType::I32:
        return std::to_string(load<int32_t>(b));
    case ValueType::U64:
        return std::to_string(load<uint64_t>(b));
    case ValueType::I64:
        return std::to_string(load<int64_t>(b));
    case ValueType::F32:
        return fmt::exact(load<float>(b));
    case ValueType::F64:
        return fmt::exact(load<double>(b));
    case ValueType::Bool:
        return load<uint8_t>(b) ? "true" : "false";
    case ValueType::Str:
    case ValueType::Array:
        break;
    }
    return {};
}

std::string arraySummary(uint64_t count, uint32_t itemType) {
    return "[" + std::to_string(count) + " × " + valueTypeName(itemType) + "]";
}

// Sequential reads with GGUF's messages: every length checked against the
// bytes left before anything is allocated or skipped.
class Reader {
public:
    explicit Reader(const ByteSource& source, uint64_t offset = 0)
        : m_source(source), m_cursor(source, offset) {}

    const ByteSource& source() const { return m_source; }
    uint64_t offset() const { return m_cursor.offset(); }
    uint64_t remaining() const { return m_cursor.remaining(); }

    void need(uint64_t n, const std::string& what) const {
        if (n > remaining())
            fail(m_source, offset(),
                 "truncated: " + what + " needs " + std::to_string(n) + " bytes, " +
                     std::to_string(remaining()) + " left in the file",
                 Kind::Truncated);
    }
    uint32_t u32(const std::string& what) {
        need(4, what);
        return m_cursor.u32("");
    }
    uint64_t u64(const std::string& what) {
        need(8, what);
        return m_cursor.u64("");
    }
    std::string bytes(uint64_t n, const std::string& what) {
        need(n, what);
        return m_cursor.bytes(n, "");
    }
    void skip(uint64_t n, const std::string& what) {
        need(n, what);
        m_cursor.skip(n, "");
    }
    // A u64 length and that many bytes; the length is checked against
    // ggml's limit and the file before the string is made.
    uint64_t stringLength(const std::string& what) {
        const uint64_t at = offset();
        const uint64_t n = u64(what + "'s length");
        if (n > kMaxStringLength || n > remaining())
            fail(m_source, at,
                 what + ": string length " + std::to_string(n) +
                     (n > remaining() ? " runs past the end of the file (" +
                                            std::to_string(remaining()) + " bytes left)"
                                      : " is over ggml's limit of 2^30 bytes"),
                 n > remaining() ? Kind::Truncated : Kind::Invalid);
        return n;
    }
    std::string string(const std::string& what) { return bytes(stringLength(what), what); }

    // An array's item type and count, checked: a known type, not nested too
    // deep, and at least count × (smallest item) bytes left.
    MetadataArray arrayHeader(const std::string& what, int depth) {
        const uint64_t at = offset();
        MetadataArray a;
        a.itemType = u32(what + ": the array's item type");
        if (!knownType(a.itemType))
            fail(m_source, at,
                 what + ": unknown array item type " + std::to_string(a.itemType) +
                     "; expected 0 to 12");
        if (a.itemType == uint32_t(ValueType::Array) && depth + 1 >= kMaxArrayDepth)
            fail(m_source, at,
                 what + ": arrays nested more than " + std::to_string(kMaxArrayDepth) + " deep");
        a.count = u64(what + ": the array's length");
        const uint64_t minItem = a.itemType == uint32_t(ValueType::Str) ? 8
                                 : a.itemType == uint32_t(ValueType::Array)
                                     ? 12
                                     : scalarBytes(a.itemType);
        if (a.count > kMaxArrayItems || a.count > remaining() / minItem)
            fail(m_source, at + 4,
                 what + ": array length " + std::to_string(a.count) +
                     (a.count > kMaxArrayItems ? " is over ggml's limit of 2^30 items"
                                               : " of " + std::string(valueTypeName(a.itemType)) +
                                                     " cannot fit in the " +
                                                     std::to_string(remaining()) + " bytes left"),
                 a.count > kMaxArrayItems ? Kind::Invalid : Kind::Truncated);
        a.offset = offset();
        return a;
    }

    // Skips `count` items of an array (strings one length at a time, nested
    // arrays recursively): time proportional to the items, no allocation.
    void skipItems(const MetadataArray& a, uint64_t count, const std::string& what, int depth) {
        if (const uint64_t size = scalarBytes(a.itemType))
            return skip(count * size, what); // count ≤ remaining / size: checked
        for (uint64_t i = 0; i < count; ++i) {
            if (a.itemType == uint32_t(ValueType::Str)) {
                skip(stringLength(what), what);
            } else {
                const MetadataArray inner = arrayHeader(what, depth + 1);
                skipItems(inner, inner.count, what, depth + 1);
            }
        }
    }

    // One item or scalar value of `type` as text.
    std::string valueText(uint32_t type, const std::string& what, int depth) {
        if (type == uint32_t(ValueType::Str))
            return string(what);
        if (type == uint32_t(ValueType::Array)) {
            const MetadataArray inner = arrayHeader(what, depth);
            skipItems(inner, inner.count, what, depth);
            return arraySummary(inner.count, inner.itemType);
        }
        return scalarText(type, bytes(scalarBytes(type), what));
    }

private:
    const ByteSource& m_source;
    ByteCursor m_cursor;
};

const MetadataRow* fileTypeRow(const std::vector<MetadataRow>& metadata) {
    const auto row = std::find_if(metadata.begin(), metadata.end(), [](const MetadataRow& r) {
        return r.key == "general.file_type" && !r.array;
    });
    return row == metadata.end() ? nullptr : &*row;
}

// The value of an integer row that parses whole, else nothing.
std::optional<uint64_t> integerValue(const MetadataRow& row) {
    static constexpr std::string_view kIntegerTypes[] = {"u8",  "i8",  "u16", "i16",
                                                         "u32", "i32", "u64", "i64"};
    if (std::find(std::begin(kIntegerTypes), std::end(kIntegerTypes), row.type) ==
        std::end(kIntegerTypes))
        return std::nullopt;
    uint64_t value = 0;
    const char* end = row.value.data() + row.value.size();
    const auto [at, ec] = std::from_chars(row.value.data(), end, value);
    if (ec != std::errc{} || at != end) // from_chars refuses "" too
        return std::nullopt;
    return value;
}

// llama.cpp's name for a general.file_type value (include/llama.h, enum
// llama_ftype, LLAMA_FTYPE_MOSTLY_ dropped), empty past the ones it names for
// certain: 4–6 and 33–35 are commented out in recent versions, but old files
// carry them; 40 and up mean different types in different versions.
std::string_view llamaFileTypeName(uint64_t value) {
    static constexpr std::string_view kNames[] = {
        "ALL_F32",  "F16",    "Q4_0",    "Q4_1",      "Q4_1_SOME_F16", "Q4_2",     "Q4_3",
        "Q8_0",     "Q5_0",   "Q5_1",    "Q2_K",      "Q3_K_S",        "Q3_K_M",   "Q3_K_L",
        "Q4_K_S",   "Q4_K_M", "Q5_K_S",  "Q5_K_M",    "Q6_K",          "IQ2_XXS",  "IQ2_XS",
        "Q2_K_S",   "IQ3_XS", "IQ3_XXS", "IQ1_S",     "IQ4_NL",        "IQ3_S",    "IQ3_M",
        "IQ2_S",    "IQ2_M",  "IQ4_XS",  "IQ1_M",     "BF16",          "Q4_0_4_4", "Q4_0_4_8",
        "Q4_0_8_8", "TQ1_0",  "TQ2_0",   "MXFP4_MOE", "NVFP4"};
    return value < std::size(kNames) ? kNames[value] : std::string_view();
}

} // namespace

std::string_view fileTypeName(const std::vector<MetadataRow>& metadata) {
    const MetadataRow* row = fileTypeRow(metadata);
    const std::optional<uint64_t> value = row ? integerValue(*row) : std::nullopt;
    return value ? llamaFileTypeName(*value) : std::string_view();
}

std::string fileTypeText(const std::vector<MetadataRow>& metadata) {
    const MetadataRow* row = fileTypeRow(metadata);
    if (!row)
        return {};
    const std::optional<uint64_t> value = integerValue(*row);
    if (!value)
        return row->value + " (general.file_type)";
    const std::string_view name = llamaFileTypeName(*value);
    if (name.empty())
        return row->value + " (general.file_type, a type llama.cpp does not name for certain)";
    return std::string(name) + " (general.file_type " + row->value + ")";
}

const char* valueTypeName(uint32_t type) {
    static const char* const kNames[] = {"u8",   "i8",  "u16", "i16", "u32", "i32", "f32",
                                         "bool", "str", "arr", "u64", "i64", "f64"};
    return knownType(type) ? kNames[type] : "?";
}

std::string ggufProbeFailure(const ByteSource& source) {
    if (source.size() < 4)
        return "the file has " + std::to_string(source.size()) +
               " bytes; a GGUF file begins with the 4-byte magic \"GGUF\"";
    char magic[4];
    source.read(0, magic, 4);
    if (std::memcmp(magic, "GGUF", 4) != 0)
        return "byte 0: expected the magic \"GGUF\", found \"" + magicBytes(source) + "\"";
    return {};
}

namespace {

void readVersion(Reader& r, GgufHeader& h) {
    h.version = r.u32("the version");
    if (h.version == 1)
        fail(r.source(), 4, "GGUF version 1 is no longer read (ggml refuses it); expected 2 or 3",
             Kind::UnsupportedVersion);
    if (h.version != 2 && h.version != 3)
        fail(r.source(), 4,
             "GGUF version " + std::to_string(h.version) +
                 ((h.version & 0xffffu) == 0 ? " (a big-endian file?)" : "") +
                 " is not supported; expected 2 or 3",
             Kind::UnsupportedVersion);
}

void readMetadata(Reader& r, GgufHeader& h, uint64_t count) {
    std::unordered_set<std::string> keys;
    keys.reserve(size_t(std::min(count, kMaxReserve)));
    h.metadata.reserve(size_t(std::min(count, kMaxReserve)));
    bool alignmentSeen = false;
    for (uint64_t i = 0; i < count; ++i) {
        const uint64_t at = r.offset();
        const std::string where = "metadata key " + std::to_string(i);
        MetadataRow row;
        row.key = r.string(where);
        if (row.key.empty())
            fail(r.source(), at, where + " is empty");
        if (!keys.insert(row.key).second)
            fail(r.source(), at, "metadata key " + quotedName(row.key) + " is given twice");
        const std::string what = "metadata " + quotedName(row.key);
        const uint64_t typeAt = r.offset();
        const uint32_t type = r.u32(what + ": the value type");
        if (!knownType(type))
            fail(r.source(), typeAt,
                 what + ": unknown value type " + std::to_string(type) + "; expected 0 to 12");
        row.type = valueTypeName(type);
        if (type == uint32_t(ValueType::Array)) {
            const MetadataArray a = r.arrayHeader(what, 0);
            r.skipItems(a, a.count, what, 0);
            row.value = arraySummary(a.count, a.itemType);
            row.type = std::string("arr[") + valueTypeName(a.itemType) + "]";
            row.array = a;
        } else {
            const uint64_t valueAt = r.offset();
            row.value = r.valueText(type, what, 0);
            row.kind = isIntegerType(type) ? MetadataKind::Integer : MetadataKind::Text;
            if (row.key == "general.alignment") {
                if (type != uint32_t(ValueType::U32))
                    fail(r.source(), typeAt,
                         "general.alignment is of type " + row.type + "; expected u32");
                alignmentSeen = true;
                h.alignment = uint32_t(std::stoul(row.value));
                if (!std::has_single_bit(h.alignment))
                    fail(r.source(), valueAt,
                         "general.alignment " + row.value + " is not a power of two");
            }
        }
        h.metadata.push_back(std::move(row));
    }
    if (!alignmentSeen)
        h.alignment = kDefaultAlignment;
}

// ne[] read as int64 as ggml does: negative refused, the product checked
// against int64 overflow (ggml's own guard misses 2^40 × 2^40).
uint64_t readDims(Reader& r, TensorEntry& t, uint32_t nDims, const std::string& what) {
    uint64_t elements = 1;
    std::vector<uint64_t> ne(nDims);
    for (uint32_t d = 0; d < nDims; ++d) {
        const uint64_t at = r.offset();
        ne[d] = r.u64(what + ": ne[" + std::to_string(d) + "]");
        if (ne[d] > uint64_t(INT64_MAX))
            fail(r.source(), at,
                 what + ": ne[" + std::to_string(d) + "] is negative (" +
                     std::to_string(int64_t(ne[d])) + "); expected a size");
    }
    t.shape.assign(ne.rbegin(), ne.rend());
    for (uint32_t d = 0; d < nDims; ++d) {
        if (ne[d] != 0 && elements > uint64_t(INT64_MAX) / ne[d]) {
            if (std::find(ne.begin(), ne.end(), 0) != ne.end())
                return 0;
            fail(r.source(), t.headerOffset,
                 what + ": shape " + fmt::shape(ne) + " (ne) has more than 2^63 elements");
        }
        elements *= ne[d];
    }
    return elements;
}

TensorEntry readTensorInfo(Reader& r, std::unordered_set<std::string>& names, uint64_t i) {
    TensorEntry t;
    t.headerOffset = r.offset();
    t.name = r.string("tensor " + std::to_string(i) + "'s name");
    const std::string what = "tensor " + quotedName(t.name);
    if (t.name.size() >= kMaxNameLength)
        fail(r.source(), t.headerOffset,
             what + ": the name has " + std::to_string(t.name.size()) +
                 " bytes; ggml allows at most 63");
    if (!names.insert(t.name).second)
        fail(r.source(), t.headerOffset, what + ": the name is given to two tensors");
    const uint64_t dimsAt = r.offset();
    const uint32_t nDims = r.u32(what + ": n_dims");
    if (nDims > kMaxDims)
        fail(r.source(), dimsAt,
             what + ": " + std::to_string(nDims) + " dimensions; expected at most 4");
    const uint64_t elements = readDims(r, t, nDims, what);
    const uint64_t typeAt = r.offset();
    const uint32_t typeId = r.u32(what + ": the ggml type");
    const GgmlTypeInfo* type = ggmlType(typeId);
    const auto dtype = dtypeFromGgml(typeId);
    if (!type || !dtype)
        fail(r.source(), typeAt,
             what + ": unknown ggml type " + std::to_string(typeId) +
                 " (not a type ggml defines; 4, 5, 31 to 33 and 36 to 38 were removed)");
    t.dtype = *dtype;
    const uint64_t row = t.shape.empty() ? 1 : t.shape.back();
    if (row % type->blockElements != 0)
        fail(r.source(), typeAt,
             what + ": rows of " + std::to_string(row) + " elements (ne[0]) are not whole " +
                 type->name + " blocks of " + std::to_string(type->blockElements));
    t.elementCount = elements;
    t.dataLen = elements;
    t.dataOffset = r.u64(what + ": the offset"); // relative until the data section is known
    return t;
}

uint64_t padded(uint64_t n, uint32_t alignment) {
    return (n + alignment - 1) / alignment * alignment;
}

// Each tensor where ggml expects it: at the previous one's end rounded up to
// the alignment, and inside the file.
void placeTensors(const ByteSource& source, GgufHeader& h) {
    uint64_t expected = 0;
    for (TensorEntry& t : h.tensors) {
        const std::string what = "tensor " + quotedName(t.name);
        if (t.dataOffset != expected)
            fail(source, t.headerOffset,
                 what + ": data offset " + std::to_string(t.dataOffset) + "; expected " +
                     std::to_string(expected) +
                     " (each tensor follows the one before, padded to the alignment of " +
                     std::to_string(h.alignment) + ")");
        const uint64_t bytes = dtypeBytes(t.dtype, t.dataLen).value_or(UINT64_MAX);
        const uint64_t left = source.size() - std::min(source.size(), h.dataStart);
        if (bytes > left || t.dataOffset > left - bytes)
            fail(source, t.headerOffset,
                 what + ": its " + std::to_string(bytes) + " bytes at data offset " +
                     std::to_string(t.dataOffset) + " run past the end of the file (" +
                     std::to_string(left) + " bytes of data from byte " +
                     std::to_string(h.dataStart) + ")",
                 Kind::Truncated);
        expected = t.dataOffset + padded(bytes, h.alignment); // ≤ file size + alignment
        t.dataOffset += h.dataStart;
    }
}

} // namespace

GgufHeader readGgufHeader(const ByteSource& source) {
    if (const std::string why = ggufProbeFailure(source); !why.empty())
        fail(source, 0, "not a GGUF file: " + why, Kind::InvalidMagic);
    Reader r(source, 4);
    GgufHeader h;
    readVersion(r, h);
    const uint64_t tensorCount = r.u64("the tensor count");
    const uint64_t keyCount = r.u64("the metadata count");
    if (keyCount > r.remaining() / kMinKeyValueBytes)
        fail(source, 16,
             "metadata count " + std::to_string(keyCount) + " cannot fit in the " +
                 std::to_string(r.remaining()) +
                 " bytes left: the file is truncated or the count is wrong",
             Kind::Truncated);
    readMetadata(r, h, keyCount);
    if (tensorCount > r.remaining() / kMinTensorInfoBytes)
        fail(source, 8,
             "tensor count " + std::to_string(tensorCount) + " cannot fit in the " +
                 std::to_string(r.remaining()) +
                 " bytes left after the metadata: the file is truncated or the count is wrong",
             Kind::Truncated);
    std::unordered_set<std::string> names;
    names.reserve(size_t(std::min(tensorCount, kMaxReserve)));
    h.tensors.reserve(size_t(std::min(tensorCount, kMaxReserve)));
    for (uint64_t i = 0; i < tensorCount; ++i)
        h.tensors.push_back(readTensorInfo(r, names, i));
    // ggml pads to the data section only when there are tensors.
    h.dataStart = tensorCount > 0 ? padded(r.offset(), h.alignment) : r.offset();
    // Even tensors of no bytes need their data section inside the file.
    if (h.dataStart > source.size())
        fail(source, r.offset(),
             "the data section would begin at byte " + std::to_string(h.dataStart) +
                 " (the tensor infos' end padded to " + std::to_string(h.alignment) +
                 "), past the end of the file (" + std::to_string(source.size()) +
                 " bytes): the file is truncated",
             Kind::Truncated);
    placeTensors(source, h);
    return h;
}

std::vector<std::string> readGgufArrayItems(const ByteSource& source, const MetadataArray& array,
                                            uint64_t first, uint64_t count) {
    std::vector<std::string> items;
    if (first >= array.count)
        return items;
    count = std::min(count, array.count - first);
    Reader r(source, array.offset);
    const std::string what = "array item";
    r.skipItems(array, first, what, 0);
    items.reserve(size_t(std::min<uint64_t>(count, 1 << 16)));
    for (uint64_t i = 0; i < count; ++i)
        items.push_back(r.valueText(array.itemType, what, 1));
    return items;
}

MetadataArrayRun readGgufArrayRun(const ByteSource& source, const MetadataArray& array,
                                  uint64_t count) {
    MetadataArrayRun run;
    count = std::min(count, array.count);
    Reader r(source, array.offset);
    const std::string what = "array item";
    run.items.reserve(size_t(std::min<uint64_t>(count, 1 << 16)));
    for (uint64_t i = 0; i < count; ++i) {
        if (array.itemType == uint32_t(ValueType::Array)) {
            // The file passed the depth check at open: depth 1 checks again.
            const MetadataArray inner = r.arrayHeader(what, 1);
            r.skipItems(inner, inner.count, what, 1);
            run.items.push_back(arraySummary(inner.count, inner.itemType));
            run.nested.push_back(inner);
        } else {
            run.items.push_back(r.valueText(array.itemType, what, 1));
            run.nested.push_back(std::nullopt);
        }
    }
    run.rest = {r.offset(), array.count - count, array.itemType};
    return run;
}

} // namespace ckptscope::gguf
