#include "gradientinfojson.h"

#include "clijson.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/formats/oxck/metadatacodec.h"

#include <optional>

namespace cli {

using namespace ckptscope;

namespace {

template <typename Strings> bool allValid(const Strings& strings) {
    for (const auto& s : strings)
        if (!isValidUtf8(s))
            return false;
    return true;
}

} // namespace

bool writeGradientInfoJson(const GradientInfo& info, std::string& out) {
    const Document& doc = info.doc;
    const GradientCheckpoint& g = *doc.gradient();
    const ComputationNode* loss = g.lossNode();
    std::vector<std::string_view> others;
    if (g.lossCid)
        others.push_back(*g.lossCid);
    if (loss)
        others.push_back(loss->id);
    for (const auto& [op, n] : info.ops)
        others.push_back(op);
    for (const auto& [name, bytes] : g.optimizerState)
        others.push_back(name);
    for (const auto& w : doc.warnings())
        others.push_back(w.message);
    if (!allValid(others) || !allValid(info.split.order) || !allValid(info.split.cycle))
        return false;

    JsonStreamWriter w(out);
    w.beginObject();
    w.key("format");
    w.value("gradient");
    w.key("file_size");
    w.value(doc.fileSize());
    w.key("step");
    w.value(g.step);
    w.key("loss_cid");
    w.valueOrNull(g.lossCid);
    w.key("timestamp");
    w.value(g.timestamp);
    w.key("node_count");
    w.value(uint64_t(g.graph.nodeCount()));
    w.key("edge_count");
    w.value(uint64_t(g.graph.edgeCount()));
    w.key("loss_node");
    w.valueOrNull(loss ? std::optional<std::string>(loss->id) : std::nullopt);
    w.key("topological_order");
    w.stringArray(info.split.order);
    w.key("cycle_nodes");
    w.stringArray(info.split.cycle);
    w.key("ops");
    w.beginObject();
    for (const auto& [op, n] : info.ops) {
        w.key(op);
        w.value(uint64_t(n));
    }
    w.endObject();
    w.key("optimizer_state");
    w.beginArray();
    for (const auto& [name, bytes] : g.optimizerState) {
        w.beginObject();
        w.key("name");
        w.value(name);
        w.key("bytes");
        w.value(uint64_t(bytes.size()));
        w.endObject();
    }
    w.endArray();
    writeWarnings(w, doc);
    w.endObject();
    return true;
}

} // namespace cli
