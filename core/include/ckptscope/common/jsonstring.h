#pragma once

#include <string>
#include <string_view>

namespace ckptscope {

// Appends s as a JSON string literal: \" \\ \b \f \n \r \t, other control
// characters as \u00xx (lowercase hex), everything else as is — byte for
// byte what serde_json and nlohmann's dump (without ensure_ascii) write for
// valid UTF-8. Bytes that are not UTF-8 (a name from a GGUF file may hold
// any bytes) become U+FFFD, one for each stray byte or sequence cut short,
// as nlohmann's dump with error_handler_t::replace writes them, so the text
// is always valid JSON and the same whichever way it was written. For
// writers that stream JSON without building a DOM.
void appendJsonString(std::string& out, std::string_view s);

} // namespace ckptscope
