#pragma once

#include "ckptscope/io/bytesource.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckptscope {

// What a source has asked of its server so far.
struct HttpTraffic {
    uint64_t requests = 0;
    uint64_t bytes = 0; // body bytes received
};

// How files behind http(s) URLs are read. The defaults are the documented
// behaviour; tests shorten the timeouts.
// An AWS Signature Version 4 for S3 requests (s3:// URLs), made by
// libcurl's own signer. Held in memory only: never in a message, a log or
// the summary cache.
struct AwsSigning {
    std::string region = "us-east-1";
    std::string accessKey, secretKey, sessionToken;
};

struct HttpOptions {
    // "Name: value" headers sent to the URL's own host (CLI --header); like
    // the Hugging Face token, dropped when a redirect leaves that host.
    std::vector<std::string> headers;
    std::chrono::milliseconds connectTimeout{10'000};
    std::chrono::milliseconds stallTimeout{20'000}; // no byte for this long
    // Waits before each retry of a dropped connection.
    std::vector<std::chrono::milliseconds> retryDelays{std::chrono::milliseconds(500),
                                                       std::chrono::milliseconds(1000),
                                                       std::chrono::milliseconds(2000)};
    int maxRedirects = 10;
    // Certificates to trust for https instead of the system's (a team's own
    // CA, or a test server's), a PEM file; empty: the system's.
    std::string caFile;
    // Requests to the URL's own host are signed (an s3:// URL; set by
    // HttpSource from the AWS credentials, never by hand).
    std::optional<AwsSigning> aws;
    // s3:// requests go unsigned (a public bucket), credentials or not: the
    // AWS CLI's --no-sign-request.
    bool noSignRequest = false;
    // What a 401 or 403 tells the user to do ("" : pass a header); an
    // s3:// object's says which AWS credentials to set.
    std::string credentialHint;
    // A server that ignores Range is read whole only up to this size.
    uint64_t wholeFileLimit = uint64_t(64) << 20;
    // Small reads fetch this much at once (a header parsed field by field
    // costs one request, not hundreds).
    uint64_t readAhead = uint64_t(64) << 10;
    // Reads of a tensor's values fetch blocks of this size, clipped to the
    // tensor (ByteSource::readAhead): few requests, nothing past the tensor.
    uint64_t blockBytes = uint64_t(4) << 20;
    // Bytes kept in memory (a scan of a large tensor cycles through it).
    uint64_t cacheBytes = uint64_t(64) << 20;
    // Blocks of a tensor fetched ahead at once, each on a connection of its
    // own (their memory comes on top of cacheBytes).
    size_t prefetchDepth = 2;
};

// The task that opens files (the GUI's open of a model: its index and every
// shard): while an HttpTask lives, each HttpSource constructed on its thread
// polls its cancel flag during transfers (set: ckptscope::Cancelled is
// thrown) and adds its requests and bytes to the task's report. When the
// task ends, its sources (now held by a document) stop asking it.
class HttpTask {
public:
    HttpTask(const std::atomic<bool>* cancel, std::function<void(const HttpTraffic&)> onTraffic);
    ~HttpTask();
    HttpTask(const HttpTask&) = delete;
    HttpTask& operator=(const HttpTask&) = delete;
    struct Shared;

    // The calling thread's task (null when none), and a scope lending it to a
    // worker thread: sources the worker opens report to it too.
    static std::shared_ptr<Shared> current();
    class Lend {
    public:
        explicit Lend(std::shared_ptr<Shared> task);
        ~Lend();
        Lend(const Lend&) = delete;
        Lend& operator=(const Lend&) = delete;

    private:
        std::shared_ptr<Shared> m_outer;
    };

private:
    std::shared_ptr<Shared> m_shared;
    std::shared_ptr<Shared> m_outer; // a task this one nests in
};

// The options every URL opened without explicit ones uses: the CLI's
// --header and the GUI set them once at start-up.
HttpOptions& defaultHttpOptions();

// True for "http://…", "https://…" and "s3://…" (case-insensitive
// scheme): a file read over the network.
bool isUrl(std::string_view path);
// True for "s3://…" (case-insensitive): an object or a prefix in a bucket.
bool isS3Url(std::string_view path);

// Buckets read unsigned whatever credentials are set (public ones: the GUI's
// "public bucket" box), as --no-sign-request does for every bucket. Safe
// from any thread.
void setPublicBucket(const std::string& bucket, bool isPublic);
bool isPublicBucket(const std::string& bucket);

// A file on an HTTP server read by Range requests through libcurl: opening
// asks for the first readAhead bytes (which also gives the size, ETag and
// Last-Modified); later reads fetch only the bytes asked for (small ones
// rounded up to readAhead), kept in a bounded cache. One connection is
// reused. A changed ETag or size raises SourceChangedError, like a local
// file rewritten while open; HTTP trouble is an IoError naming the URL and
// the status ("404 Not Found"). Credentials never appear in a message.
class HttpSource final : public ByteSource {
public:
    // Throws IoError.
    explicit HttpSource(std::string url, HttpOptions options = defaultHttpOptions());
    ~HttpSource() override;
    HttpSource(const HttpSource&) = delete;
    HttpSource& operator=(const HttpSource&) = delete;

    uint64_t size() const override;
    void read(uint64_t offset, void* dst, size_t n) const override;
    void readAhead(uint64_t offset, void* dst, size_t n, uint64_t wantedEnd) const override;
    const std::string& name() const override { return m_url; }

    // The validator a cache keys the file by: the ETag, else Last-Modified,
    // else empty (then only the size identifies the version).
    std::string validator() const;
    // The Last-Modified header of the first answer ("" when none came).
    const std::string& lastModified() const;

    HttpTraffic traffic() const;
    // For an s3:// object, where its credentials, region and endpoint came
    // from ("the credentials of profile \"train\" from ~/.aws/credentials,
    // region eu-west-1"), never a secret; "" for http(s).
    const std::string& access() const { return m_access; }

private:
    struct State;
    // The first request: size, ETag, the first bytes. With `region` (an
    // s3:// object), a bucket's answer that it lives in another region
    // returns that region instead.
    std::optional<std::string> probeFirst(State& s, const std::string* region);
    std::string m_url;
    std::string m_access;
    std::unique_ptr<State> m_state;
};

} // namespace ckptscope
