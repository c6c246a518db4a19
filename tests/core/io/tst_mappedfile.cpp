// MappedFile and SigbusGuard: values scanned in place through a memory map,
// and a file truncated under the map ending in SourceChangedError, not a
// signal — on the calling thread and on others — while a SIGBUS that is not
// ours still reaches whoever handled SIGBUS before us.
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/mappedfile.h"
#include "ckptscope/io/sigbusguard.h"
#include "ckptscope/stats/documentstats.h"

#include <QFile>

#include <csetjmp>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <signal.h>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

using namespace ckptscope;
using testsupport::guarded;
using testsupport::qstr;
using testsupport::str;

namespace {

// The handler installed before the guard's: records what reached it, and
// jumps back to the test when asked to (a fault would recur otherwise).
volatile sig_atomic_t g_passedOn = 0;
void* volatile g_passedAddr = nullptr;
volatile sig_atomic_t g_jump = 0;
sigjmp_buf g_back;

void previousHandler(int, siginfo_t* info, void*) {
    g_passedOn = g_passedOn + 1;
    g_passedAddr = info->si_code > 0 ? info->si_addr : nullptr;
    if (g_jump)
        siglongjmp(g_back, 1);
}

// Bytes whose value says where they are: byte i is i * 7 + i / 251 (mod 256).
std::string patternBytes(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i)
        s[i] = char(uint8_t(i * 7 + i / 251));
    return s;
}

const size_t kPage = size_t(::sysconf(_SC_PAGESIZE));

// Resident file-backed pages of this process (RssFile): what mapped windows
// add and release() takes away (ASan's shadow of them is anonymous memory).
uint64_t residentFileBytes() {
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("RssFile:"))
            return line.mid(8).trimmed().split(' ').value(0).toULongLong() * 1024;
    return 0;
}

// Sums window bytes inside access(): a plain loop, as the guard requires.
uint64_t sumWindow(const MappedFile& m, uint64_t offset, uint64_t length) {
    uint64_t sum = 0;
    const uint8_t* p = m.data() + offset;
    auto body = [&sum, p, length]() noexcept {
        for (uint64_t i = 0; i < length; ++i)
            sum += p[i];
    };
    m.access(offset, length, body);
    return sum;
}

// Reads byte `at` after truncating the file to `keep` bytes from inside the
// guarded body: the read hits a page past the new end (SIGBUS), after
// MADV_POPULATE_READ found the page still there.
void truncateInsideAndTouch(const MappedFile& m, const std::string& path, uint64_t at,
                            uint64_t keep) {
    const uint8_t* p = m.data();
    const char* file = path.c_str();
    auto body = [p, file, at, keep]() noexcept {
        if (::truncate(file, off_t(keep)) != 0)
            return;
        (void)*static_cast<const volatile uint8_t*>(p + at);
    };
    m.access(at, 1, body);
}

// A file of pattern bytes in a temporary folder, open and mapped.
struct MappedFixture {
    QTemporaryDir dir;
    QString path;
    std::unique_ptr<FileSource> source;
    const MappedFile* map = nullptr;

    explicit MappedFixture(size_t bytes, const char* name = "shrinks.bin")
        : path(dir.filePath(QString::fromUtf8(name))) {
        testsupport::writeFile(path, patternBytes(bytes));
        source = std::make_unique<FileSource>(str(path));
        map = source->mappedFile();
    }
};

} // namespace

class TestMappedFile : public QObject {
    Q_OBJECT

    testsupport::ChildResult m_defaultAction;

private Q_SLOTS:
    void initTestCase();
    void readsWindowsAcrossPages();
    void windowPastTheEndIsRefused();
    void releaseDropsPagesFromMemory();
    void truncatedBeforeAccessIsSourceChanged();
    void sigbusInsideAccessIsSourceChanged();
    void sigbusOnWorkerThreadIsSourceChanged();
    void twoFilesNameTheOneThatShrank();
    void unguardedSigbusGoesToPreviousHandler();
    void sentSigbusInsideGuardIsPassedOn();
    void unguardedSigbusKeepsDefaultAction();
    void statsScanMappedValuesAndFailCleanly();
    void mapPolicyFromEnvironment();
    void measuredPolicyMapsOnlyCheapFiles();
};

void TestMappedFile::initTestCase() {
    // Before anything installs the guard: in a child whose SIGBUS action is
    // the default, an unguarded fault still kills with SIGBUS.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = str(dir.filePath(QStringLiteral("child.bin")));
    testsupport::writeFile(qstr(path), patternBytes(4 * kPage));
    m_defaultAction = testsupport::inChild(
        [] {
            struct sigaction dfl {};
            dfl.sa_handler = SIG_DFL;
            sigemptyset(&dfl.sa_mask);
            ::sigaction(SIGBUS, &dfl, nullptr);
        },
        [path]() -> std::string {
            SigbusGuard::install();
            const int fd = ::open(path.c_str(), O_RDONLY);
            void* p = ::mmap(nullptr, 4 * kPage, PROT_READ, MAP_SHARED, fd, 0);
            if (p == MAP_FAILED || ::truncate(path.c_str(), off_t(kPage)) != 0)
                return "setup failed";
            (void)*static_cast<const volatile uint8_t*>(static_cast<uint8_t*>(p) + 3 * kPage);
            return "survived an unguarded SIGBUS";
        });

    // Then this process: our recording handler first, the guard's after it.
    struct sigaction sa {};
    sa.sa_sigaction = previousHandler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    QCOMPARE(::sigaction(SIGBUS, &sa, nullptr), 0);
    QVERIFY2(SigbusGuard::install(), "the SIGBUS handler did not take (ASAN_OPTIONS "
                                     "handle_sigbus=2?)");
    struct sigaction now {};
    QCOMPARE(::sigaction(SIGBUS, nullptr, &now), 0);
    QVERIFY(now.sa_sigaction != previousHandler); // the guard's handler is in front
}

void TestMappedFile::readsWindowsAcrossPages() {
    guarded([] {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bytes.bin"));
        const std::string bytes = patternBytes(5 * kPage + 123);
        testsupport::writeFile(path, bytes);
        const FileSource source(str(path));
        const MappedFile* m = source.mappedFile();
        QVERIFY(m);
        QCOMPARE(m->size(), uint64_t(bytes.size()));
        QCOMPARE(m->name(), str(path));
        auto expected = [&](uint64_t offset, uint64_t length) {
            uint64_t sum = 0;
            for (uint64_t i = offset; i < offset + length; ++i)
                sum += uint8_t(bytes[i]);
            return sum;
        };
        // Windows inside a page, across page edges, the last partial page, empty.
        const std::pair<uint64_t, uint64_t> windows[] = {{0, 1},
                                                         {1, 10},
                                                         {kPage - 3, 7},
                                                         {kPage, kPage},
                                                         {kPage - 1, 3 * kPage + 2},
                                                         {0, bytes.size()},
                                                         {bytes.size() - 1, 1},
                                                         {5 * kPage, 123},
                                                         {bytes.size(), 0}};
        for (const auto& [offset, length] : windows) {
            QCOMPARE(sumWindow(*m, offset, length), expected(offset, length));
            m->release(offset, length);
            // Released pages come back with the same bytes.
            QCOMPARE(sumWindow(*m, offset, length), expected(offset, length));
        }
        // The same object on every call.
        QCOMPARE(source.mappedFile(), m);
    });
}

void TestMappedFile::windowPastTheEndIsRefused() {
    guarded([] {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("short.bin"));
        testsupport::writeFile(path, patternBytes(100));
        const FileSource source(str(path));
        const MappedFile* m = source.mappedFile();
        QVERIFY(m);
        int ran = 0;
        auto body = [&ran]() noexcept { ++ran; };
        QVERIFY_THROWS_EXCEPTION(SourceChangedError, m->access(90, 11, body));
        QVERIFY_THROWS_EXCEPTION(SourceChangedError, m->access(101, 0, body));
        QVERIFY_THROWS_EXCEPTION(SourceChangedError, m->access(UINT64_MAX, 2, body));
        QCOMPARE(ran, 0);
    });
}

void TestMappedFile::releaseDropsPagesFromMemory() {
    guarded([] {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("big.bin"));
        const uint64_t size = uint64_t(64) << 20;
        testsupport::writeFile(path, patternBytes(size_t(size)));
        const FileSource source(str(path));
        const MappedFile* m = source.mappedFile();
        QVERIFY(m);
        const uint64_t window = uint64_t(1) << 20;
        const uint64_t before = residentFileBytes();
        QVERIFY(before > 0);
        for (uint64_t at = 0; at < size; at += window) {
            sumWindow(*m, at, window);
            m->release(at, window);
        }
        const uint64_t released = residentFileBytes();
        // Without release the mapped pages stay resident: the check above
        // means something.
        for (uint64_t at = 0; at < size; at += window)
            sumWindow(*m, at, window);
        const uint64_t kept = residentFileBytes();
        m->release(0, size);
        QVERIFY2(released < before + (uint64_t(4) << 20),
                 qPrintable(QStringLiteral("resident grew by %1 bytes with release")
                                .arg(qint64(released) - qint64(before))));
        QVERIFY2(
            kept > released + (uint64_t(48) << 20),
            qPrintable(QStringLiteral("resident %1 → %2 without release").arg(released).arg(kept)));
    });
}

void TestMappedFile::truncatedBeforeAccessIsSourceChanged() {
    guarded([] {
        const MappedFixture f(8 * kPage);
        const QString& path = f.path;
        const MappedFile* m = f.map;
        QVERIFY(m);
        QVERIFY(QFile::resize(path, qint64(2 * kPage)));
        try {
            sumWindow(*m, 5 * kPage, kPage);
            QFAIL("a window past the new end was read");
        } catch (const SourceChangedError& e) {
            QCOMPARE(qstr(e.what()),
                     path + QStringLiteral(": file changed on disk while reading — reload"));
            QCOMPARE(e.file(), str(path));
        }
        // Bytes still in the file are refused too: the file changed.
        QVERIFY_THROWS_EXCEPTION(SourceChangedError, sumWindow(*m, 0, 10));
    });
}

void TestMappedFile::sigbusInsideAccessIsSourceChanged() {
    guarded([] {
        const MappedFixture f(8 * kPage);
        const QString& path = f.path;
        const MappedFile* m = f.map;
        QVERIFY(m);
        const int passedBefore = g_passedOn;
        try {
            truncateInsideAndTouch(*m, str(path), 6 * kPage + 5, kPage);
            QFAIL("a page past the new end was read");
        } catch (const SourceChangedError& e) {
            QCOMPARE(qstr(e.what()),
                     path + QStringLiteral(": file changed on disk while reading — reload"));
        }
        QCOMPARE(int(g_passedOn), passedBefore); // handled by the guard, not passed on
        // The thread is in a sane state afterwards: SIGBUS unblocked, the
        // guard ready again.
        sigset_t mask;
        QCOMPARE(::pthread_sigmask(SIG_SETMASK, nullptr, &mask), 0);
        QVERIFY(!sigismember(&mask, SIGBUS));
        testsupport::writeFile(path, patternBytes(8 * kPage));
        const FileSource again(str(path));
        QVERIFY_THROWS_EXCEPTION(
            SourceChangedError,
            truncateInsideAndTouch(*again.mappedFile(), str(path), 7 * kPage, 0));
    });
}

void TestMappedFile::sigbusOnWorkerThreadIsSourceChanged() {
    guarded([] {
        const MappedFixture f(8 * kPage);
        const QString& path = f.path;
        const MappedFile* m = f.map;
        QVERIFY(m);
        std::string caught, other;
        std::thread worker([&] {
            try {
                truncateInsideAndTouch(*m, str(path), 4 * kPage, kPage);
            } catch (const SourceChangedError& e) {
                caught = e.what();
            } catch (...) {
                other = "another exception";
            }
        });
        worker.join();
        QCOMPARE(qstr(other), QString());
        QCOMPARE(qstr(caught),
                 path + QStringLiteral(": file changed on disk while reading — reload"));
    });
}

void TestMappedFile::twoFilesNameTheOneThatShrank() {
    guarded([] {
        QTemporaryDir dir;
        const QString pa = dir.filePath(QStringLiteral("a.bin")),
                      pb = dir.filePath(QStringLiteral("b.bin"));
        testsupport::writeFile(pa, patternBytes(4 * kPage));
        testsupport::writeFile(pb, patternBytes(4 * kPage));
        const FileSource a(str(pa)), b(str(pb));
        const MappedFile::Window w[2] = {{a.mappedFile(), 0, 4 * kPage},
                                         {b.mappedFile(), 0, 4 * kPage}};
        uint64_t sum = 0;
        const std::string cut = str(pb);
        auto body = [&sum, &w, file = cut.c_str()]() noexcept {
            for (uint64_t i = 0; i < 4 * kPage; ++i)
                sum += w[0].file->data()[i];
            if (::truncate(file, 0) != 0)
                return;
            for (uint64_t i = 0; i < 4 * kPage; ++i)
                sum += w[1].file->data()[i];
        };
        try {
            MappedFile::access(w, 2, body);
            QFAIL("the truncated file was read");
        } catch (const SourceChangedError& e) {
            QCOMPARE(e.file(), str(pb));
        }
    });
}

void TestMappedFile::unguardedSigbusGoesToPreviousHandler() {
    QTemporaryDir dir;
    const std::string path = str(dir.filePath(QStringLiteral("plain.bin")));
    testsupport::writeFile(qstr(path), patternBytes(4 * kPage));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    QVERIFY(fd >= 0);
    auto* p = static_cast<uint8_t*>(::mmap(nullptr, 4 * kPage, PROT_READ, MAP_SHARED, fd, 0));
    ::close(fd);
    QVERIFY(p != MAP_FAILED);
    QCOMPARE(::truncate(path.c_str(), off_t(kPage)), 0);
    const int before = g_passedOn;
    g_passedAddr = nullptr;
    g_jump = 1;
    if (sigsetjmp(g_back, 1) == 0)
        (void)*static_cast<const volatile uint8_t*>(p + 2 * kPage + 8); // not guarded
    g_jump = 0;
    ::munmap(p, 4 * kPage);
    QCOMPARE(int(g_passedOn), before + 1);
    QCOMPARE(static_cast<void*>(g_passedAddr), static_cast<void*>(p + 2 * kPage + 8));
}

void TestMappedFile::sentSigbusInsideGuardIsPassedOn() {
    // kill()/raise() is no fault of ours even while a guard is active: the
    // previous handler gets it and the guarded body runs on.
    static uint8_t byte = 1;
    const SigbusGuard::Range range{&byte, 1};
    static volatile sig_atomic_t finished = 0;
    finished = 0;
    const int before = g_passedOn;
    const int hit = SigbusGuard::run(
        &range, 1,
        [](void*) noexcept {
            ::raise(SIGBUS);
            finished = 1;
        },
        nullptr);
    QCOMPARE(hit, -1);
    QCOMPARE(int(finished), 1);
    QCOMPARE(int(g_passedOn), before + 1);
}

void TestMappedFile::unguardedSigbusKeepsDefaultAction() {
    QVERIFY2(m_defaultAction.signalled && m_defaultAction.code == SIGBUS,
             qPrintable(m_defaultAction.describe()));
}

void TestMappedFile::statsScanMappedValuesAndFailCleanly() {
    guarded([] {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("m.oxck"));
        // Names of odd lengths put the values at unaligned offsets.
        std::vector<float> values(300000);
        for (size_t i = 0; i < values.size(); ++i)
            values[i] = float(i % 1000) * 0.25f - 17.0f;
        Checkpoint ck;
        ck.addTensor({"a", {3}, {1.0f, -2.0f, 3.5f}});
        ck.addTensor({"bb.weight", {values.size()}, values});
        ck.save(str(path));
        const auto doc = Document::open(str(path));
        setMapPolicy(MapPolicy::Never);
        QVERIFY(!doc->mappedValues(1).has_value()); // the switch is honoured
        setMapPolicy(MapPolicy::Always);
        QVERIFY(doc->mappedValues(1).has_value());
        StatsOptions options;
        options.bins = 64;
        options.threads = 2;
        const StatsResult mapped = computeTensorStats(*doc, 1, options);
        const StatsResult direct = computeStats(values.data(), values.size(), 64);
        QCOMPARE(mapped.stats.finite, direct.stats.finite);
        QCOMPARE(*mapped.stats.min, *direct.stats.min);
        QCOMPARE(*mapped.stats.max, *direct.stats.max);
        QCOMPARE(mapped.stats.l2, direct.stats.l2);
        QCOMPARE(mapped.histogram.counts, direct.histogram.counts);

        QVERIFY(QFile::resize(path, qint64(doc->tensors()[1].dataOffset + 1000)));
        try {
            computeTensorStats(*doc, 1, options);
            QFAIL("statistics of a truncated file succeeded");
        } catch (const SourceChangedError& e) {
            QCOMPARE(qstr(e.what()),
                     path + QStringLiteral(": file changed on disk while reading — reload"));
        }
    });
}

void TestMappedFile::mapPolicyFromEnvironment() {
    QCOMPARE(int(mapPolicyFrom("1")), int(MapPolicy::Always));
    QCOMPARE(int(mapPolicyFrom("0")), int(MapPolicy::Never));
    QCOMPARE(int(mapPolicyFrom("measure")), int(MapPolicy::Measure));
    // Unset or anything else: copy (the map lost by 2.2-3.8x on a VM where
    // the probe still called it cheap).
    QCOMPARE(int(mapPolicyFrom(nullptr)), int(MapPolicy::Never));
    QCOMPARE(int(mapPolicyFrom("")), int(MapPolicy::Never));
    QCOMPARE(int(mapPolicyFrom("yes")), int(MapPolicy::Never));
    QCOMPARE(int(mapPolicyFrom("10")), int(MapPolicy::Never));
}

void TestMappedFile::measuredPolicyMapsOnlyCheapFiles() {
    guarded([] {
        QTemporaryDir dir;
        // 512 KiB of values: enough pages to measure; 1 000 values: not.
        const QString large = dir.filePath(QStringLiteral("large.oxck"));
        const QString small = dir.filePath(QStringLiteral("small.oxck"));
        Checkpoint ck;
        ck.addTensor({"w", {131072}, std::vector<float>(131072, 0.5f)});
        ck.save(str(large));
        Checkpoint tiny;
        tiny.addTensor({"w", {1000}, std::vector<float>(1000, 0.5f)});
        tiny.save(str(small));
        const MapPolicy before = mapPolicy();
        setMapPolicy(MapPolicy::Measure);
        const auto doc = Document::open(str(large));
        const MappedFile* file = doc->source().mappedFile();
        QVERIFY(file);
        const bool cheap = file->cheapToScan();
        QCOMPARE(file->cheapToScan(), cheap); // measured once
        QCOMPARE(doc->mappedValues(0).has_value(), cheap);
        const auto tinyDoc = Document::open(str(small));
        QVERIFY(tinyDoc->source().mappedFile());
        QVERIFY(!tinyDoc->source().mappedFile()->cheapToScan());
        QVERIFY(!tinyDoc->mappedValues(0).has_value());
        // Forced either way, the measurement does not matter.
        setMapPolicy(MapPolicy::Always);
        QVERIFY(tinyDoc->mappedValues(0).has_value());
        setMapPolicy(MapPolicy::Never);
        QVERIFY(!doc->mappedValues(0).has_value());
        setMapPolicy(before);
    });
}

QTEST_GUILESS_MAIN(TestMappedFile)
#include "tst_mappedfile.moc"
