#pragma once

#include "ckptscope/formats/formatindex.h"
#include "ckptscope/io/bytesource.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ckptscope::gguf {

// GGUF metadata value types (gguf.h's enum gguf_type).
enum class ValueType : uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    Str = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};

// ggml's gguf_type_name spelling: "u8" … "str", "arr"; "?" for an unknown code.
const char* valueTypeName(uint32_t type);

// The `general.file_type` row of `metadata` with the name llama.cpp gives
// it (enum llama_ftype): "Q4_K_M (general.file_type 15)". A value it does
// not name, or names differently between versions (40 and up), stays a
// number: "41 (general.file_type, a type llama.cpp does not name for
// certain)"; a value of another type as stored. Empty without the key.
std::string fileTypeText(const std::vector<MetadataRow>& metadata);
// Only llama.cpp's name ("Q4_K_M"); empty where fileTypeText gives no name.
std::string_view fileTypeName(const std::vector<MetadataRow>& metadata);

// Everything of a GGUF file but the tensor values, checked as ggml checks
// it (and a little more: element counts that overflow, nested arrays too deep).
// Metadata rows carry their GGUF type ("u32", "arr[str]"); arrays are one row
// with a summary and where their items lie (MetadataArray).
struct GgufHeader {
    uint32_t version = 0;
    uint32_t alignment = 32;
    uint64_t dataStart = 0; // absolute offset of the data section
    std::vector<MetadataRow> metadata;
    std::vector<TensorEntry> tensors; // dataOffset absolute, shape row-major (ne reversed)
};

// Throws CheckpointError naming the file, the byte offset and what was
// expected. Time and memory are proportional to the header: no count from the
// file is allocated before the bytes it needs are known to be there.
GgufHeader readGgufHeader(const ByteSource& source);

// Why the first bytes are not GGUF's ("" when they are).
std::string ggufProbeFailure(const ByteSource& source);

// Items [first, first + count) of an array row, as text (strings as stored,
// numbers in decimal, nested arrays as their summary). Reads from the file.
std::vector<std::string> readGgufArrayItems(const ByteSource& source, const MetadataArray& array,
                                            uint64_t first, uint64_t count);
// The first `count` items of an array with the nested arrays among them and
// the array of the items after them (Document::arrayRun).
MetadataArrayRun readGgufArrayRun(const ByteSource& source, const MetadataArray& array,
                                  uint64_t count);

} // namespace ckptscope::gguf
