#include "io/s3xml.h"

#include "ckptscope/io/filesource.h"

#include <expat.h>

#include <charconv>
#include <functional>
#include <limits>

namespace ckptscope::s3 {

namespace {

// Calls `onEnd(path, text)` as each element closes, path being the element
// names from the root joined by '/'. Returns "" or what is wrong with the
// document. A DOCTYPE stops the parse: S3 never sends one, and entities are
// how an XML bomb works.
class XmlWalker {
public:
    using OnEnd = std::function<void(const std::string& path, const std::string& text)>;

    std::string walk(std::string_view xml, OnEnd onEnd) {
        if (xml.size() > size_t(std::numeric_limits<int>::max()))
            return "larger than 2 GiB";
        m_onEnd = std::move(onEnd);
        XML_Parser p = XML_ParserCreate("UTF-8");
        if (!p)
            return "cannot start the XML parser";
        m_parser = p;
        XML_SetUserData(p, this);
        XML_SetElementHandler(p, &XmlWalker::start, &XmlWalker::end);
        XML_SetCharacterDataHandler(p, &XmlWalker::text);
        XML_SetStartDoctypeDeclHandler(p, &XmlWalker::doctype);
        std::string problem;
        if (XML_Parse(p, xml.data(), int(xml.size()), XML_TRUE) == XML_STATUS_ERROR)
            problem = m_doctype ? std::string("it declares a DOCTYPE")
                                : std::string(XML_ErrorString(XML_GetErrorCode(p))) + " at line " +
                                      std::to_string(XML_GetCurrentLineNumber(p));
        XML_ParserFree(p);
        return problem;
    }

private:
    static void start(void* self, const XML_Char* name, const XML_Char**) {
        auto* w = static_cast<XmlWalker*>(self);
        w->m_starts.push_back(w->m_path.size());
        w->m_path += (w->m_path.empty() ? "" : "/") + std::string(name);
        w->m_text.clear();
    }
    static void end(void* self, const XML_Char*) {
        auto* w = static_cast<XmlWalker*>(self);
        w->m_onEnd(w->m_path, w->m_text);
        w->m_path.resize(w->m_starts.back());
        w->m_starts.pop_back();
        w->m_text.clear();
    }
    static void text(void* self, const XML_Char* s, int n) {
        static_cast<XmlWalker*>(self)->m_text.append(s, size_t(n));
    }
    static void doctype(void* self, const XML_Char*, const XML_Char*, const XML_Char*, int) {
        auto* w = static_cast<XmlWalker*>(self);
        w->m_doctype = true;
        XML_StopParser(w->m_parser, XML_FALSE);
    }

    OnEnd m_onEnd;
    XML_Parser m_parser = nullptr;
    std::string m_path, m_text;
    std::vector<size_t> m_starts;
    bool m_doctype = false;
};

} // namespace

ListPage parseListPage(std::string_view xml, const std::string& what) {
    ListPage page;
    Object object;
    std::string problem;
    bool root = false;
    const std::string error =
        XmlWalker().walk(xml, [&](const std::string& path, const std::string& text) {
            if (path == "ListBucketResult") {
                root = true;
            } else if (path == "ListBucketResult/Contents/Key") {
                object.key = text;
            } else if (path == "ListBucketResult/Contents/Size") {
                const auto [end, ec] =
                    std::from_chars(text.data(), text.data() + text.size(), object.size);
                if (ec != std::errc() || end != text.data() + text.size() || text.empty())
                    problem = "the size of a key is \"" + text + "\", not a byte count";
            } else if (path == "ListBucketResult/Contents/ETag") {
                object.etag = text;
            } else if (path == "ListBucketResult/Contents") {
                page.objects.push_back(std::move(object));
                object = Object{};
            } else if (path == "ListBucketResult/CommonPrefixes/Prefix") {
                page.prefixes.push_back(text);
            } else if (path == "ListBucketResult/IsTruncated") {
                page.truncated = text == "true";
            } else if (path == "ListBucketResult/NextContinuationToken") {
                page.nextToken = text;
            }
        });
    if (!error.empty())
        throw IoError(what + ": the listing is not S3 XML: " + error);
    if (!root)
        throw IoError(what + ": the listing is not S3 XML: no ListBucketResult");
    if (!problem.empty())
        throw IoError(what + ": " + problem);
    if (page.truncated && page.nextToken.empty())
        throw IoError(what + ": the listing is cut short (IsTruncated) without a "
                             "NextContinuationToken");
    return page;
}

std::optional<ErrorReply> parseError(std::string_view xml) {
    ErrorReply reply;
    bool root = false;
    const std::string error =
        XmlWalker().walk(xml, [&](const std::string& path, const std::string& text) {
            if (path == "Error")
                root = true;
            else if (path == "Error/Code")
                reply.code = text;
            else if (path == "Error/Message")
                reply.message = text;
            else if (path == "Error/Region")
                reply.region = text;
        });
    if (!error.empty() || !root || reply.code.empty())
        return std::nullopt;
    return reply;
}

} // namespace ckptscope::s3
