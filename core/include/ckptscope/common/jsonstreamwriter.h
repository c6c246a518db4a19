#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckptscope {

// Streams JSON text without building a DOM, for outputs too large for one
// (a gradient checkpoint's file, `info --json` and `layout --json` of a
// 100k-node graph). The layout is the one serde_json's to_string_pretty and
// nlohmann's dump(2) share: two-space indent, one element per line,
// `"key": value`, `{}` / `[]` when empty. A container begun Inline stays on
// one line (`{"a": 1, "b": [1, 2]}`), as does everything inside it.
// Strings are written by appendJsonString (bytes that are not UTF-8 become
// U+FFFD as nlohmann's dump replaces them). With an ostream, text goes out in chunks of about 64
// KiB at chunkDone() and flush(), so a large file never sits in memory whole.
class JsonStreamWriter {
public:
    enum class Layout { Pretty, Inline };

    explicit JsonStreamWriter(std::string& out); // appends
    explicit JsonStreamWriter(std::ostream& out);
    JsonStreamWriter(const JsonStreamWriter&) = delete;
    JsonStreamWriter& operator=(const JsonStreamWriter&) = delete;

    // Writes as if already inside `levels` containers: a part spliced into a
    // larger text at that depth (every line after the first indented by two
    // more spaces per level). Call before the first value.
    void nestIn(size_t levels) { m_base = levels; }

    void beginObject(Layout layout = Layout::Pretty) { open('{', layout); }
    void endObject() { close('}'); }
    void beginArray(Layout layout = Layout::Pretty) { open('[', layout); }
    void endArray() { close(']'); }

    void key(std::string_view k);
    void value(std::string_view s);
    void value(const std::string& s) { value(std::string_view(s)); }
    void value(const char* s) { value(std::string_view(s)); }
    void value(uint64_t n);
    void value(int64_t n);
    void value(bool b);
    // The shortest text that reads back as v (std::to_chars: 3, 0.25,
    // 1e+300); null when v is not finite.
    void number(double v);
    // The same, spelled so it reads back as a float, as Python writes one:
    // "1.0" where number() writes "1", "-0.0" for negative zero.
    void floatNumber(double v);
    // As nlohmann's dump() spells a double (its Grisu2 digits, fixed between
    // 1e-4 and 1e15 with ".0" on whole numbers: 100000.0, 1e+16, 1e-05); null
    // when v is not finite. A text streamed with it reads byte for byte as
    // the DOM the same command dumped before (`stats --json`).
    void dumpNumber(double v);
    void null();
    // A value already spelled as JSON, laid out for depth() (its lines
    // after the first indented two spaces a level): a part another writer
    // dumped (cli::writeDom).
    void rawValue(std::string_view json);
    // Containers open around the next value, nestIn's levels included.
    size_t depth() const { return m_base + m_levels.size(); }
    template <typename T> void valueOrNull(const std::optional<T>& v) {
        if (v)
            value(*v);
        else
            null();
    }
    template <typename Strings> void stringArray(const Strings& strings) {
        beginArray();
        for (const auto& s : strings)
            value(std::string_view(s));
        endArray();
    }
    // An array of byte values, one per line: the bulk of a gradient
    // checkpoint's optimizer state, so written in a tight loop.
    void byteArray(const std::vector<uint8_t>& bytes);
    // The same for unsigned integers: a histogram's counts (`stats --json`
    // of 50 000 tensors in 1 000 bins writes 50 million of them), shapes.
    void uintArray(const std::vector<uint64_t>& values);

    // When streaming, hands the text over once a chunk is full; call it
    // between elements of a long list.
    void chunkDone();
    // When streaming, hands over the rest (a failed stream is left for the
    // caller to notice).
    void flush();

private:
    struct Level {
        bool isInline;
        bool empty;
    };
    void element(); // before a value: separator and line break of its container
    void open(char bracket, Layout layout);
    void close(char bracket);
    void indent(size_t levels) { m_s.append((m_base + levels) * 2, ' '); }
    // An array of unsigned integers, one a line, write(v) spelling each; in
    // an Inline container, or empty, as value() writes them.
    template <class T, class Write> void tightArray(const std::vector<T>& values, Write write);

    std::string m_own; // the buffer when streaming
    std::string& m_s;
    std::ostream* m_os = nullptr;
    std::vector<Level> m_levels;
    size_t m_base = 0;    // nestIn
    bool m_keyed = false; // a key was just written: its value follows on the line
};

} // namespace ckptscope
