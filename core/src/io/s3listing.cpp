#include "io/s3listing.h"

#include "ckptscope/io/filesource.h"
#include "io/httpclient.h"
#include "io/httptask.h"

#include <set>

namespace ckptscope::s3 {

namespace {

// A listing page is about 300 bytes a key, 1 000 keys a page.
constexpr size_t kPageLimit = size_t(16) << 20;
// Pages of one folder: ten million keys. A server that never stops
// (a token that repeats) is caught earlier.
constexpr size_t kMaxPages = 10'000;

class PageSink final : public http::BodySink {
public:
    explicit PageSink(const std::string& name) : m_name(name) {}
    bool accept(const http::Response&, const char* data, size_t n) override {
        if (n > kPageLimit - m_body.size())
            return false;
        m_body.append(data, n);
        return true;
    }
    uint64_t received() const override { return m_body.size(); }
    [[noreturn]] void raise() const override {
        throw IoError(m_name + ": a listing page of more than " + std::to_string(kPageLimit >> 20) +
                      " MiB");
    }
    const std::string& body() const { return m_body; }

private:
    const std::string& m_name;
    std::string m_body;
};

} // namespace

ListPage listFolder(const Location& location, const HttpOptions& base, const std::string& name) {
    Connection c = connect(location, base);
    const std::string asked = c.access.region;
    const auto task = currentHttpTask();
    ListPage all;
    std::set<std::string> tokens;
    bool moved = false;
    std::string token;
    for (;;) {
        std::vector<std::pair<std::string, std::string>> query = {
            {"delimiter", "/"}, {"list-type", "2"}, {"prefix", location.key}};
        if (!token.empty())
            query.emplace_back("continuation-token", token);
        http::Client client(c.access.bucketUrl + "?" + canonicalQuery(std::move(query)), c.options,
                            task, name);
        PageSink sink(name);
        const http::Response r = client.get(0, 0, sink);
        if (task)
            task->add({client.requests(), sink.received()});
        // A bucket in another region says where it is: asked again there, once.
        if (const auto region =
                redirectRegion(r.status, r.bucketRegion, r.errorBody, c.access.region)) {
            if (moved)
                throw IoError(regionLostMessage(name, asked, c.access.region));
            moved = true;
            c = connect(location, base, *region);
            continue;
        }
        if (r.status != 200)
            throw IoError(client.statusMessage(r) + " (with " + c.access.source + ")");
        ListPage got = parseListPage(sink.body(), name);
        for (Object& o : got.objects)
            all.objects.push_back(std::move(o));
        for (std::string& p : got.prefixes)
            all.prefixes.push_back(std::move(p));
        if (!got.truncated)
            return all;
        if (tokens.size() + 1 >= kMaxPages)
            throw IoError(name + ": more than " + std::to_string(kMaxPages) + " listing pages");
        if (!tokens.insert(got.nextToken).second)
            throw IoError(name + ": the listing repeats a continuation token");
        token = std::move(got.nextToken);
    }
}

} // namespace ckptscope::s3
