#pragma once

// The bodies HttpSource's range requests are written into: each checks the
// server answered exactly the range asked of the version first seen.

#include "ckptscope/io/bytesource.h"
#include "io/httpclient.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope::http {

inline std::string changedMessage(const std::string& url) {
    return url + ": file changed on the server while reading — reload";
}

inline std::string noRangesMessage(const std::string& url) {
    return url + ": the server does not support range requests";
}

// A body written into a fixed buffer: the bytes [start, start + capacity) of
// the file. Each response must be a 206 for exactly where the buffer stands,
// of the file version first seen (ETag, size).
class RangeSink final : public BodySink {
public:
    RangeSink(const std::string& url, uint64_t start, uint8_t* dst, uint64_t capacity,
              const std::string& etag, uint64_t size)
        : m_url(url), m_start(start), m_dst(dst), m_capacity(capacity), m_etag(etag), m_size(size) {
    }

    bool accept(const Response& r, const char* data, size_t n) override {
        if (&r != m_checked) {
            if (!checkResponse(r))
                return false;
            m_checked = &r;
        }
        if (n > m_capacity - m_received) {
            m_problem = m_url + ": the server sent more bytes than were asked for";
            return false;
        }
        std::memcpy(m_dst + m_received, data, n);
        m_received += n;
        return true;
    }
    uint64_t received() const override { return m_received; }
    [[noreturn]] void raise() const override {
        if (m_changed)
            throw SourceChangedError(changedMessage(m_url), m_url);
        throw IoError(m_problem);
    }

private:
    bool checkResponse(const Response& r) {
        if (r.status == 200) {
            m_problem = noRangesMessage(m_url);
            return false;
        }
        const auto range = parseContentRange(r.contentRange);
        if (r.status != 206 || !range || !range->first) {
            m_problem = m_url + ": the server answered a range request without a byte range";
            return false;
        }
        if ((!m_etag.empty() && !r.etag.empty() && r.etag != m_etag) ||
            (range->total && *range->total != m_size)) {
            m_changed = true;
            return false;
        }
        if (*range->first != m_start + m_received) {
            m_problem = m_url + ": the server sent bytes from " + std::to_string(*range->first) +
                        " where " + std::to_string(m_start + m_received) + " were asked for";
            return false;
        }
        return true;
    }

    const std::string& m_url;
    uint64_t m_start;
    uint8_t* m_dst;
    uint64_t m_capacity;
    const std::string& m_etag;
    uint64_t m_size;
    uint64_t m_received = 0;
    const Response* m_checked = nullptr;
    bool m_changed = false;
    std::string m_problem;
};

// The first request: a range from 0, or the whole file when the server
// ignores Range and the file is small enough to take whole.
class ProbeSink final : public BodySink {
public:
    ProbeSink(const std::string& url, uint64_t want, uint64_t wholeLimit)
        : m_url(url), m_want(want), m_wholeLimit(wholeLimit) {}

    bool accept(const Response& r, const char* data, size_t n) override {
        m_whole = r.status == 200;
        if (!m_whole && &r != m_checked) {
            // A resumed answer must continue where the last one broke off.
            const auto range = parseContentRange(r.contentRange);
            if (!range || range->first != uint64_t(m_bytes.size())) {
                m_problem = m_url + ": the server answered a range request without the range";
                return false;
            }
            m_checked = &r;
        }
        const uint64_t limit = m_whole ? m_wholeLimit : m_want;
        if (m_whole && r.contentLength && *r.contentLength > m_wholeLimit) {
            m_problem = noRangesMessage(m_url) + " (the file is " +
                        std::to_string(*r.contentLength) + " bytes, more than " +
                        std::to_string(m_wholeLimit >> 20) + " MiB to read whole)";
            return false;
        }
        if (n > limit - m_bytes.size()) {
            m_problem = m_whole ? noRangesMessage(m_url)
                                : m_url + ": the server sent more bytes than were asked for";
            return false;
        }
        m_bytes.insert(m_bytes.end(), data, data + n);
        return true;
    }
    uint64_t received() const override { return m_bytes.size(); }
    [[noreturn]] void raise() const override { throw IoError(m_problem); }

    std::vector<uint8_t> m_bytes;
    bool m_whole = false;

private:
    const std::string& m_url;
    uint64_t m_want;
    uint64_t m_wholeLimit;
    const Response* m_checked = nullptr;
    std::string m_problem;
};

} // namespace ckptscope::http
