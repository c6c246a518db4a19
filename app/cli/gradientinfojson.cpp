#include "gradientinfojson.h"

#include "clijson.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/formats/oxck/metadatacodec.h"

#include <optional>

namespace cli {

using namespace ckptscope;

void writeGradientInfoJson(const GradientInfo& info, std::string& out) {
    const Document& doc = info.doc;
    const GradientCheckpoint& g = *doc.gradient();
    const ComputationNode* loss = g.lossNode();
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
}

} // namespace cli
