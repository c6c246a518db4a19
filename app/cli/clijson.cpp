#include "clijson.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/document/document.h"
#include "ckptscope/formats/pytorch/picklescan.h"

#include <iostream>

namespace cli {

void writeDom(ckptscope::JsonStreamWriter& w, const nlohmann::ordered_json& j) {
    // dump() starts at indent 0; its serializer takes the depth to start at
    // (not public API, but dump's own code: the same text, byte for byte).
    std::string text;
    nlohmann::detail::serializer<nlohmann::ordered_json> out(
        nlohmann::detail::output_adapter<char, std::string>(text), ' ',
        nlohmann::ordered_json::error_handler_t::replace);
    out.dump(j, true, false, 2, unsigned(w.depth() * 2));
    w.rawValue(text);
}

void endJsonOutput(ckptscope::JsonStreamWriter& w) {
    w.flush();
    std::cout << '\n';
}

nlohmann::ordered_json callJson(ckptscope::CallArguments& arguments, uint32_t call) {
    if (const std::optional<std::string> args = arguments.json(call))
        return nlohmann::ordered_json::parse(*args);
    return {{"arguments_not_written", true}};
}

nlohmann::ordered_json warningsJson(const ckptscope::Document& doc) {
    nlohmann::ordered_json w = nlohmann::ordered_json::array();
    for (const auto& warning : doc.warnings())
        w.push_back(warning.message);
    return w;
}

void writeWarnings(ckptscope::JsonStreamWriter& w, const ckptscope::Document& doc,
                   const std::vector<std::string>& more) {
    w.key("warnings");
    w.beginArray();
    for (const auto& warning : doc.warnings())
        w.value(warning.message);
    for (const std::string& warning : more)
        w.value(warning);
    w.endArray();
}

} // namespace cli
