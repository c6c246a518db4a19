#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <optional>

namespace cli {

// An optional in JSON: its value, or null.
template <typename T> nlohmann::ordered_json orNull(const std::optional<T>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
}

// j as every --json output is laid out (nlohmann's dump(2): two-space indent)
// and a newline; invalid UTF-8 becomes U+FFFD instead of an exception.
void printJson(std::ostream& out, const nlohmann::ordered_json& j);

} // namespace cli
