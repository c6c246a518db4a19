#include "io/httpclient.h"

#include "ckptscope/common/printable.h"
#include "ckptscope/common/taskcontrol.h"
#include "ckptscope/io/filesource.h"
#include "io/curllib.h"
#include "io/httpauth.h"
#include "io/httptask.h"
#include "io/s3xml.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <mutex>
#include <thread>

namespace ckptscope::http {

namespace {

std::string lowerCase(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

std::optional<uint64_t> parseU64(std::string_view s) {
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty())
        return std::nullopt;
    return v;
}

// The reason phrases of the statuses a file server answers with: HTTP/2
// sends none, and a message with only a number helps nobody.
const char* standardReason(long status) {
    switch (status) {
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 410:
        return "Gone";
    case 416:
        return "Range Not Satisfiable";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return nullptr;
    }
}

bool isRedirect(long status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// Transfers worth another try: the connection broke, or a proxy/CDN said
// "try again". A refused connection or a stall is final.
bool isRetryable(CURLcode code, long status) {
    switch (code) {
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return true;
    case CURLE_OK:
        return status == 502 || status == 503 || status == 504;
    default:
        return false;
    }
}

// The URL's host and port ("host:port"), lower case; empty when unparsable.
std::string hostOf(const std::string& url) {
    const CurlLib& lib = curlLib();
    CURLU* u = lib.url();
    std::string out;
    if (lib.url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
        char* host = nullptr;
        char* port = nullptr;
        if (lib.url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
            out = lowerCase(host);
            if (lib.url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK)
                out += std::string(":") + port;
        }
        lib.free(host);
        lib.free(port);
    }
    lib.url_cleanup(u);
    return out;
}

std::string resolve(const std::string& base, const std::string& location) {
    const CurlLib& lib = curlLib();
    CURLU* u = lib.url();
    std::string out;
    char* full = nullptr;
    if (lib.url_set(u, CURLUPART_URL, base.c_str(), 0) == CURLUE_OK &&
        lib.url_set(u, CURLUPART_URL, location.c_str(), 0) == CURLUE_OK &&
        lib.url_get(u, CURLUPART_URL, &full, 0) == CURLUE_OK)
        out = full;
    lib.free(full);
    lib.url_cleanup(u);
    return out;
}

constexpr size_t kErrorBodyLimit = 64 << 10;

struct Transfer {
    Response response;
    BodySink* sink = nullptr;
    bool aborted = false;
    HttpTask::Shared* task = nullptr;
};

int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    const auto* t = static_cast<Transfer*>(user);
    return t->task && t->task->cancelled() ? 1 : 0;
}

size_t onHeader(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    const std::string_view line = trim(std::string_view(data, n));
    if (line.substr(0, 5) == "HTTP/") {
        // A new response (after 100 Continue): start over.
        t->response = Response{};
        const size_t sp = line.find(' ');
        if (sp != std::string_view::npos) {
            std::string_view rest = line.substr(sp + 1);
            const size_t sp2 = rest.find(' ');
            t->response.status = long(parseU64(rest.substr(0, sp2)).value_or(0));
            if (sp2 != std::string_view::npos)
                t->response.reason = std::string(trim(rest.substr(sp2 + 1)));
        }
        return n;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos)
        return n;
    const std::string key = lowerCase(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    Response& r = t->response;
    if (key == "etag")
        r.etag = value;
    else if (key == "last-modified")
        r.lastModified = value;
    else if (key == "content-range")
        r.contentRange = value;
    else if (key == "location")
        r.location = value;
    else if (key == "content-length")
        r.contentLength = parseU64(value);
    else if (key == "x-amz-bucket-region")
        r.bucketRegion = value;
    return n;
}

size_t onBody(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    const long status = t->response.status;
    if (status < 200 || status >= 300) {
        // An error page or a redirect's body: not the file; its start says
        // what went wrong (S3's XML error).
        std::string& body = t->response.errorBody;
        body.append(data, std::min(n, kErrorBodyLimit - std::min(kErrorBodyLimit, body.size())));
        return n;
    }
    if (!t->sink->accept(t->response, data, n)) {
        t->aborted = true;
        return 0;
    }
    return n;
}

} // namespace

std::optional<ContentRange> parseContentRange(const std::string& value) {
    std::string_view v = trim(value);
    if (v.substr(0, 6) != "bytes ")
        return std::nullopt;
    v = trim(v.substr(6));
    const size_t slash = v.find('/');
    if (slash == std::string_view::npos)
        return std::nullopt;
    ContentRange out;
    const std::string_view range = v.substr(0, slash);
    const std::string_view total = v.substr(slash + 1);
    if (total != "*") {
        out.total = parseU64(total);
        if (!out.total)
            return std::nullopt;
    }
    if (range != "*") {
        const size_t dash = range.find('-');
        if (dash == std::string_view::npos)
            return std::nullopt;
        out.first = parseU64(range.substr(0, dash));
        out.last = parseU64(range.substr(dash + 1));
        if (!out.first || !out.last || *out.last < *out.first)
            return std::nullopt;
    }
    return out;
}

struct Client::Handle {
    CURL* curl = nullptr;
    char error[CURL_ERROR_SIZE] = {};
    ~Handle() {
        if (curl)
            curlLib().easy_cleanup(curl);
    }
};

Client::Client(std::string url, const HttpOptions& options, std::shared_ptr<HttpTask::Shared> task,
               std::string name)
    : m_url(std::move(url)), m_name(name.empty() ? m_url : std::move(name)), m_options(options),
      m_task(std::move(task)), m_handle(std::make_unique<Handle>()), m_effectiveUrl(m_url) {
    try {
        m_handle->curl = curlLib().easy_init();
    } catch (const IoError& e) {
        throw IoError(m_name + ": " + e.what());
    }
    if (!m_handle->curl)
        throw IoError(m_name + ": cannot start an HTTP client (libcurl)");
}

Client::~Client() = default;

Response Client::performOnce(const std::string& url, bool sendCredentials, uint64_t first,
                             uint64_t length, BodySink& sink, int& curlCode) {
    const CurlLib& lib = curlLib();
    CURL* c = m_handle->curl;
    lib.easy_reset(c);
    // Checked: a libcurl that ignored it would follow a redirect anywhere.
    if (lib.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK)
        throw IoError(m_name + ": libcurl cannot keep requests to http and https");
    Transfer transfer;
    transfer.sink = &sink;
    transfer.task = m_task.get();
    curl_slist* headers = nullptr;
    std::string range;
    if (length > 0) {
        range = "Range: bytes=" + std::to_string(first) + "-" + std::to_string(first + length - 1);
        headers = lib.slist_append(headers, range.c_str());
    }
    // Byte ranges address the stored bytes: no compression.
    headers = lib.slist_append(headers, "Accept-Encoding: identity");
    std::string bearer, securityToken, sigv4;
    if (sendCredentials) {
        for (const std::string& h : m_options.headers)
            headers = lib.slist_append(headers, h.c_str());
        if (const auto& aws = m_options.aws) {
            // S3 signs a read without hashing its (empty) body; libcurl makes
            // the signature (Authorization, x-amz-date) from these.
            headers = lib.slist_append(headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
            if (!aws->sessionToken.empty()) {
                securityToken = "x-amz-security-token: " + aws->sessionToken;
                headers = lib.slist_append(headers, securityToken.c_str());
            }
            sigv4 = "aws:amz:" + aws->region + ":s3";
            lib.easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4.c_str());
            lib.easy_setopt(c, CURLOPT_USERNAME, aws->accessKey.c_str());
            lib.easy_setopt(c, CURLOPT_PASSWORD, aws->secretKey.c_str());
        }
        if (isHuggingFaceHost(hostOf(url))) {
            const std::string token = huggingFaceToken();
            if (!token.empty()) {
                bearer = "Authorization: Bearer " + token;
                headers = lib.slist_append(headers, bearer.c_str());
            }
        }
    }
    const long stallSeconds =
        std::max<long>(1, long((m_options.stallTimeout.count() + 999) / 1000));
    lib.easy_setopt(c, CURLOPT_URL, url.c_str());
    lib.easy_setopt(c, CURLOPT_HTTPGET, 1L);
    lib.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    lib.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    lib.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    lib.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, long(m_options.connectTimeout.count()));
    lib.easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    lib.easy_setopt(c, CURLOPT_LOW_SPEED_TIME, stallSeconds);
    // HTTP/2 where a TLS server offers it (ALPN), else HTTP/1.1.
    lib.easy_setopt(c, CURLOPT_HTTP_VERSION, long(CURL_HTTP_VERSION_2TLS));
    if (!m_options.caFile.empty())
        lib.easy_setopt(c, CURLOPT_CAINFO, m_options.caFile.c_str());
    lib.easy_setopt(c, CURLOPT_USERAGENT, "ckptscope");
    // A 512 KiB receive buffer (libcurl's default is 16 KiB): a 4 MiB block
    // in 8 reads and callbacks instead of 256 (a third less system time).
    lib.easy_setopt(c, CURLOPT_BUFFERSIZE, 512L << 10);
    lib.easy_setopt(c, CURLOPT_ERRORBUFFER, m_handle->error);
    lib.easy_setopt(c, CURLOPT_HEADERFUNCTION, &onHeader);
    lib.easy_setopt(c, CURLOPT_HEADERDATA, &transfer);
    lib.easy_setopt(c, CURLOPT_WRITEFUNCTION, &onBody);
    lib.easy_setopt(c, CURLOPT_WRITEDATA, &transfer);
    lib.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    lib.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &onProgress);
    lib.easy_setopt(c, CURLOPT_XFERINFODATA, &transfer);
    m_handle->error[0] = '\0';
    ++m_requests;
    const CURLcode code = lib.easy_perform(c);
    lib.slist_free_all(headers);
    // The token must not outlive the request in our memory either.
    std::fill(bearer.begin(), bearer.end(), '\0');
    if (code == CURLE_ABORTED_BY_CALLBACK)
        throw Cancelled{};
    if (transfer.aborted)
        sink.raise();
    curlCode = int(code);
    return transfer.response;
}

Response Client::followRedirects(uint64_t first, uint64_t length, BodySink& sink, int& curlCode) {
    const std::string home = hostOf(m_url);
    std::string url = m_effectiveUrl;
    bool sameHost = m_effectiveSameHost;
    for (int hop = 0;; ++hop) {
        Response r = performOnce(url, sameHost, first, length, sink, curlCode);
        if (curlCode != CURLE_OK || !isRedirect(r.status) || r.location.empty()) {
            if (curlCode == CURLE_OK && r.status >= 200 && r.status < 300) {
                m_effectiveUrl = url;
                m_effectiveSameHost = sameHost;
            }
            return r;
        }
        if (hop >= m_options.maxRedirects)
            throw IoError(m_name + ": more than " + std::to_string(m_options.maxRedirects) +
                          " redirects");
        const std::string next = resolve(url, r.location);
        if (next.empty())
            throw IoError(m_name + ": the server redirected to an invalid address");
        // Once a redirect leaves the host, credentials stay behind for good.
        sameHost = sameHost && hostOf(next) == home;
        url = next;
    }
}

Response Client::get(uint64_t first, uint64_t length, BodySink& sink) {
    for (size_t attempt = 0;; ++attempt) {
        const uint64_t done = sink.received();
        if (length > 0 && done >= length)
            throw IoError(m_name + ": internal error: range already complete");
        int code = CURLE_OK;
        Response r = length > 0 ? followRedirects(first + done, length - done, sink, code)
                                : followRedirects(first, 0, sink, code);
        if (code == CURLE_OK && !isRetryable(CURLE_OK, r.status))
            return r;
        if (attempt >= m_options.retryDelays.size() || !isRetryable(CURLcode(code), r.status)) {
            if (code == CURLE_OK)
                return r; // a 5xx after the last retry: the caller names it
            std::string what =
                m_handle->error[0] ? m_handle->error : curlLib().easy_strerror(CURLcode(code));
            if (code == CURLE_OPERATION_TIMEDOUT)
                what = "no data for " +
                       std::to_string((m_options.stallTimeout.count() + 999) / 1000) +
                       " s (timed out)";
            if (isRetryable(CURLcode(code), r.status))
                what = "connection lost " + std::to_string(attempt + 1) + " times (" + what + ")";
            throw IoError(m_name + ": " + what);
        }
        // A whole-file read restarts from zero; a range resumes.
        if (length == 0 && sink.received() > 0)
            throw IoError(m_name + ": connection lost while reading the whole file");
        std::this_thread::sleep_for(m_options.retryDelays[attempt]);
        if (m_task && m_task->cancelled())
            throw Cancelled{};
    }
}

std::string Client::statusMessage(const Response& r) const {
    const char* standard = standardReason(r.status);
    std::string text = m_name + ": HTTP " + std::to_string(r.status);
    if (standard)
        text += std::string(" ") + standard;
    else if (!r.reason.empty())
        text += " " + printable(r.reason);
    if (const auto s3 = s3::parseError(r.errorBody)) {
        text += " (" + printable(s3->code);
        if (!s3->message.empty())
            text += ": " + printable(s3->message);
        text += ")";
    }
    if (r.status == 401 || r.status == 403) {
        if (!m_options.credentialHint.empty())
            text += ": " + m_options.credentialHint;
        else if (isHuggingFaceHost(hostOf(m_url)))
            text += huggingFaceToken().empty() ? ": set HF_TOKEN" : ": the token was refused";
        else
            text += ": pass credentials with --header 'Authorization: …'";
    }
    return text;
}

} // namespace ckptscope::http
