#include "ckptscope/common/jsonstreamwriter.h"

#include "ckptscope/common/jsonstring.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <ostream>

namespace ckptscope {

namespace {

// Small enough that the text's buffer stays in cache and its pages are few
// (each new page costs a fault: 280 KB of `info --json` was 70 of them).
constexpr size_t kChunk = size_t(64) << 10;

} // namespace

JsonStreamWriter::JsonStreamWriter(std::string& out) : m_s(out) {}

JsonStreamWriter::JsonStreamWriter(std::ostream& out) : m_s(m_own), m_os(&out) {
    m_own.reserve(kChunk + 4096);
}

void JsonStreamWriter::element() {
    if (m_keyed) {
        m_keyed = false;
        return;
    }
    if (m_levels.empty())
        return;
    Level& level = m_levels.back();
    if (level.isInline) {
        if (!level.empty)
            m_s += ", ";
    } else {
        m_s += level.empty ? "\n" : ",\n";
        indent(m_levels.size());
    }
    level.empty = false;
}

void JsonStreamWriter::open(char bracket, Layout layout) {
    element();
    m_s += bracket;
    const bool inInline = !m_levels.empty() && m_levels.back().isInline;
    m_levels.push_back({inInline || layout == Layout::Inline, true});
}

void JsonStreamWriter::close(char bracket) {
    const Level level = m_levels.back();
    m_levels.pop_back();
    if (!level.isInline && !level.empty) {
        m_s += '\n';
        indent(m_levels.size());
    }
    m_s += bracket;
}

void JsonStreamWriter::key(std::string_view k) {
    element();
    appendJsonString(m_s, k);
    m_s += ": ";
    m_keyed = true;
}

void JsonStreamWriter::value(std::string_view s) {
    element();
    appendJsonString(m_s, s);
}

void JsonStreamWriter::value(uint64_t n) {
    element();
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, n);
    m_s.append(buf, r.ptr);
}

void JsonStreamWriter::value(int64_t n) {
    element();
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, n);
    m_s.append(buf, r.ptr);
}

void JsonStreamWriter::value(bool b) {
    element();
    m_s += b ? "true" : "false";
}

void JsonStreamWriter::number(double v) {
    if (!std::isfinite(v))
        return null();
    element();
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    m_s.append(buf, r.ptr);
}

void JsonStreamWriter::floatNumber(double v) {
    const size_t start = m_s.size();
    number(v);
    // number() wrote "1" or "-0": a decimal point keeps it a float.
    if (std::isfinite(v) && m_s.find_first_of(".e", start) == std::string::npos)
        m_s += ".0";
}

void JsonStreamWriter::dumpNumber(double v) {
    if (!std::isfinite(v))
        return null();
    element();
    char buf[64]; // nlohmann's serializer gives it 64 bytes too
    // (nlohmann's own spelling, which its dump() uses: not public API, but
    // the one way to match a DOM's text; Debian 12 ships 3.11.2.)
    const char* const end = nlohmann::detail::to_chars(buf, buf + sizeof buf, v);
    m_s.append(buf, size_t(end - buf));
}

void JsonStreamWriter::null() {
    element();
    m_s += "null";
}

void JsonStreamWriter::rawValue(std::string_view json) {
    element();
    m_s += json;
}

template <class T, class Write>
void JsonStreamWriter::tightArray(const std::vector<T>& values, Write write) {
    if (values.empty() || (!m_levels.empty() && m_levels.back().isInline)) {
        beginArray();
        for (const T v : values)
            value(uint64_t(v));
        endArray();
        return;
    }
    element();
    const std::string separator = ",\n" + std::string((m_base + m_levels.size() + 1) * 2, ' ');
    m_s += '[';
    m_s.append(separator, 1); // the first element has no comma
    for (size_t i = 0; i < values.size(); ++i) {
        if (i != 0)
            m_s += separator;
        write(values[i]);
        if ((i & 0xffff) == 0xffff)
            chunkDone();
    }
    m_s += '\n';
    indent(m_levels.size());
    m_s += ']';
    chunkDone();
}

void JsonStreamWriter::byteArray(const std::vector<uint8_t>& bytes) {
    tightArray(bytes, [this](unsigned b) {
        if (b >= 100)
            m_s += char('0' + b / 100);
        if (b >= 10)
            m_s += char('0' + b / 10 % 10);
        m_s += char('0' + b % 10);
    });
}

void JsonStreamWriter::uintArray(const std::vector<uint64_t>& values) {
    tightArray(values, [this](uint64_t v) {
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        m_s.append(buf, size_t(r.ptr - buf));
    });
}

void JsonStreamWriter::chunkDone() {
    if (m_os && m_s.size() >= kChunk)
        flush();
}

void JsonStreamWriter::flush() {
    if (m_os && m_os->good())
        m_os->write(m_s.data(), std::streamsize(m_s.size()));
    if (m_os)
        m_s.clear();
}

} // namespace ckptscope
