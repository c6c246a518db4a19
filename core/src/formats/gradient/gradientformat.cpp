#include "formats/gradient/gradientformat.h"

#include <algorithm>
#include <memory>

namespace ckptscope {

namespace {

// A JSON object: '{' after an optional UTF-8 byte-order mark and whitespace
// (looked for in the first 64 KiB).
bool probe(const ByteSource& source) {
    std::string head(size_t(std::min<uint64_t>(source.size(), 64 * 1024)), '\0');
    source.read(0, head.data(), head.size());
    size_t i = head.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
    while (i < head.size() &&
           (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
        ++i;
    return i < head.size() && head[i] == '{';
}

FormatIndex open(const ByteSource& source) {
    // The text without zero-filling it first: it is as large as the file, and
    // the read overwrites every byte.
    const auto size = size_t(source.size());
    const auto text = std::make_unique_for_overwrite<char[]>(size);
    source.read(0, text.get(), size);
    FormatIndex index;
    index.gradient =
        GradientCheckpoint::fromJson(std::string_view(text.get(), size), source.name());
    const GradientCheckpoint& g = *index.gradient;
    index.metadata = {
        {"step", std::to_string(g.step), MetadataKind::Integer},
        {"loss_cid", g.lossCid.value_or("(none)"), MetadataKind::Text},
        {"timestamp", std::to_string(g.timestamp), MetadataKind::Timestamp},
        {"node_count", std::to_string(g.graph.nodeCount()), MetadataKind::Integer},
        {"edge_count", std::to_string(g.graph.edgeCount()), MetadataKind::Integer},
    };
    for (std::string& w : g.graph.validate())
        index.warnings.push_back({std::move(w), std::nullopt});
    index.graphSplit = g.graph.topologicalSplit();
    if (const auto& cycle = index.graphSplit.cycle; !cycle.empty())
        index.warnings.push_back({std::to_string(cycle.size()) +
                                      " nodes are on or behind a cycle and have no place in the "
                                      "topological order",
                                  std::nullopt});
    return index;
}

} // namespace

FormatModule gradientFormat() {
    FormatModule m{
        Format::Gradient, "gradient", "gradient checkpoint", ".json", "a JSON object", probe,
        nullptr,          open};
    m.patterns = "*.json"; // JSON claims no MIME type of ours
    m.graph = true;
    return m;
}

} // namespace ckptscope
