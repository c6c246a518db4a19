// The gradient JSON reader: the fast path for the plain case, the SAX reader
// for everything else (and for every error message).
#include "formats/gradient/gradientjsonreader.h"

namespace ckptscope::gradientjson {

std::string_view withoutBom(std::string_view text) {
    if (text.starts_with("\xEF\xBB\xBF"))
        text.remove_prefix(3);
    return text;
}

static GradientCheckpoint parse(std::string_view text, const std::string& name, bool graphOnly) {
    text = withoutBom(text);
    if (std::optional<GradientCheckpoint> fast = readFast(text, graphOnly))
        return std::move(*fast);
    return readSax(text, name, graphOnly);
}

GradientCheckpoint readCheckpoint(std::string_view text, const std::string& name) {
    return parse(text, name, false);
}

ComputationGraphStore readGraph(std::string_view text, const std::string& name) {
    return std::move(parse(text, name, true).graph);
}

} // namespace ckptscope::gradientjson
