#include "formats/gradient/gradientjsonwriter.h"

#include <charconv>
#include <ostream>

namespace ckptscope::gradientjson {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Collects text; when streaming, hands it to the ostream in chunks so a
// 40 MB optimizer state never sits in memory twice.
class Sink {
public:
    explicit Sink(std::string& out) : m_text(out) {}
    explicit Sink(std::ostream& os) : m_text(m_own), m_os(&os) { m_own.reserve(kChunk + 4096); }

    std::string& text() { return m_text; }
    void chunkDone() {
        if (m_os && m_text.size() >= kChunk)
            flush();
    }
    // A failed stream is left for the caller to notice (writeFileAtomically
    // checks it); writing on would only waste time.
    void flush() {
        if (m_os && m_os->good())
            m_os->write(m_text.data(), std::streamsize(m_text.size()));
        if (m_os)
            m_text.clear();
    }

private:
    static constexpr size_t kChunk = size_t(1) << 20;
    std::string m_own;
    std::string& m_text;
    std::ostream* m_os = nullptr;
};

// serde_json's PrettyFormatter: two-space indent, `"key": value`, one element
// per line, `{}` / `[]` when empty, no trailing newline.
class PrettyWriter {
public:
    explicit PrettyWriter(Sink& sink) : m_sink(sink), m_s(sink.text()) {}

    void checkpoint(const GradientCheckpoint& c) {
        m_s += '{';
        bool first = true;
        field(first, 1, "graph");
        graph(c.graph, 1);
        field(first, 1, "step");
        number(c.step);
        field(first, 1, "loss_cid");
        optionalString(c.lossCid);
        field(first, 1, "optimizer_state");
        optimizerState(c.optimizerState, 1);
        field(first, 1, "timestamp");
        number(c.timestamp);
        close(0, '}');
    }

    void graph(const ComputationGraphStore& g, int level) {
        m_s += '{';
        bool first = true;
        field(first, level + 1, "nodes");
        nodes(g.nodes(), level + 1);
        field(first, level + 1, "edges");
        edges(g.edges(), level + 1);
        close(level, '}');
    }

private:
    void indent(int level) { m_s.append(size_t(level) * 2, ' '); }
    void field(bool& first, int level, std::string_view name) {
        m_s += first ? "\n" : ",\n";
        first = false;
        indent(level);
        appendQuoted(m_s, name);
        m_s += ": ";
    }
    void element(bool& first, int level) {
        m_s += first ? "\n" : ",\n";
        first = false;
        indent(level);
    }
    void close(int level, char bracket) {
        m_s += '\n';
        indent(level);
        m_s += bracket;
    }
    void number(uint64_t v) {
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        m_s.append(buf, r.ptr);
    }
    void optionalString(const std::optional<std::string>& s) {
        if (s)
            appendQuoted(m_s, *s);
        else
            m_s += "null";
    }

    void nodes(const std::map<std::string, ComputationNode>& all, int level) {
        if (all.empty()) {
            m_s += "{}";
            return;
        }
        m_s += '{';
        bool first = true;
        for (const auto& [key, node] : all) {
            field(first, level + 1, key);
            this->node(node, level + 1);
            m_sink.chunkDone();
        }
        close(level, '}');
    }

    void node(const ComputationNode& n, int level) {
        m_s += '{';
        bool first = true;
        field(first, level + 1, "id");
        appendQuoted(m_s, n.id);
        field(first, level + 1, "op");
        appendQuoted(m_s, n.op);
        field(first, level + 1, "input_cids");
        if (n.inputCids.empty()) {
            m_s += "[]";
        } else {
            m_s += '[';
            bool firstCid = true;
            for (const std::string& cid : n.inputCids) {
                element(firstCid, level + 2);
                appendQuoted(m_s, cid);
            }
            close(level + 1, ']');
        }
        field(first, level + 1, "output_cid");
        optionalString(n.outputCid);
        field(first, level + 1, "gradient_cid");
        optionalString(n.gradientCid);
        field(first, level + 1, "metadata");
        if (n.metadata.empty()) {
            m_s += "{}";
        } else {
            m_s += '{';
            bool firstMeta = true;
            for (const auto& [k, v] : n.metadata) {
                field(firstMeta, level + 2, k);
                appendQuoted(m_s, v);
            }
            close(level + 1, '}');
        }
        close(level, '}');
    }

    void edges(const std::vector<Edge>& all, int level) {
        if (all.empty()) {
            m_s += "[]";
            return;
        }
        m_s += '[';
        bool first = true;
        for (const auto& [producer, consumer] : all) {
            element(first, level + 1);
            m_s += "[\n";
            indent(level + 2);
            appendQuoted(m_s, producer);
            m_s += ",\n";
            indent(level + 2);
            appendQuoted(m_s, consumer);
            close(level + 1, ']');
            m_sink.chunkDone();
        }
        close(level, ']');
    }

    void optimizerState(const OptimizerState& state, int level) {
        if (state.empty()) {
            m_s += "{}";
            return;
        }
        m_s += '{';
        bool first = true;
        for (const auto& [name, blob] : state) {
            field(first, level + 1, name);
            bytes(blob, level + 1);
        }
        close(level, '}');
    }

    // The bulk of a real file: one byte per line, so keep this loop tight.
    void bytes(const std::vector<uint8_t>& blob, int level) {
        if (blob.empty()) {
            m_s += "[]";
            return;
        }
        const std::string separator = ",\n" + std::string(size_t(level + 1) * 2, ' ');
        m_s += '[';
        m_s.append(separator, 1); // the first element has no comma
        for (size_t i = 0; i < blob.size(); ++i) {
            if (i != 0)
                m_s += separator;
            const unsigned b = blob[i];
            if (b >= 100)
                m_s += char('0' + b / 100);
            if (b >= 10)
                m_s += char('0' + b / 10 % 10);
            m_s += char('0' + b % 10);
            if ((i & 0xffff) == 0xffff)
                m_sink.chunkDone();
        }
        close(level, ']');
        m_sink.chunkDone();
    }

    Sink& m_sink;
    std::string& m_s;
};

size_t estimatedSize(const GradientCheckpoint& c) {
    size_t n = 256 + c.graph.nodeCount() * 512 + c.graph.edgeCount() * 96;
    for (const auto& [name, blob] : c.optimizerState)
        n += name.size() + 16 + blob.size() * 11;
    return n;
}

} // namespace

void appendQuoted(std::string& out, std::string_view s) {
    out += '"';
    size_t run = 0; // start of the pending unescaped run
    for (size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        out.append(s.data() + run, i - run);
        run = i + 1;
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
        }
    }
    out.append(s.data() + run, s.size() - run);
    out += '"';
}

std::string displayText(std::string_view s, bool quoted, size_t maxBytes) {
    size_t cut = s.size();
    if (cut > maxBytes) {
        cut = maxBytes;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80)
            --cut; // do not split a UTF-8 sequence
    }
    std::string escaped;
    appendQuoted(escaped, s.substr(0, cut));
    std::string body = escaped.substr(1, escaped.size() - 2);
    if (cut < s.size())
        body += "…";
    return quoted || s.empty() ? "\"" + body + "\"" : body;
}

void writeCheckpoint(std::string& out, const GradientCheckpoint& ckpt) {
    out.reserve(out.size() + estimatedSize(ckpt));
    Sink sink(out);
    PrettyWriter(sink).checkpoint(ckpt);
}

void writeCheckpoint(std::ostream& out, const GradientCheckpoint& ckpt) {
    Sink sink(out);
    PrettyWriter(sink).checkpoint(ckpt);
    sink.flush();
}

void writeGraph(std::string& out, const ComputationGraphStore& graph) {
    Sink sink(out);
    PrettyWriter(sink).graph(graph, 0);
}

} // namespace ckptscope::gradientjson
