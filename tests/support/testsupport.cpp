#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/openerror.h"

#include <bit>

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QTest>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace testsupport {

QString conformanceDir() {
    const QString dir = QStringLiteral(CKPTSCOPE_CONFORMANCE_DIR);
    return QDir(dir + QStringLiteral("/valid")).exists() ? dir : QString();
}

QString corpus(const QString& relative) {
    return conformanceDir() + QLatin1Char('/') + relative;
}

QString ggufCorpus() {
    const QString dir = conformanceDir();
    return dir.isEmpty() ? dir : dir + QStringLiteral("/gguf");
}

void forEachGgufReading(const std::function<void(const QString& file, const nlohmann::json& reading,
                                                 const QString& expected)>& fn) {
    const QString dir = ggufCorpus();
    const QStringList files =
        QDir(dir + QStringLiteral("/valid")).entryList({QStringLiteral("*.gguf")}, QDir::Files);
    for (const QString& file : files) {
        const QString expected = dir + QStringLiteral("/expected/") + file;
        fn(file, loadJson(expected + QStringLiteral(".json")), expected);
    }
}

nlohmann::json loadJson(const QString& path) {
    return nlohmann::json::parse(readFile(path));
}

QStringList qstrList(const std::vector<std::string>& v) {
    QStringList out;
    for (const std::string& s : v)
        out << qstr(s);
    return out;
}

QString syntaxErrorProblem(const char* message, const QString& where, const QStringList& mentions) {
    const QString m = QString::fromUtf8(message);
    if (m.toUtf8() != QByteArray(message))
        return QStringLiteral("not valid UTF-8: ") + m;
    if (!m.startsWith(where + QStringLiteral(": ")))
        return QStringLiteral("expected to start with \"%1: \": %2").arg(where, m);
    for (const QString& word : mentions)
        if (!m.contains(word))
            return QStringLiteral("expected to mention \"%1\": %2").arg(word, m);
    for (const char* framing : {"[json.exception", "parse error at", "syntax error while", "\n"})
        if (m.contains(QLatin1String(framing)))
            return QStringLiteral("nlohmann's framing left in: ") + m;
    return {};
}

std::string readFile(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    const QByteArray bytes = f.readAll();
    return std::string(bytes.constData(), size_t(bytes.size()));
}

std::string openError(const std::string& path) {
    try {
        ckptscope::Document::open(path);
    } catch (const ckptscope::OpenError& e) {
        return e.what();
    }
    return "(opened)";
}

void writeFile(const QString& path, const std::string& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        qFatal("cannot write %s", qPrintable(path));
    f.write(bytes.data(), qint64(bytes.size()));
}

bool sameStats(const ckptscope::StatsResult& a, const ckptscope::StatsResult& b) {
    const ckptscope::TensorStats &x = a.stats, &y = b.stats;
    const auto same = [](double p, double q) {
        return std::bit_cast<uint64_t>(p) == std::bit_cast<uint64_t>(q);
    };
    const auto sameOpt = [&](const std::optional<double>& p, const std::optional<double>& q) {
        return p.has_value() == q.has_value() && (!p || same(*p, *q));
    };
    return x.count == y.count && x.finite == y.finite && x.nan == y.nan && x.posInf == y.posInf &&
           x.negInf == y.negInf && x.zeros == y.zeros && sameOpt(x.min, y.min) &&
           sameOpt(x.max, y.max) && sameOpt(x.mean, y.mean) && sameOpt(x.std, y.std) &&
           same(x.l2, y.l2) && same(x.finiteSum, y.finiteSum) &&
           same(a.histogram.lo, b.histogram.lo) && same(a.histogram.hi, b.histogram.hi) &&
           a.histogram.counts == b.histogram.counts;
}

void putU32(std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i)
        out += char(v >> (8 * i));
}

void putU64(std::string& out, uint64_t v) {
    for (int i = 0; i < 8; ++i)
        out += char(v >> (8 * i));
}

std::string oxckHeader(uint64_t numTensors, uint32_t metadataLen) {
    std::string s = "OXCK";
    putU32(s, 1);
    putU64(s, 0);
    putU64(s, numTensors);
    putU32(s, metadataLen);
    return s;
}

#if defined(__linux__)

bool writeSparse(const QString& path, const std::string& head, uint64_t totalSize,
                 const std::string& tail) {
    const int fd = ::open(qPrintable(path), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return false;
    bool ok = ::ftruncate(fd, off_t(totalSize)) == 0 &&
              ::pwrite(fd, head.data(), head.size(), 0) == ssize_t(head.size());
    if (ok && !tail.empty())
        ok = ::pwrite(fd, tail.data(), tail.size(), off_t(totalSize - tail.size())) ==
             ssize_t(tail.size());
    struct stat st {};
    ok = ok && ::fstat(fd, &st) == 0 && uint64_t(st.st_blocks) * 512 < (uint64_t(64) << 20);
    ::close(fd);
    return ok;
}

uint64_t addressSpaceInUse() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmSize:", 0) == 0)
            return std::stoull(line.substr(7)) * 1024;
    return 0;
}

AddressSpaceCap::AddressSpaceCap(uint64_t extra) {
#if !defined(CKPTSCOPE_SANITIZED)
    if (getrlimit(RLIMIT_AS, &m_old) != 0)
        return;
    const uint64_t used = addressSpaceInUse();
    if (used == 0)
        return;
    rlimit capped = m_old;
    capped.rlim_cur = rlim_t(used + extra);
    if (m_old.rlim_max != RLIM_INFINITY && capped.rlim_cur > m_old.rlim_max)
        return;
    m_active = setrlimit(RLIMIT_AS, &capped) == 0;
#else
    (void)extra;
#endif
}

AddressSpaceCap::~AddressSpaceCap() {
    if (m_active)
        setrlimit(RLIMIT_AS, &m_old);
}

QString ChildResult::describe() const {
    return (signalled ? QStringLiteral("killed by signal %1") : QStringLiteral("exit %1"))
               .arg(code) +
           QStringLiteral(": ") + qstr(text);
}

ChildResult inChild(const std::function<void()>& setup, const std::function<std::string()>& body) {
    int fds[2];
    if (::pipe(fds) != 0)
        qFatal("pipe: %s", std::strerror(errno));
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0)
        qFatal("fork: %s", std::strerror(errno));
    if (pid == 0) {
        ::close(fds[0]);
        std::string out;
        int code = 0;
        try {
            setup();
            out = body();
        } catch (const std::exception& e) {
            out = std::string("exception: ") + e.what();
            code = 3;
        } catch (...) {
            out = "exception: (not a std::exception)";
            code = 3;
        }
        for (size_t done = 0; done < out.size();) {
            const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
            if (n <= 0)
                break;
            done += size_t(n);
        }
        ::_exit(code);
    }
    ::close(fds[1]);
    ChildResult r;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        r.text.append(buf, size_t(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.signalled = WIFSIGNALED(status);
    r.code = r.signalled ? WTERMSIG(status) : WEXITSTATUS(status);
    return r;
}

ChildResult withMemoryCap(const std::function<std::string()>& body) {
    // In the child the cap is never lifted, hard limit included (a sanitizer
    // build gets it too: the child's own out-of-memory report is the result).
    return inChild(
        [] {
            const uint64_t used = addressSpaceInUse();
            if (used == 0)
                return; // no /proc: run unbounded
            const rlim_t cap = rlim_t(used + (uint64_t(1) << 30));
            const rlimit rl{cap, cap};
            ::setrlimit(RLIMIT_AS, &rl);
        },
        body);
}

#endif // __linux__

} // namespace testsupport
