#pragma once

#include <string>
#include <string_view>

namespace ckptscope {

// Appends s as a JSON string literal: \" \\ \b \f \n \r \t, other control
// characters as \u00xx (lowercase hex), everything else as is — byte for
// byte what serde_json and nlohmann's dump (without ensure_ascii) write for
// valid UTF-8. Each byte that is not part of valid UTF-8 (a name from a
// GGUF file may hold any bytes) becomes U+FFFD, so the text is always valid
// JSON. For writers that stream JSON without building a DOM.
void appendJsonString(std::string& out, std::string_view s);

} // namespace ckptscope
