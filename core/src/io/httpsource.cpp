#include "ckptscope/io/httpsource.h"

#include "ckptscope/io/filesource.h"
#include "io/httpclient.h"
#include "io/httpsinks.h"
#include "io/httptask.h"
#include "io/s3location.h"

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>

namespace ckptscope {

namespace {

using http::ProbeSink;
using http::RangeSink;

struct Segment {
    std::vector<uint8_t> bytes;
    uint64_t lastUse = 0;
};

thread_local std::shared_ptr<HttpTask::Shared> t_task;

} // namespace

std::shared_ptr<HttpTask::Shared> currentHttpTask() {
    return t_task;
}

std::shared_ptr<HttpTask::Shared> HttpTask::current() {
    return t_task;
}

HttpTask::Lend::Lend(std::shared_ptr<Shared> task) : m_outer(std::move(t_task)) {
    t_task = std::move(task);
}

HttpTask::Lend::~Lend() {
    t_task = std::move(m_outer);
}

HttpTask::HttpTask(const std::atomic<bool>* cancel,
                   std::function<void(const HttpTraffic&)> onTraffic)
    : m_shared(std::make_shared<Shared>()), m_outer(t_task) {
    m_shared->cancel = cancel;
    m_shared->onTraffic = std::move(onTraffic);
    t_task = m_shared;
}

HttpTask::~HttpTask() {
    {
        std::lock_guard lock(m_shared->mutex);
        m_shared->ended = true;
    }
    t_task = m_outer;
}

HttpOptions& defaultHttpOptions() {
    static HttpOptions options;
    return options;
}

namespace {
bool hasScheme(std::string_view path, std::string_view scheme) {
    if (path.size() < scheme.size())
        return false;
    for (size_t i = 0; i < scheme.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(path[i])) != scheme[i])
            return false;
    return true;
}
} // namespace

bool isUrl(std::string_view path) {
    return hasScheme(path, "http://") || hasScheme(path, "https://") || isS3Url(path);
}

bool isS3Url(std::string_view path) {
    return hasScheme(path, "s3://");
}

namespace {
std::mutex g_publicMutex;
std::set<std::string>& publicBuckets() {
    static std::set<std::string> buckets;
    return buckets;
}
} // namespace

void setPublicBucket(const std::string& bucket, bool isPublic) {
    std::lock_guard lock(g_publicMutex);
    if (isPublic)
        publicBuckets().insert(bucket);
    else
        publicBuckets().erase(bucket);
}

bool isPublicBucket(const std::string& bucket) {
    std::lock_guard lock(g_publicMutex);
    return publicBuckets().count(bucket) > 0;
}

struct HttpSource::State {
    HttpOptions options;
    std::unique_ptr<http::Client> client;
    std::mutex mutex;
    uint64_t size = 0;
    std::string etag;
    std::string lastModified;
    bool whole = false; // the server ignores Range; the file is all in `cache`
    std::map<uint64_t, Segment> cache;
    uint64_t cached = 0;
    uint64_t clock = 0;
    uint64_t bytes = 0;

    std::string httpUrl; // what requests go to (an s3:// object's endpoint URL)
    // Fetches [first, first + length) into dst on a connection of its own,
    // with `lock` (on `mutex`) released meanwhile: several threads reading
    // one file (statistics, a tensor each) keep several requests in flight,
    // and one's latency hides behind another's transfer.
    void fetch(std::unique_lock<std::mutex>& lock, const std::string& name, uint64_t first,
               uint8_t* dst, uint64_t length);
    // The range on one client, asked again for what a short answer left.
    void fetchOn(http::Client& c, const std::string& name, uint64_t first, uint8_t* dst,
                 uint64_t length) const;
    std::vector<std::unique_ptr<http::Client>> readers; // made as threads need them
    std::vector<http::Client*> idleReaders;
    // Blocks being fetched for the cache (start → end): a thread that needs
    // bytes of one waits for it instead of asking the server twice.
    std::map<uint64_t, uint64_t> inFlight;
    std::condition_variable fetched;
    // A block marked in flight while it lives (the lock held at both ends),
    // announced to the waiting threads however its fetch ends.
    struct InFlight {
        State& s;
        uint64_t start;
        InFlight(State& state, uint64_t first, uint64_t end) : s(state), start(first) {
            s.inFlight.emplace(first, end);
        }
        ~InFlight() {
            s.inFlight.erase(start);
            s.fetched.notify_all();
        }
        InFlight(const InFlight&) = delete;
        InFlight& operator=(const InFlight&) = delete;
    };
    // The in-flight block holding pos, or the start of the next one (else
    // `limit`), for a new fetch to stop at.
    bool inFlightAt(uint64_t pos) const {
        auto it = inFlight.upper_bound(pos);
        return it != inFlight.begin() && pos < std::prev(it)->second;
    }
    uint64_t nextInFlight(uint64_t pos, uint64_t limit) const {
        const auto it = inFlight.upper_bound(pos);
        return it == inFlight.end() ? limit : std::min(limit, it->first);
    }
    void store(uint64_t offset, std::vector<uint8_t> bytes);
    // A buffer of n bytes, reusing an evicted block's memory: a scan of a
    // large tensor then touches the same pages again instead of faulting in
    // a fresh 4 MiB per block.
    std::vector<uint8_t> buffer(uint64_t n);
    std::vector<std::vector<uint8_t>> spare; // evicted blocks' memory, at most 2
    void report();
    uint64_t requests() const {
        uint64_t n = client->requests();
        for (const auto& c : prefetchClients)
            n += c ? c->requests() : 0;
        for (const auto& c : readers)
            n += c->requests();
        return n;
    }
    std::shared_ptr<HttpTask::Shared> task; // the opening task, while it lasts
    HttpTraffic reported;                   // what the task has heard of

    // The next blocks of the tensor being read, fetched on connections of
    // their own while the caller computes: a scan then costs about the
    // transfer, and several transfers at once beat one (on loopback one
    // connection is bound by one core's receive copy).
    struct Prefetch {
        uint64_t offset = 0;
        uint64_t wantedEnd = 0;
        size_t client = 0; // index in prefetchClients
        std::vector<uint8_t> bytes;
        std::future<bool> done; // false: failed (the block is fetched again)
        bool holds(uint64_t at) const { return at >= offset && at < offset + bytes.size(); }
    };
    std::vector<std::unique_ptr<http::Client>> prefetchClients;
    // In file order; a deque keeps the elements' addresses, which their
    // transfers write through. Declared last: finished before the clients go.
    std::deque<Prefetch> prefetches;

    // Fills the queue up to the prefetch depth with the blocks from `offset`
    // on (none past wantedEnd, none over bytes cached or being fetched).
    void startPrefetch(const std::string& url, uint64_t offset, uint64_t wantedEnd);
    // Takes the prefetches up to the one holding `offset` into the cache
    // (waiting for them); false when none holds it (then a read elsewhere:
    // the queue is dropped).
    bool takePrefetch(const std::string& url, uint64_t offset);
    // Takes the queue's first prefetch into the cache (waiting for it) and
    // queues the next; false, the queue dropped, when it failed.
    bool takeFirstPrefetch(const std::string& url);
    void dropPrefetches();
    // Where bytes from `offset` stop being free to fetch (at most `limit`):
    // the next byte cached, being fetched or prefetched; `offset` itself when
    // it is one of them. Two threads reading one tensor must not fetch a
    // block twice (one's prefetch had fetched the block the other was
    // already fetching: 8 MB sent for a 4 MiB tensor).
    uint64_t freeUntil(uint64_t offset, uint64_t limit) const;
};

void HttpSource::State::startPrefetch(const std::string& url, uint64_t offset, uint64_t wantedEnd) {
    const size_t depth = std::max<size_t>(1, options.prefetchDepth);
    if (prefetchClients.size() < depth)
        prefetchClients.resize(depth);
    if (!prefetches.empty())
        offset = prefetches.back().offset + prefetches.back().bytes.size();
    while (prefetches.size() < depth && offset < std::min(wantedEnd, size)) {
        const uint64_t end =
            freeUntil(offset, std::min({wantedEnd, size, offset + options.blockBytes}));
        if (end == offset)
            break;
        // The client no queued transfer uses (at most depth - 1 are queued).
        size_t free = 0;
        while (std::any_of(prefetches.begin(), prefetches.end(),
                           [&](const Prefetch& p) { return p.client == free; }))
            ++free;
        auto& fetcher = prefetchClients[free];
        if (!fetcher)
            fetcher = std::make_unique<http::Client>(httpUrl, options, task, url);
        Prefetch& q = prefetches.emplace_back();
        q.offset = offset;
        q.wantedEnd = wantedEnd;
        q.client = free;
        q.bytes = buffer(end - offset);
        offset += q.bytes.size();
        q.done = std::async(std::launch::async, [this, &url, &q, c = fetcher.get()] {
            try {
                RangeSink sink(url, q.offset, q.bytes.data(), q.bytes.size(), etag, size);
                const http::Response r = c->get(q.offset, q.bytes.size(), sink);
                return r.status == 206 && sink.received() == q.bytes.size();
            } catch (...) {
                return false; // the reader fetches it again and meets the error itself
            }
        });
    }
}

void HttpSource::State::dropPrefetches() {
    for (Prefetch& p : prefetches)
        if (p.done.valid())
            p.done.wait();
    prefetches.clear();
}

bool HttpSource::State::takePrefetch(const std::string& url, uint64_t offset) {
    const auto holds = [offset](const Prefetch& p) { return p.holds(offset); };
    if (std::none_of(prefetches.begin(), prefetches.end(), holds)) {
        dropPrefetches();
        return false;
    }
    // The queue is in file order: the ones before it first (another
    // thread's reads will want them), then the one that holds it.
    while (!prefetches.empty()) {
        const bool last = holds(prefetches.front());
        if (!takeFirstPrefetch(url))
            return false;
        if (last)
            return true;
    }
    return false;
}

bool HttpSource::State::takeFirstPrefetch(const std::string& url) {
    const bool ok = prefetches.front().done.get();
    Prefetch p = std::move(prefetches.front());
    prefetches.pop_front();
    if (!ok) {
        dropPrefetches();
        return false;
    }
    bytes += p.bytes.size();
    const uint64_t next = p.offset + p.bytes.size();
    store(p.offset, std::move(p.bytes));
    report();
    startPrefetch(url, next, p.wantedEnd);
    return true;
}

uint64_t HttpSource::State::freeUntil(uint64_t offset, uint64_t limit) const {
    if (inFlightAt(offset))
        return offset;
    const auto next = cache.upper_bound(offset);
    if (next != cache.begin()) {
        const auto& [start, seg] = *std::prev(next);
        if (offset < start + seg.bytes.size())
            return offset;
    }
    if (next != cache.end())
        limit = std::min(limit, next->first);
    for (const Prefetch& p : prefetches) {
        if (p.holds(offset))
            return offset;
        if (p.offset > offset)
            limit = std::min(limit, p.offset);
    }
    return nextInFlight(offset, limit);
}

HttpSource::HttpSource(std::string url, HttpOptions options)
    : m_url(std::move(url)), m_state(std::make_unique<State>()) {
    State& s = *m_state;
    s.options = std::move(options);
    s.task = currentHttpTask();
    // s3://BUCKET/KEY: an HTTPS URL of the bucket's endpoint, signed with the
    // credentials the AWS CLI would use; the name stays the s3:// URL.
    std::string httpUrl = m_url;
    std::optional<s3::Access> access;
    const auto location = s3::parseUrl(m_url);
    if (location) // S3's own advice: ranges of 8–16 MiB (a request has a cost and a latency)
        s.options.blockBytes = std::max(s.options.blockBytes, uint64_t(16) << 20);
    const HttpOptions base = s.options;
    const auto connect = [&](const std::string& region) {
        if (location) {
            s3::Connection c = s3::connect(*location, base, region);
            access = std::move(c.access);
            s.options = std::move(c.options);
            httpUrl = access->httpUrl;
        }
        s.httpUrl = httpUrl;
        s.client = std::make_unique<http::Client>(httpUrl, s.options, s.task, m_url);
    };
    connect({});
    try {
        // A bucket in another region than the one asked says where it is:
        // asked again there, once.
        if (const auto region = probeFirst(s, access ? &access->region : nullptr)) {
            const std::string first = access->region;
            connect(*region);
            if (probeFirst(s, &access->region))
                throw IoError(s3::regionLostMessage(m_url, first, *region));
        }
    } catch (const IoError& e) {
        if (!access)
            throw;
        throw IoError(e.what() + (" (with " + access->source + ")"));
    }
    if (access)
        m_access = access->source;
}

std::optional<std::string> HttpSource::probeFirst(State& s, const std::string* region) {
    ProbeSink probe(m_url, s.options.readAhead, s.options.wholeFileLimit);
    const http::Response r = s.client->get(0, s.options.readAhead, probe);
    if (region)
        if (auto to = s3::redirectRegion(r.status, r.bucketRegion, r.errorBody, *region))
            return to;
    s.bytes += probe.received();
    s.report();
    s.etag = r.etag;
    s.lastModified = r.lastModified;
    if (r.status == 416) {
        // Nothing to give from byte 0: an empty file ("bytes */0").
        const auto range = http::parseContentRange(r.contentRange);
        if (!range || range->total != uint64_t(0))
            throw IoError(s.client->statusMessage(r));
        return std::nullopt;
    }
    if (r.status == 200) {
        s.whole = true;
        s.size = probe.m_bytes.size();
    } else if (r.status == 206) {
        // The sink checked that each answer (a resumed one too) continued
        // where the bytes stood.
        const auto range = http::parseContentRange(r.contentRange);
        if (!range || !range->total)
            throw IoError(m_url + ": the server did not say the file's size (Content-Range \"" +
                          r.contentRange + "\")");
        s.size = *range->total;
        if (probe.m_bytes.size() != std::min(s.size, s.options.readAhead))
            throw IoError(m_url + ": the server's first answer was cut short");
    } else {
        throw IoError(s.client->statusMessage(r));
    }
    if (!probe.m_bytes.empty())
        s.store(0, std::move(probe.m_bytes));
    return std::nullopt;
}

HttpSource::~HttpSource() = default;

uint64_t HttpSource::size() const {
    return m_state->size;
}

std::string HttpSource::validator() const {
    return !m_state->etag.empty() ? m_state->etag : m_state->lastModified;
}

const std::string& HttpSource::lastModified() const {
    return m_state->lastModified;
}

HttpTraffic HttpSource::traffic() const {
    std::lock_guard lock(m_state->mutex);
    return {m_state->requests(), m_state->bytes};
}

void HttpSource::State::report() {
    const HttpTraffic now{requests(), bytes};
    if (task)
        task->add(HttpTraffic{now.requests - reported.requests, now.bytes - reported.bytes});
    reported = now;
}

void HttpSource::State::fetch(std::unique_lock<std::mutex>& lock, const std::string& name,
                              uint64_t first, uint8_t* dst, uint64_t length) {
    if (idleReaders.empty()) {
        readers.push_back(std::make_unique<http::Client>(httpUrl, options, task, name));
        idleReaders.push_back(readers.back().get());
    }
    http::Client* c = idleReaders.back();
    idleReaders.pop_back();
    lock.unlock();
    try {
        fetchOn(*c, name, first, dst, length);
    } catch (...) {
        lock.lock();
        idleReaders.push_back(c);
        throw;
    }
    lock.lock();
    idleReaders.push_back(c);
    bytes += length;
    report();
}

void HttpSource::State::fetchOn(http::Client& c, const std::string& name, uint64_t first,
                                uint8_t* dst, uint64_t length) const {
    // A server may answer a range with fewer bytes than asked (HTTP allows
    // it): ask again for the rest.
    uint64_t got = 0;
    while (got < length) {
        RangeSink sink(name, first + got, dst + got, length - got, etag, size);
        const http::Response r = c.get(first + got, length - got, sink);
        if (r.status != 206)
            throw IoError(c.statusMessage(r));
        if (sink.received() == 0)
            throw IoError(name + ": the server sent no bytes for a range");
        got += sink.received();
    }
}

std::vector<uint8_t> HttpSource::State::buffer(uint64_t n) {
    for (auto it = spare.begin(); it != spare.end(); ++it)
        if (it->capacity() >= n) {
            std::vector<uint8_t> b = std::move(*it);
            spare.erase(it);
            b.resize(size_t(n)); // within capacity: no new pages
            return b;
        }
    return std::vector<uint8_t>(size_t(n));
}

void HttpSource::State::store(uint64_t offset, std::vector<uint8_t> bytesIn) {
    // Another thread may have stored a block here while this one fetched.
    if (const auto old = cache.find(offset); old != cache.end())
        cached -= old->second.bytes.size();
    cached += bytesIn.size();
    cache[offset] = Segment{std::move(bytesIn), ++clock};
    // Least recently used first; the segment just stored stays.
    while (cached > options.cacheBytes && !whole && cache.size() > 1) {
        auto oldest = cache.end();
        for (auto it = cache.begin(); it != cache.end(); ++it)
            if (it->second.lastUse != clock &&
                (oldest == cache.end() || it->second.lastUse < oldest->second.lastUse))
                oldest = it;
        cached -= oldest->second.bytes.size();
        if (spare.size() < 2)
            spare.push_back(std::move(oldest->second.bytes));
        cache.erase(oldest);
    }
}

void HttpSource::read(uint64_t offset, void* dst, size_t n) const {
    readAhead(offset, dst, n, 0);
}

void HttpSource::readAhead(uint64_t offset, void* dst, size_t n, uint64_t wantedEnd) const {
    State& s = *m_state;
    std::unique_lock lock(s.mutex);
    if (offset > s.size || n > s.size - offset)
        throw SourceChangedError(m_url + ": read past the end of the file (" +
                                     std::to_string(s.size) + " bytes)",
                                 m_url);
    auto* out = static_cast<uint8_t*>(dst);
    const uint64_t end = offset + n;
    uint64_t pos = offset;
    while (pos < end) {
        auto next = s.cache.upper_bound(pos);
        if (next != s.cache.begin()) {
            auto& [start, seg] = *std::prev(next);
            if (pos < start + seg.bytes.size()) {
                const uint64_t take = std::min(end, start + seg.bytes.size()) - pos;
                std::memcpy(out + (pos - offset), seg.bytes.data() + (pos - start), take);
                seg.lastUse = ++s.clock;
                pos += take;
                continue;
            }
        }
        if (s.inFlightAt(pos)) {
            s.fetched.wait(lock);
            continue;
        }
        // Prefetched (another thread's read may have queued it), else the
        // queue was for reads elsewhere and is dropped.
        if (s.takePrefetch(m_url, pos))
            continue;
        const uint64_t nextStart =
            s.nextInFlight(pos, next == s.cache.end() ? s.size : next->first);
        const uint64_t gapEnd = std::min(end, nextStart);
        if (gapEnd - pos >= s.options.blockBytes) {
            // A bulk read: straight into the caller's buffer.
            s.fetch(lock, m_url, pos, out + (pos - offset), gapEnd - pos);
            pos = gapEnd;
            continue;
        }
        // A tensor's values come in blocks clipped to the tensor; anything
        // else (headers, indexes) in readAhead steps.
        const uint64_t ahead =
            wantedEnd > pos ? std::min(wantedEnd - pos, s.options.blockBytes) : s.options.readAhead;
        const uint64_t fetchEnd = std::min(std::max(gapEnd, pos + ahead), nextStart);
        std::vector<uint8_t> bytes = s.buffer(fetchEnd - pos);
        {
            const State::InFlight marked(s, pos, fetchEnd);
            s.fetch(lock, m_url, pos, bytes.data(), bytes.size());
            s.store(pos, std::move(bytes));
        }
        if (wantedEnd > fetchEnd)
            s.startPrefetch(m_url, fetchEnd, wantedEnd);
    }
}

} // namespace ckptscope
