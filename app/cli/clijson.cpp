#include "clijson.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/document/document.h"

#include <ostream>

namespace cli {

void printJson(std::ostream& out, const nlohmann::ordered_json& j) {
    out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

std::string utf8Replaced(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    for (size_t i = 0; i < n;) {
        // ASCII runs, nearly all of a JSON text, are copied whole.
        size_t ascii = i;
        while (ascii < n && p[ascii] < 0x80)
            ++ascii;
        out.append(text, i, ascii - i);
        if ((i = ascii) == n)
            break;
        const unsigned char c = p[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        bool ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; ++k)
            ok = (p[i + k] & 0xc0) == 0x80;
        if (ok && len > 1) { // no overlong forms, surrogates or code points past U+10FFFF
            uint32_t cp = c & (0x7f >> len);
            for (size_t k = 1; k < len; ++k)
                cp = cp << 6 | (p[i + k] & 0x3f);
            ok = cp >= (len == 2   ? 0x80u
                        : len == 3 ? 0x800u
                                   : 0x10000u) &&
                 !(cp >= 0xd800 && cp <= 0xdfff) && cp <= 0x10ffff;
        }
        if (ok) {
            out.append(text, i, len);
            i += len;
        } else {
            out += "\xEF\xBF\xBD";
            ++i;
        }
    }
    return out;
}

nlohmann::ordered_json warningsJson(const ckptscope::Document& doc) {
    nlohmann::ordered_json w = nlohmann::ordered_json::array();
    for (const auto& warning : doc.warnings())
        w.push_back(warning.message);
    return w;
}

void writeWarnings(ckptscope::JsonStreamWriter& w, const ckptscope::Document& doc) {
    w.key("warnings");
    w.beginArray();
    for (const auto& warning : doc.warnings())
        w.value(warning.message);
    w.endArray();
}

} // namespace cli
