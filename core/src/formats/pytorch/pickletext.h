#pragma once

// The text and number forms pickle opcodes carry, decoded as Python's
// unpickler decodes them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ckptscope::pytorch {

// A little-endian two's-complement integer of any length (LONG1, LONG4) in
// decimal.
std::string pickleDecimal(std::string_view bytes);
// The same integer when it fits in 64 bits (bytes past the eighth only
// extend its sign), else nullopt.
std::optional<int64_t> pickleInt64(std::string_view bytes);

// Appends the UTF-8 of one code point.
void appendUtf8(std::string& out, uint32_t cp);

// The code points of UTF-8 text as bytes, when every one is below 256
// (_codecs.encode(text, 'latin1')); false otherwise.
bool latin1Bytes(const std::string& text, std::string& out);

// Protocol 0's STRING argument: a repr in quotes, with backslash escapes for
// quotes, backslash, \n \t \r and \xNN; nullopt when it is not in quotes or
// an \x is not followed by two hex digits (Python refuses both).
std::optional<std::string> unquotedString(std::string_view s);

// Protocol 0's UNICODE argument: raw-unicode-escape (\uXXXX, \UXXXXXXXX,
// every other byte a code point below 256), as UTF-8; nullopt for a \u or
// \U without its hex digits, or past U+10FFFF (Python refuses both).
std::optional<std::string> rawUnicodeText(std::string_view s);

} // namespace ckptscope::pytorch
