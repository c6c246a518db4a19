#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// Text helpers of the SAX reader's messages: where a token starts, the
// "NAME:LINE:COLUMN: " of an offset, UTF-8 kept valid, nlohmann's parse
// errors reworded.
namespace ckptscope::gradientjson {

// Token shapes, to find where the offending token starts.
enum class Token : uint8_t { String, Number, Null, True, False, Bracket };

// Where the token of this shape starts, when the parser has read text up to
// `end` (the token's end, plus one look-ahead character after a number).
size_t tokenStart(std::string_view text, size_t end, Token token);
// "NAME:LINE:COLUMN: " of a byte offset (1-based line and column).
std::string position(const std::string& name, std::string_view text, size_t offset);

void replaceAll(std::string& s, std::string_view from, std::string_view to);
// The parser quotes what it read, which may be the invalid UTF-8 it refused;
// such bytes become \xNN so the message itself stays valid text.
std::string sanitizedUtf8(std::string_view s);
// The character starting `here`, quoted for a message: one whole UTF-8
// sequence, control characters and invalid bytes escaped.
std::string strayCharacter(std::string_view here);
// nlohmann's "[json.exception.parse_error.101] parse error at line 3, column
// 5: syntax error while parsing value - unexpected end of input; expected
// '[', '{', or a literal" becomes "unexpected end of file, expected a value";
// `here` is the text from the offending character on.
std::string plainParseMessage(std::string m, std::string_view here);

} // namespace ckptscope::gradientjson
