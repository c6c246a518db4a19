#include "gradientinfojson.h"

#include "ckptscope/common/jsonstring.h"
#include "ckptscope/formats/oxck/metadatacodec.h"

#include <charconv>
#include <optional>

namespace cli {

using namespace ckptscope;

namespace {

// Pretty JSON as nlohmann's dump(2, ' ', false) lays it out: two spaces per
// level, "key": value, empty arrays and objects as [] and {}.
class PrettyWriter {
public:
    explicit PrettyWriter(std::string& out) : m_out(out) {}

    void beginObject() { open('{'); }
    void endObject() { close('}'); }
    void beginArray() { open('['); }
    void endArray() { close(']'); }

    void key(std::string_view k) {
        element();
        string(k);
        m_out += ": ";
        m_keyed = true;
    }
    void value(std::string_view s) {
        element();
        string(s);
    }
    void value(uint64_t n) {
        element();
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, n);
        m_out.append(buf, r.ptr);
    }
    void value(const std::string& s) { value(std::string_view(s)); }
    void value(const char* s) { value(std::string_view(s)); }
    void nullableValue(const std::optional<std::string>& s) {
        if (s) {
            value(*s);
        } else {
            element();
            m_out += "null";
        }
    }
    template <typename Strings> void stringArray(const Strings& strings) {
        beginArray();
        for (const auto& s : strings)
            value(std::string_view(s));
        endArray();
    }

private:
    // Before a value: the separator and the line break of its container
    // (none after a key).
    void element() {
        if (m_keyed) {
            m_keyed = false;
            return;
        }
        if (m_depth == 0)
            return;
        if (!m_empty)
            m_out += ',';
        m_out += '\n';
        m_out.append(2 * m_depth, ' ');
        m_empty = false;
    }
    void open(char c) {
        element();
        m_out += c;
        ++m_depth;
        m_empty = true;
    }
    void close(char c) {
        --m_depth;
        if (!m_empty) {
            m_out += '\n';
            m_out.append(2 * m_depth, ' ');
        }
        m_out += c;
        m_empty = false;
    }
    void string(std::string_view s) { appendJsonString(m_out, s); }

    std::string& m_out;
    size_t m_depth = 0;
    bool m_empty = true;  // nothing yet in the innermost open container
    bool m_keyed = false; // a key was just written: its value follows on the line
};

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

    PrettyWriter w(out);
    w.beginObject();
    w.key("format");
    w.value("gradient");
    w.key("file_size");
    w.value(doc.fileSize());
    w.key("step");
    w.value(g.step);
    w.key("loss_cid");
    w.nullableValue(g.lossCid);
    w.key("timestamp");
    w.value(g.timestamp);
    w.key("node_count");
    w.value(uint64_t(g.graph.nodeCount()));
    w.key("edge_count");
    w.value(uint64_t(g.graph.edgeCount()));
    w.key("loss_node");
    w.nullableValue(loss ? std::optional<std::string>(loss->id) : std::nullopt);
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
    w.key("warnings");
    w.beginArray();
    for (const auto& warning : doc.warnings())
        w.value(warning.message);
    w.endArray();
    w.endObject();
    return true;
}

} // namespace cli
