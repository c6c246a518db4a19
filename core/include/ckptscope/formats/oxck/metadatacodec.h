#pragma once

#include <map>
#include <string>
#include <string_view>

namespace ckptscope {

using Metadata = std::map<std::string, std::string>;

// The OXCK metadata block: a flat {"key":"value",...} object written with keys
// sorted and only `"` and `\` escaped (newlines and tabs are raw), so it is
// not strict JSON. See FORMATS.md §1 for what the reader accepts.
std::string serializeMetadata(const Metadata& metadata);

// Throws CheckpointError (Metadata / InvalidUtf8) naming `fileName` and the
// absolute byte offset (baseOffset + position in text) of the fault.
Metadata parseMetadata(std::string_view text, const std::string& fileName, uint64_t baseOffset);

// True when the bytes are well-formed UTF-8 (no overlongs, no surrogates).
bool isValidUtf8(std::string_view text);

} // namespace ckptscope
