#pragma once

#include <QString>
#include <QTemporaryDir>
#include <QTest>

#include <cstdint>
#include <exception>
#include <string>

// Helpers shared by the test executables.
namespace testsupport {

// CKPTSCOPE_CONFORMANCE_DIR, or empty when there is no corpus there.
QString conformanceDir();
// Skips the calling test (QSKIP) when the corpus is absent — or fails it
// when the build requires the corpus (CKPTSCOPE_REQUIRE_CONFORMANCE, CI), so
// a CI run cannot pass by skipping.
#ifdef CKPTSCOPE_REQUIRE_CONFORMANCE
#define CKPTSCOPE_NO_CORPUS(msg) QFAIL(msg)
#else
#define CKPTSCOPE_NO_CORPUS(msg) QSKIP(msg)
#endif
#define REQUIRE_CONFORMANCE()                                                                      \
    do {                                                                                           \
        if (testsupport::conformanceDir().isEmpty())                                               \
            CKPTSCOPE_NO_CORPUS("no conformance corpus at " CKPTSCOPE_CONFORMANCE_DIR);            \
    } while (0)

std::string readFile(const QString& path);

inline QString qstr(const std::string& s) {
    return QString::fromStdString(s);
}
inline std::string str(const QString& s) {
    return s.toStdString();
}

// Runs a test's checks; an exception that escapes them fails that test with
// its message instead of aborting the whole run.
template <typename F> void guarded(F&& checks) {
    try {
        checks();
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QStringLiteral("unexpected exception: ") + QString::fromUtf8(e.what())));
    } catch (...) {
        QFAIL("unexpected non-standard exception");
    }
}
// Little-endian integers for tests that spell OXCK bytes out by hand,
// independently of the project's writer.
void putU32(std::string& out, uint32_t v);
void putU64(std::string& out, uint64_t v);
void writeFile(const QString& path, const std::string& bytes);

} // namespace testsupport
