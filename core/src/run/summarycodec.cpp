#include "run/summarycodec.h"

#include <array>
#include <cstring>

namespace ckptscope {

namespace {

constexpr char kMagic[8] = {'C', 'K', 'S', 'C', 'S', 'U', 'M', '\0'};
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 8;

class Writer {
public:
    void fixed(uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i)
            m_out += char((v >> (8 * i)) & 0xff);
    }
    void varint(uint64_t v) {
        while (v >= 0x80) {
            m_out += char((v & 0x7f) | 0x80);
            v >>= 7;
        }
        m_out += char(v);
    }
    void number(double d) {
        uint64_t bits;
        std::memcpy(&bits, &d, 8);
        fixed(bits, 8);
    }
    void optionalNumber(const std::optional<double>& d) {
        m_out += char(d ? 1 : 0);
        if (d)
            number(*d);
    }
    void text(const std::string& s) {
        varint(s.size());
        m_out += s;
    }
    std::string& out() { return m_out; }

private:
    std::string m_out;
};

struct Malformed {};

class Reader {
public:
    explicit Reader(std::string_view in) : m_in(in) {}
    uint64_t fixed(int bytes) {
        need(size_t(bytes));
        uint64_t v = 0;
        for (int i = 0; i < bytes; ++i)
            v |= uint64_t(uint8_t(m_in[m_pos + size_t(i)])) << (8 * i);
        m_pos += size_t(bytes);
        return v;
    }
    uint64_t varint() {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            need(1);
            const auto b = uint8_t(m_in[m_pos++]);
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80))
                return v;
        }
        throw Malformed{};
    }
    // A count of items each taking at least minBytes: checked before use.
    size_t count(size_t minBytes) {
        const uint64_t n = varint();
        if (n > left() / minBytes)
            throw Malformed{};
        return size_t(n);
    }
    double number() {
        const uint64_t bits = fixed(8);
        double d;
        std::memcpy(&d, &bits, 8);
        return d;
    }
    std::optional<double> optionalNumber() {
        const uint64_t flag = fixed(1);
        if (flag > 1)
            throw Malformed{};
        return flag ? std::optional<double>(number()) : std::nullopt;
    }
    std::string text() {
        const size_t n = count(1);
        std::string s(m_in.substr(m_pos, n));
        m_pos += n;
        return s;
    }
    bool atEnd() const { return m_pos == m_in.size(); }

private:
    size_t left() const { return m_in.size() - m_pos; }
    void need(size_t n) const {
        if (n > left())
            throw Malformed{};
    }
    std::string_view m_in;
    size_t m_pos = 0;
};

void putStats(Writer& w, const TensorStats& s) {
    for (uint64_t v : {s.count, s.finite, s.nan, s.posInf, s.negInf, s.zeros})
        w.varint(v);
    w.optionalNumber(s.min);
    w.optionalNumber(s.max);
    w.optionalNumber(s.mean);
    w.optionalNumber(s.std);
    w.number(s.l2);
    w.number(s.finiteSum);
}

TensorStats getStats(Reader& r) {
    TensorStats s;
    for (uint64_t* v : {&s.count, &s.finite, &s.nan, &s.posInf, &s.negInf, &s.zeros})
        *v = r.varint();
    s.min = r.optionalNumber();
    s.max = r.optionalNumber();
    s.mean = r.optionalNumber();
    s.std = r.optionalNumber();
    s.l2 = r.number();
    s.finiteSum = r.number();
    return s;
}

void putHistogram(Writer& w, const Histogram& h) {
    w.number(h.lo);
    w.number(h.hi);
    w.varint(h.counts.size());
    for (uint64_t c : h.counts)
        w.varint(c);
}

Histogram getHistogram(Reader& r) {
    Histogram h;
    h.lo = r.number();
    h.hi = r.number();
    h.counts.resize(r.count(1));
    for (uint64_t& c : h.counts)
        c = r.varint();
    return h;
}

// The optional figures of an update, in one order for writing and reading.
template <typename U> auto updateFigures(U& u) {
    return std::array{&u.updateRms, &u.updateMax,       &u.updateToWeight, &u.weightRms,
                      &u.expAvgRms, &u.expAvgSqSqrtRms, &u.decayRms};
}

void putUpdate(Writer& w, const ParameterUpdate& u) {
    w.text(u.parameter);
    w.text(u.tensor);
    w.varint(uint64_t(u.rule));
    w.number(u.lr);
    w.optionalNumber(u.step);
    w.varint(u.count);
    for (const std::optional<double>* f : updateFigures(u))
        w.optionalNumber(*f);
    w.text(u.note);
}

ParameterUpdate getUpdate(Reader& r) {
    ParameterUpdate u;
    u.parameter = r.text();
    u.tensor = r.text();
    const uint64_t rule = r.varint();
    if (rule > uint64_t(UpdateRule::Other))
        throw Malformed{};
    u.rule = UpdateRule(rule);
    u.lr = r.number();
    u.step = r.optionalNumber();
    u.count = r.varint();
    for (std::optional<double>* f : updateFigures(u))
        *f = r.optionalNumber();
    u.note = r.text();
    return u;
}

} // namespace

uint64_t fnv1a64(std::string_view bytes) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (char c : bytes) {
        h ^= uint8_t(c);
        h *= 0x100000001b3ull;
    }
    return h;
}

std::string encodeSummaryEntry(const FileIdentity& id, const FileSummary& s) {
    Writer p;
    p.text(id.path);
    for (uint64_t v : {id.device, id.inode, id.size, uint64_t(id.mtimeNs), uint64_t(id.ctimeNs)})
        p.fixed(v, 8);
    p.text(id.validator);
    p.varint(uint64_t(s.format));
    p.varint(s.metadata.size());
    for (const auto& [k, v] : s.metadata) {
        p.text(k);
        p.text(v);
    }
    p.varint(s.tensors.size());
    for (const TensorSummary& t : s.tensors) {
        p.text(t.name);
        putStats(p, t.stats);
        putHistogram(p, t.histogram);
    }
    for (uint64_t v :
         {s.gradientStep, s.graph.nodes, s.graph.edges, s.graph.forwardDone, s.graph.backwardDone})
        p.varint(v);
    p.varint(s.blobs.size());
    for (const BlobSummary& b : s.blobs) {
        p.text(b.name);
        p.varint(b.bytes);
        p.varint(b.stats ? 1 : 0);
        if (b.stats)
            putStats(p, *b.stats);
        putHistogram(p, b.histogram);
    }
    p.varint(s.updates.size());
    for (const ParameterUpdate& u : s.updates)
        putUpdate(p, u);
    p.text(s.pairedWith);

    Writer e;
    e.out().append(kMagic, 8);
    e.fixed(kSummaryEntryVersion, 4);
    e.fixed(0, 4);
    e.fixed(p.out().size(), 8);
    e.fixed(fnv1a64(p.out()), 8);
    e.out() += p.out();
    return std::move(e.out());
}

std::optional<std::pair<FileIdentity, FileSummary>> decodeSummaryEntry(std::string_view bytes) {
    if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, 8) != 0)
        return std::nullopt;
    try {
        Reader h(bytes.substr(8, kHeaderBytes - 8));
        if (h.fixed(4) != kSummaryEntryVersion || h.fixed(4) != 0)
            return std::nullopt;
        const uint64_t length = h.fixed(8);
        const uint64_t checksum = h.fixed(8);
        const std::string_view payload = bytes.substr(kHeaderBytes);
        if (length != payload.size() || fnv1a64(payload) != checksum)
            return std::nullopt;

        Reader r(payload);
        FileIdentity id;
        id.path = r.text();
        id.device = r.fixed(8);
        id.inode = r.fixed(8);
        id.size = r.fixed(8);
        id.mtimeNs = int64_t(r.fixed(8));
        id.ctimeNs = int64_t(r.fixed(8));
        id.validator = r.text();
        FileSummary s;
        // Any format Document knows (formatName names it) plugs in unchanged.
        const uint64_t format = r.varint();
        if (format > 255 || std::strcmp(formatName(Format(format)), "?") == 0)
            return std::nullopt;
        s.format = Format(format);
        s.metadata.resize(r.count(2));
        for (auto& [k, v] : s.metadata) {
            k = r.text();
            v = r.text();
        }
        s.tensors.resize(r.count(8));
        for (TensorSummary& t : s.tensors) {
            t.name = r.text();
            t.stats = getStats(r);
            t.histogram = getHistogram(r);
        }
        for (uint64_t* v : {&s.gradientStep, &s.graph.nodes, &s.graph.edges, &s.graph.forwardDone,
                            &s.graph.backwardDone})
            *v = r.varint();
        s.blobs.resize(r.count(4));
        for (BlobSummary& b : s.blobs) {
            b.name = r.text();
            b.bytes = r.varint();
            const uint64_t hasStats = r.varint();
            if (hasStats > 1)
                return std::nullopt;
            if (hasStats)
                b.stats = getStats(r);
            b.histogram = getHistogram(r);
        }
        s.updates.resize(r.count(8));
        for (ParameterUpdate& u : s.updates)
            u = getUpdate(r);
        s.pairedWith = r.text();
        if (!r.atEnd())
            return std::nullopt;
        return std::make_pair(std::move(id), std::move(s));
    } catch (const Malformed&) {
        return std::nullopt;
    }
}

} // namespace ckptscope
