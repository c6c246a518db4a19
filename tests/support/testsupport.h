#pragma once

#include "ckptscope/stats/tensorstats.h"

#include <nlohmann/json_fwd.hpp>

#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QTest>

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/resource.h>
#endif

// Built with a sanitizer (its shadow memory rules out an address-space cap
// inside the test process).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CKPTSCOPE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define CKPTSCOPE_SANITIZED 1
#endif
#endif

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

// A path inside the corpus: corpus("valid/mlp.oxck").
QString corpus(const QString& relative);

// The corpus' GGUF folder (gguf/), or empty when there is no corpus.
QString ggufCorpus();
// Each valid GGUF file of the corpus (gguf/valid/*.gguf, by name) with
// ggml's reading of it (gguf/expected/FILE.json) and the path its decoded
// tensors start with (gguf/expected/FILE, then ".I.f32").
void forEachGgufReading(const std::function<void(const QString& file, const nlohmann::json& reading,
                                                 const QString& expected)>& fn);

std::string readFile(const QString& path);
// What Document::open says of `path` (its OpenError's message), or
// "(opened)" when it opens.
std::string openError(const std::string& path);
// A file parsed as JSON (throws nlohmann's exceptions; run inside guarded()).
nlohmann::json loadJson(const QString& path);

inline QString qstr(const std::string& s) {
    return QString::fromStdString(s);
}
inline std::string str(const QString& s) {
    return s.toStdString();
}
QStringList qstrList(const std::vector<std::string>& v);

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
// Why a syntax-error message is wrong, or empty when it is right: it starts
// with "where: " (file:line:col), names each of `mentions`, is one line of
// valid UTF-8, and carries none of nlohmann's framing ("[json.exception…",
// "parse error at", "syntax error while parsing") — the rest of the wording
// is nlohmann's lexer's and not pinned.
QString syntaxErrorProblem(const char* message, const QString& where, const QStringList& mentions);

// Little-endian integers for tests that spell OXCK bytes out by hand,
// independently of the project's writer.
// Bit for bit the same statistics and histogram.
bool sameStats(const ckptscope::StatsResult& a, const ckptscope::StatsResult& b);

void putU32(std::string& out, uint32_t v);
void putU64(std::string& out, uint64_t v);
void writeFile(const QString& path, const std::string& bytes);
// OXCK header up to and including the metadata length field.
std::string oxckHeader(uint64_t numTensors, uint32_t metadataLen);
// Writes head, a hole up to totalSize, then tail at the end (a sparse file).
// False when the filesystem does not keep the file sparse.
bool writeSparse(const QString& path, const std::string& head, uint64_t totalSize,
                 const std::string& tail = {});

// Address space in use now (VmSize), in bytes; 0 without /proc.
uint64_t addressSpaceInUse();

// While alive, caps this process's address space at what it uses now plus
// `extra` bytes, so an allocation sized by a hostile count fails loudly
// (std::bad_alloc) instead of quietly succeeding under overcommit. Does
// nothing under a sanitizer or without /proc.
class AddressSpaceCap {
public:
    explicit AddressSpaceCap(uint64_t extra);
    ~AddressSpaceCap();
    AddressSpaceCap(const AddressSpaceCap&) = delete;
    AddressSpaceCap& operator=(const AddressSpaceCap&) = delete;

private:
#if defined(__linux__)
    rlimit m_old{};
#endif
    bool m_active = false;
};

struct ChildResult {
    bool signalled = false;
    int code = -1;    // exit status, or the signal number
    std::string text; // what the child reported
    QString describe() const;
};

// Runs body in a forked child after setup (limits apply to the child only);
// the child reports body's string, or the message of an escaping exception
// prefixed "exception: " (exit 3).
ChildResult inChild(const std::function<void()>& setup, const std::function<std::string()>& body);
// A child whose address space may grow by 1 GiB at most: a reader that sized
// an allocation by a hostile count fails there (bad_alloc, or a crash).
ChildResult withMemoryCap(const std::function<std::string()>& body);

} // namespace testsupport
