#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <optional>

namespace ckptscope {
class CallArguments;
class Document;
class JsonStreamWriter;
} // namespace ckptscope

namespace cli {

// An optional in JSON: its value, or null.
template <typename T> nlohmann::ordered_json orNull(const std::optional<T>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
}

// j as every --json output is laid out (nlohmann's dump(2): two-space
// indent; invalid UTF-8 becomes U+FFFD instead of an exception), written as
// the next value of a streamed output: a small part of a large one (a run's
// tensor series, one parameter's optimizer figures) kept as a DOM. Always
// laid out pretty: not for inside an Inline container.
void writeDom(ckptscope::JsonStreamWriter& w, const nlohmann::ordered_json& j);

// Ends a --json output streamed to stdout: the rest of its text, and the
// newline every output ends with.
void endJsonOutput(ckptscope::JsonStreamWriter& w);

// The document's warnings as every --json output lists them: an array of
// messages (a message about one tensor names it).
nlohmann::ordered_json warningsJson(const ckptscope::Document& doc);
// The same as the key "warnings" and its array, for the streamed outputs,
// followed by the command's own (`more`).
void writeWarnings(ckptscope::JsonStreamWriter& w, const ckptscope::Document& doc,
                   const std::vector<std::string>& more = {});

// An unsafe call in `info --json` and `scan --json`: its arguments' array,
// or {"arguments_not_written": true} past the file's budget for them.
nlohmann::ordered_json callJson(ckptscope::CallArguments& arguments, uint32_t call);

} // namespace cli
