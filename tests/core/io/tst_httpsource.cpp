// Files read over HTTP by range requests: against nginx (what people serve
// files with) for what a well-behaved server gives, and against our own
// fault server for drops, stalls, missing Range support, auth and changes.
#include "ckptscope/common/taskcontrol.h"
#include "ckptscope/document/document.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/httpsource.h"
#include "ckptscope/stats/documentstats.h"
#include "httpservers.h"
#include "safetensorsbuilder.h"
#include "shardedfixture.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <set>
#include <thread>

using namespace ckptscope;
using namespace testsupport;
using namespace std::chrono_literals;

namespace {

// Short waits so the fault cases end in a second, not in the production 20 s.
HttpOptions quickOptions() {
    HttpOptions o;
    o.stallTimeout = 1000ms;
    o.connectTimeout = 2000ms;
    o.retryDelays = {10ms, 20ms, 40ms};
    return o;
}

std::vector<float> ramp(size_t n, float scale) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = float(i % 1000) * scale - 3.0f;
    return v;
}

// A model with a small tensor and a 4 MiB one, as bytes.
std::string twoTensorModel() {
    return stFile({{"small", "F32", {4}, leBytes(ramp(4, 1.0f))},
                   {"big", "F32", {1024, 1024}, leBytes(ramp(1024 * 1024, 0.5f))}});
}

class EnvVar {
public:
    EnvVar(const char* name, const std::string& value) : m_name(name) {
        if (const char* old = std::getenv(name))
            m_old = old;
        ::setenv(name, value.c_str(), 1);
    }
    ~EnvVar() {
        if (m_old)
            ::setenv(m_name, m_old->c_str(), 1);
        else
            ::unsetenv(m_name);
    }

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

template <typename F> std::string errorOf(F&& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

class TestHttpSource : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void opensByHeaderAndReadsOnlyWhatIsAsked();
    void valuesMatchTheLocalFile();
    void missingFileNamesTheStatus();
    void droppedConnectionIsResumed();
    void alwaysDroppingServerEndsInAnError();
    void serverWithoutRangesIsReadWholeOnlyWhenSmall();
    void stalledServerTimesOut();
    void changedEtagIsAChangedFile();
    void tokenGoesOnlyToTheHubHost();
    void tokenStaysBehindWhenARedirectLeavesTheHost();
    void userHeadersGoToTheUrlsHost();
    void taskHearsTrafficAndCancels();
    void shardedModelOpensByItsIndexUrl();
    void blocksPrefetchedOnSeveralConnections();
    void prefetchLeavesWhatAnotherReadIsFetching();
    void readInsideAPrefetchTakesIt();
    void http2OverTlsWhereOffered();

private:
    QTemporaryDir m_dir;
    std::unique_ptr<NginxServer> m_nginx;
    std::string m_model;
};

void TestHttpSource::initTestCase() {
    QVERIFY(m_dir.isValid());
    m_model = twoTensorModel();
    writeFile(m_dir.filePath(QStringLiteral("model.safetensors")), m_model);
    m_nginx = std::make_unique<NginxServer>(m_dir.path());
    if (!m_nginx->start())
        QFAIL(qPrintable(m_nginx->why()));
}

void TestHttpSource::opensByHeaderAndReadsOnlyWhatIsAsked() {
    m_nginx->clearLog();
    const auto doc = Document::open(m_nginx->url("model.safetensors"));
    QCOMPARE(doc->tensors().size(), size_t(2));
    QCOMPARE(doc->fileSize(), uint64_t(m_model.size()));
    // The header is far below 64 KiB: one request, at most 64 KiB sent.
    auto log = m_nginx->requests();
    QCOMPARE(log.size(), size_t(1));
    QCOMPARE(log[0].status, 206);
    QVERIFY(log[0].bodyBytes <= (64u << 10));

    // Statistics of the 4 MiB tensor fetch that tensor (and at most the
    // read-ahead beyond it), not the whole file again.
    m_nginx->clearLog();
    const size_t big = doc->tensors()[0].name == "big" ? 0 : 1;
    const StatsResult stats = computeTensorStats(*doc, big, {});
    QCOMPARE(stats.stats.count, uint64_t(1024 * 1024));
    uint64_t sent = 0;
    for (const auto& l : m_nginx->requests()) {
        QCOMPARE(l.status, 206);
        sent += l.bodyBytes;
    }
    QVERIFY2(sent <= (5u << 20), std::to_string(sent).c_str());
    QVERIFY(sent >= (4u << 20) - (64u << 10));
}

void TestHttpSource::valuesMatchTheLocalFile() {
    const auto remote = Document::open(m_nginx->url("model.safetensors"));
    const auto local = Document::open(str(m_dir.filePath(QStringLiteral("model.safetensors"))));
    for (size_t i = 0; i < local->tensors().size(); ++i) {
        const uint64_t n = *local->tensors()[i].elementCount;
        std::vector<float> a(n), b(n);
        local->readValues(i, 0, n, a.data());
        remote->readValues(i, 0, n, b.data());
        QVERIFY(std::memcmp(a.data(), b.data(), n * sizeof(float)) == 0);
        QVERIFY(sameStats(computeTensorStats(*local, i, {}), computeTensorStats(*remote, i, {})));
    }
}

void TestHttpSource::missingFileNamesTheStatus() {
    const std::string url = m_nginx->url("absent.safetensors");
    const std::string error = errorOf([&] { Document::open(url); });
    QVERIFY2(has(error, "404 Not Found"), error.c_str());
    QVERIFY(has(error, url));
}

void TestHttpSource::droppedConnectionIsResumed() {
    FaultServer server(m_model, "secret");
    HttpSource source(server.url("/drop-once"), quickOptions());
    QCOMPARE(source.size(), uint64_t(m_model.size()));
    std::string bytes(m_model.size(), '\0');
    source.read(0, bytes.data(), bytes.size());
    QVERIFY(bytes == m_model);
    // The cut answer, then one resumed where it broke off (and the rest).
    const auto requests = server.requests();
    QVERIFY(requests.size() >= 2);
    QVERIFY(requests[1].headers.at("range") != requests[0].headers.at("range"));
}

void TestHttpSource::alwaysDroppingServerEndsInAnError() {
    FaultServer server(m_model, "secret");
    const std::string error =
        errorOf([&] { HttpSource(server.url("/always-drop"), quickOptions()); });
    QVERIFY2(has(error, "connection lost 4 times"), error.c_str());
    QCOMPARE(server.requests().size(), size_t(4)); // first try and 3 retries
}

void TestHttpSource::serverWithoutRangesIsReadWholeOnlyWhenSmall() {
    FaultServer server(m_model, "secret");
    {
        HttpSource source(server.url("/no-range"), quickOptions());
        std::string bytes(m_model.size(), '\0');
        source.read(0, bytes.data(), bytes.size());
        QVERIFY(bytes == m_model);
        QCOMPARE(server.requests().size(), size_t(1));
    }
    HttpOptions small = quickOptions();
    small.wholeFileLimit = 1 << 20; // the model is over 4 MiB
    const std::string error = errorOf([&] { HttpSource(server.url("/no-range"), small); });
    QVERIFY2(has(error, "does not support range requests"), error.c_str());
}

void TestHttpSource::stalledServerTimesOut() {
    FaultServer server(m_model, "secret");
    const std::string error = errorOf([&] { HttpSource(server.url("/slow"), quickOptions()); });
    QVERIFY2(has(error, "no data for 1 s"), error.c_str());
}

void TestHttpSource::changedEtagIsAChangedFile() {
    FaultServer server(m_model, "secret");
    HttpSource source(server.url("/etag-changes"), quickOptions());
    std::vector<char> tail(1000);
    bool changed = false;
    try {
        source.read(m_model.size() - tail.size(), tail.data(), tail.size());
    } catch (const SourceChangedError& e) {
        changed = has(e.what(), "changed on the server while reading");
    }
    QVERIFY(changed);
}

void TestHttpSource::tokenGoesOnlyToTheHubHost() {
    FaultServer server(m_model, "secret");
    EnvVar token("HF_TOKEN", "secret");
    {
        // Not the Hub: no token, and the 401 says how to pass credentials.
        EnvVar endpoint("HF_ENDPOINT", "https://hub.example");
        const std::string error = errorOf([&] { HttpSource(server.url("/auth"), quickOptions()); });
        QVERIFY2(has(error, "401 Unauthorized"), error.c_str());
        QVERIFY(!has(error, "secret"));
        QVERIFY(server.requests().back().headers.count("authorization") == 0);
    }
    // HF_ENDPOINT names this server: the token goes with every request.
    EnvVar endpoint("HF_ENDPOINT", "http://127.0.0.1:" + std::to_string(server.port()));
    HttpSource source(server.url("/auth"), quickOptions());
    QCOMPARE(source.size(), uint64_t(m_model.size()));
    QCOMPARE(server.requests().back().headers.at("authorization"), std::string("Bearer secret"));
}

void TestHttpSource::tokenStaysBehindWhenARedirectLeavesTheHost() {
    FaultServer server(m_model, "secret");
    EnvVar token("HF_TOKEN", "secret");
    EnvVar endpoint("HF_ENDPOINT", "http://127.0.0.1:" + std::to_string(server.port()));
    const std::string error =
        errorOf([&] { HttpSource(server.url("/redirect-away"), quickOptions()); });
    // Redirected to "localhost": another host name, so no token went there.
    const auto requests = server.requests();
    QCOMPARE(requests.size(), size_t(2));
    QCOMPARE(requests[0].headers.at("authorization"), std::string("Bearer secret"));
    QCOMPARE(requests[1].headers.count("authorization"), size_t(0));
    QVERIFY2(has(error, "401 Unauthorized"), error.c_str());
    QVERIFY(!has(error, "secret"));
}

void TestHttpSource::userHeadersGoToTheUrlsHost() {
    FaultServer server(m_model, "secret");
    HttpOptions o = quickOptions();
    o.headers = {"Authorization: Bearer secret"};
    HttpSource source(server.url("/auth"), o);
    QCOMPARE(source.size(), uint64_t(m_model.size()));
    QVERIFY(!source.validator().empty());
}

void TestHttpSource::taskHearsTrafficAndCancels() {
    HttpTraffic heard;
    {
        HttpTask task(nullptr, [&](const HttpTraffic& t) { heard = t; });
        const auto doc = Document::open(m_nginx->url("model.safetensors"));
        QCOMPARE(heard.requests, uint64_t(1));
        QCOMPARE(heard.bytes, uint64_t(64u << 10));
    }
    // A server that never sends: Cancel ends the open long before the stall
    // timeout would.
    FaultServer server(m_model, "secret");
    HttpOptions patient = quickOptions();
    patient.stallTimeout = 30000ms;
    std::atomic<bool> cancel{false};
    std::thread canceller([&] {
        std::this_thread::sleep_for(200ms);
        cancel = true;
    });
    const auto start = std::chrono::steady_clock::now();
    bool cancelled = false;
    try {
        HttpTask task(&cancel, {});
        HttpSource source(server.url("/slow"), patient);
    } catch (const Cancelled&) {
        cancelled = true;
    }
    canceller.join();
    QVERIFY(cancelled);
    QVERIFY(std::chrono::steady_clock::now() - start < 10s);
    // Once the task is over, its flag no longer reaches new transfers.
    HttpSource later(server.url("/file"), quickOptions());
    QCOMPARE(later.size(), uint64_t(m_model.size()));
}

void TestHttpSource::shardedModelOpensByItsIndexUrl() {
    QTemporaryDir dir;
    const ShardedFixture model;
    model.writeTo(str(dir.path()));
    const std::string single = model.writeSingle(str(dir.filePath(QStringLiteral("one.st"))));
    NginxServer server(dir.path());
    QVERIFY2(server.start(), qPrintable(server.why()));
    HttpTraffic heard;
    std::shared_ptr<const Document> remote;
    {
        HttpTask task(nullptr, [&](const HttpTraffic& t) { heard = t; });
        remote = Document::open(server.url("model.safetensors.index.json"));
    }
    // The index, then each shard's header (fetched in parallel): at most
    // 1 + 2M requests, every one counted by the opening task.
    const auto log = server.requests();
    QVERIFY(log.size() <= 1 + 2 * 2);
    QCOMPARE(heard.requests, uint64_t(log.size()));
    QVERIFY(remote->isSharded());
    const auto local = Document::open(single);
    QCOMPARE(remote->tensors().size(), local->tensors().size());
    for (size_t i = 0; i < local->tensors().size(); ++i) {
        QCOMPARE(remote->tensors()[i].name, local->tensors()[i].name);
        const uint64_t n = *local->tensors()[i].elementCount;
        std::vector<float> a(n), b(n);
        local->readValues(i, 0, n, a.data());
        remote->readValues(i, 0, n, b.data());
        QVERIFY(a == b);
    }
}

// A tensor of many blocks read with 1, 2 and 3 blocks fetched ahead: the
// values and statistics of the local file, each byte of the tensor sent once.
void TestHttpSource::blocksPrefetchedOnSeveralConnections() {
    const auto local = Document::open(str(m_dir.filePath(QStringLiteral("model.safetensors"))));
    const size_t big = local->tensors()[0].name == "big" ? 0 : 1;
    for (size_t depth : {1, 2, 3}) {
        HttpOptions o = quickOptions();
        o.blockBytes = 64 << 10; // the 4 MiB tensor in 64 blocks
        o.prefetchDepth = depth;
        m_nginx->clearLog();
        const auto source =
            std::make_shared<const HttpSource>(m_nginx->url("model.safetensors"), o);
        const auto remote = Document::open(std::shared_ptr<const ByteSource>(source));
        QVERIFY(
            sameStats(computeTensorStats(*local, big, {}), computeTensorStats(*remote, big, {})));
        uint64_t sent = 0;
        std::set<std::string> ranges;
        for (const auto& l : m_nginx->requests()) {
            QCOMPARE(l.status, 206);
            QVERIFY2(ranges.insert(l.range).second, l.range.c_str()); // no block asked twice
            sent += l.bodyBytes;
        }
        QVERIFY2(sent <= m_model.size(), std::to_string(sent).c_str()); // the tensor ends the file
        QCOMPARE(source->traffic().requests, uint64_t(ranges.size()));
    }
}

namespace {

// The first byte of each range a server was asked for ("bytes=A-B").
std::vector<std::pair<uint64_t, uint64_t>> askedRanges(const FaultServer& server) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const auto& r : server.requests()) {
        const auto it = r.headers.find("range");
        unsigned long long a = 0, b = 0;
        if (it != r.headers.end() &&
            std::sscanf(it->second.c_str(), "bytes=%llu-%llu", &a, &b) == 2)
            out.emplace_back(a, b);
    }
    return out;
}

} // namespace

// Two threads reading one tensor: one fetches the file's second half (its
// answer late), the other reads just before it. The second's fetch stops
// where the first's begins, and its prefetch must not ask for that half
// again (it did: a 4 MiB tensor's statistics made nginx send 8 MB).
void TestHttpSource::prefetchLeavesWhatAnotherReadIsFetching() {
    FaultServer server(m_model, "secret");
    HttpOptions o = quickOptions();
    o.stallTimeout = 10000ms; // the late answer is not a stall
    const HttpSource source(server.url("/late-tail"), o);
    const uint64_t size = source.size(), half = size / 2;
    std::string tail(1000, '\0'), before(1000, '\0');
    std::string failure;
    std::thread reader([&] {
        try {
            source.readAhead(half, tail.data(), tail.size(), size);
        } catch (const std::exception& e) {
            failure = e.what();
        }
    });
    // Until the server has the first read's request (its answer comes late).
    for (int i = 0; i < 500; ++i) {
        const auto asked = askedRanges(server);
        if (std::any_of(asked.begin(), asked.end(), [&](const auto& r) { return r.first == half; }))
            break;
        std::this_thread::sleep_for(10ms);
    }
    source.readAhead(half / 2, before.data(), before.size(), size);
    reader.join();
    QVERIFY2(failure.empty(), failure.c_str());
    QVERIFY(tail == m_model.substr(size_t(half), tail.size()));
    QVERIFY(before == m_model.substr(size_t(half / 2), before.size()));
    const auto asked = askedRanges(server);
    QCOMPARE(
        std::count_if(asked.begin(), asked.end(), [&](const auto& r) { return r.first == half; }),
        std::ptrdiff_t(1));
    for (size_t i = 0; i < asked.size(); ++i) // no byte asked for twice
        for (size_t j = i + 1; j < asked.size(); ++j)
            QVERIFY2(asked[i].second < asked[j].first || asked[j].second < asked[i].first,
                     qPrintable(QStringLiteral("%1-%2 and %3-%4")
                                    .arg(asked[i].first)
                                    .arg(asked[i].second)
                                    .arg(asked[j].first)
                                    .arg(asked[j].second)));
}

// A read that lands inside the queued prefetches (the other thread's next
// block) takes them into the cache instead of dropping them and asking for
// its bytes again.
void TestHttpSource::readInsideAPrefetchTakesIt() {
    FaultServer server(m_model, "secret");
    HttpOptions o = quickOptions();
    o.blockBytes = 64 << 10;
    o.prefetchDepth = 2;
    const HttpSource source(server.url("/file"), o);
    const size_t probes = askedRanges(server).size(); // opening's (and the head it read)
    std::string a(100, '\0'), b(100, '\0');
    const uint64_t first = 256 << 10, inside = 400 << 10;
    source.readAhead(first, a.data(), a.size(), 1 << 20);  // a block, then two prefetched
    source.readAhead(inside, b.data(), b.size(), 1 << 20); // inside the second
    QVERIFY(a == m_model.substr(first, a.size()));
    QVERIFY(b == m_model.substr(inside, b.size()));
    auto asked = askedRanges(server);
    asked.erase(asked.begin(), asked.begin() + std::ptrdiff_t(std::min(probes, asked.size())));
    QVERIFY(asked.size() >= 3); // the block and its prefetches (taken ones queue more)
    for (size_t i = 0; i < asked.size(); ++i) {
        QVERIFY(asked[i].first != inside); // taken, not asked again
        for (size_t j = i + 1; j < asked.size(); ++j)
            QVERIFY(asked[i].second < asked[j].first || asked[j].second < asked[i].first);
    }
}

// nginx over TLS offers HTTP/2 (ALPN); libcurl takes it, and ranges work
// over it as over HTTP/1.1.
void TestHttpSource::http2OverTlsWhereOffered() {
    NginxServer server(m_dir.path(), true);
    QVERIFY2(server.start(), qPrintable(server.why()));
    HttpOptions o = quickOptions();
    o.caFile = server.caFile();
    const auto remote = Document::open(std::shared_ptr<const ByteSource>(
        std::make_shared<const HttpSource>(server.url("model.safetensors"), o)));
    const auto local = Document::open(str(m_dir.filePath(QStringLiteral("model.safetensors"))));
    for (size_t i = 0; i < local->tensors().size(); ++i)
        QVERIFY(sameStats(computeTensorStats(*local, i, {}), computeTensorStats(*remote, i, {})));
    const auto log = server.requests();
    QVERIFY(log.size() >= 2);
    for (const auto& l : log) {
        QCOMPARE(l.protocol, std::string("HTTP/2.0"));
        QCOMPARE(l.status, 206);
    }
    // Without the certificate trusted, https fails with a message, not a hang.
    const std::string error =
        errorOf([&] { HttpSource(server.url("model.safetensors"), quickOptions()); });
    QVERIFY2(has(error, server.url("model.safetensors")), error.c_str());
}

QTEST_GUILESS_MAIN(TestHttpSource)
#include "tst_httpsource.moc"
