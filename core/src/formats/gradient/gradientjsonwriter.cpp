#include "formats/gradient/gradientjsonwriter.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/common/jsonstring.h"

#include <ostream>

namespace ckptscope::gradientjson {

namespace {


// A checkpoint in serde_json's to_string_pretty layout (the layout
// JsonStreamWriter writes), field by field in the Rust struct's order.
class CheckpointWriter {
public:
    explicit CheckpointWriter(JsonStreamWriter& w) : m_w(w) {}

    void checkpoint(const GradientCheckpoint& c) {
        m_w.beginObject();
        m_w.key("graph");
        graph(c.graph);
        m_w.key("step");
        m_w.value(c.step);
        m_w.key("loss_cid");
        m_w.valueOrNull(c.lossCid);
        m_w.key("optimizer_state");
        m_w.beginObject();
        for (const auto& [name, blob] : c.optimizerState) {
            m_w.key(name);
            m_w.byteArray(blob);
        }
        m_w.endObject();
        m_w.key("timestamp");
        m_w.value(c.timestamp);
        m_w.endObject();
    }

    void graph(const ComputationGraphStore& g) {
        m_w.beginObject();
        m_w.key("nodes");
        m_w.beginObject();
        for (const auto& [key, node] : g.nodes()) {
            m_w.key(key);
            this->node(node);
            m_w.chunkDone();
        }
        m_w.endObject();
        m_w.key("edges");
        m_w.beginArray();
        for (const auto& [producer, consumer] : g.edges()) {
            m_w.beginArray();
            m_w.value(producer);
            m_w.value(consumer);
            m_w.endArray();
            m_w.chunkDone();
        }
        m_w.endArray();
        m_w.endObject();
    }

private:
    void node(const ComputationNode& n) {
        m_w.beginObject();
        m_w.key("id");
        m_w.value(n.id);
        m_w.key("op");
        m_w.value(n.op);
        m_w.key("input_cids");
        m_w.stringArray(n.inputCids);
        m_w.key("output_cid");
        m_w.valueOrNull(n.outputCid);
        m_w.key("gradient_cid");
        m_w.valueOrNull(n.gradientCid);
        m_w.key("metadata");
        m_w.beginObject();
        for (const auto& [k, v] : n.metadata) {
            m_w.key(k);
            m_w.value(v);
        }
        m_w.endObject();
        m_w.endObject();
    }

    JsonStreamWriter& m_w;
};

size_t estimatedSize(const GradientCheckpoint& c) {
    size_t n = 256 + c.graph.nodeCount() * 512 + c.graph.edgeCount() * 96;
    for (const auto& [name, blob] : c.optimizerState)
        n += name.size() + 16 + blob.size() * 11;
    return n;
}

} // namespace

std::string displayText(std::string_view s, bool quoted, size_t maxBytes) {
    size_t cut = s.size();
    if (cut > maxBytes) {
        cut = maxBytes;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80)
            --cut; // do not split a UTF-8 sequence
    }
    std::string escaped;
    appendJsonString(escaped, s.substr(0, cut));
    std::string body = escaped.substr(1, escaped.size() - 2);
    if (cut < s.size())
        body += "…";
    return quoted || s.empty() ? "\"" + body + "\"" : body;
}

void writeCheckpoint(std::string& out, const GradientCheckpoint& ckpt) {
    out.reserve(out.size() + estimatedSize(ckpt));
    JsonStreamWriter w(out);
    CheckpointWriter(w).checkpoint(ckpt);
}

void writeCheckpoint(std::ostream& out, const GradientCheckpoint& ckpt) {
    JsonStreamWriter w(out);
    CheckpointWriter(w).checkpoint(ckpt);
    w.flush();
}

void writeGraph(std::string& out, const ComputationGraphStore& graph) {
    JsonStreamWriter w(out);
    CheckpointWriter(w).graph(graph);
}

} // namespace ckptscope::gradientjson
