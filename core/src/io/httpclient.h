#pragma once

#include "ckptscope/io/httpsource.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace ckptscope::http {

// What a server answered, from its status line and headers.
struct Response {
    long status = 0;
    std::string reason; // HTTP/1.x reason phrase; empty under HTTP/2
    std::string etag;
    std::string lastModified;
    std::string contentRange;
    std::string location;
    std::optional<uint64_t> contentLength;
    std::string bucketRegion; // x-amz-bucket-region: where an S3 bucket lives
    // The body of a non-2xx answer (an S3 error's XML), its first 64 KiB.
    std::string errorBody;
};

// "bytes FIRST-LAST/TOTAL" (TOTAL may be "*"); also "bytes */TOTAL" of a 416.
struct ContentRange {
    std::optional<uint64_t> first, last, total;
};
std::optional<ContentRange> parseContentRange(const std::string& value);

// Where a 2xx body goes. accept() sees the response the body belongs to;
// returning false aborts the transfer, and the client then calls raise()
// (outside libcurl's callback, where throwing is not allowed).
class BodySink {
public:
    virtual ~BodySink() = default;
    virtual bool accept(const Response& response, const char* data, size_t n) = 0;
    // Bytes taken so far: a retried range request resumes after them.
    virtual uint64_t received() const = 0;
    // Throws what made accept() refuse (IoError, SourceChangedError).
    [[noreturn]] virtual void raise() const = 0;
};

// One libcurl handle (its connection reused) that GETs a URL: redirects
// followed by hand so that credentials go only to the URL's own host, a
// dropped connection retried with backoff (a range request resumed where it
// broke off), statuses and transport failures turned into IoError messages
// that name the URL and never a header.
class Client {
public:
    // `task`, when set, can cancel transfers (io/httptask.h).
    // `name` is what messages call the file (an s3:// URL); the URL itself
    // when empty.
    Client(std::string url, const HttpOptions& options, std::shared_ptr<HttpTask::Shared> task,
           std::string name = {});
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // GET of bytes [first, first + length) (length 0: the whole file, no
    // Range header). The final response is returned for any status; bodies
    // of non-2xx answers are dropped.
    Response get(uint64_t first, uint64_t length, BodySink& sink);

    // "URL: HTTP 404 Not Found" with a hint for 401/403; an S3 error's code
    // and message from its XML body ("HTTP 404 Not Found (NoSuchKey: …)").
    std::string statusMessage(const Response& response) const;
    uint64_t requests() const { return m_requests.load(std::memory_order_relaxed); }

private:
    struct Handle;
    Response performOnce(const std::string& url, bool sendCredentials, uint64_t first,
                         uint64_t length, BodySink& sink, int& curlCode);
    Response followRedirects(uint64_t first, uint64_t length, BodySink& sink, int& curlCode);

    std::string m_url;
    std::string m_name;
    const HttpOptions& m_options;
    std::shared_ptr<HttpTask::Shared> m_task;
    std::unique_ptr<Handle> m_handle;
    // Where the last redirect chain ended (the Hub sends every request of a
    // file to the same CDN URL), and whether credentials may go there.
    std::string m_effectiveUrl;
    bool m_effectiveSameHost = true;
    // Read by the source's traffic report while this client works on
    // another thread.
    std::atomic<uint64_t> m_requests{0};
};

} // namespace ckptscope::http
