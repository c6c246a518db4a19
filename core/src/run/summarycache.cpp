#include "ckptscope/run/summarycache.h"

#include "ckptscope/io/atomicfile.h"
#include "run/summarycodec.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <vector>

namespace ckptscope {

namespace fs = std::filesystem;

namespace {

constexpr const char* kEntrySuffix = ".sum";
// Entries larger than this are not ours (a summary of 100 000 tensors with
// fine histograms is a few hundred MB at most).
constexpr uint64_t kMaxEntryBytes = uint64_t(1) << 30;

int64_t ns(const struct timespec& t) {
    return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

std::optional<std::string> readSmallFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0 || uint64_t(size) > kMaxEntryBytes)
        return std::nullopt;
    in.seekg(0);
    std::string bytes(size_t(size), '\0');
    if (!in.read(bytes.data(), size))
        return std::nullopt;
    return bytes;
}

} // namespace

std::optional<FileIdentity> fileIdentity(const std::string& path) {
    std::error_code ec;
    const fs::path abs = fs::absolute(path, ec).lexically_normal();
    if (ec)
        return std::nullopt;
    struct stat st {};
    if (::stat(abs.c_str(), &st) != 0)
        return std::nullopt;
    FileIdentity id;
    id.path = abs.string();
    id.device = uint64_t(st.st_dev);
    id.inode = uint64_t(st.st_ino);
    id.size = uint64_t(st.st_size);
    id.mtimeNs = ns(st.st_mtim);
    id.ctimeNs = ns(st.st_ctim);
    return id;
}

FileIdentity urlIdentity(const HttpSource& source) {
    FileIdentity id;
    id.path = source.name();
    id.size = source.size();
    id.validator = source.validator();
    return id;
}

std::optional<int64_t> httpDateNs(const std::string& date) {
    std::tm tm{};
    const char* end = ::strptime(date.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (!end || *end != '\0')
        return std::nullopt;
    return int64_t(::timegm(&tm)) * 1'000'000'000;
}

SummaryCache::SummaryCache(std::string dir, uint64_t maxBytes)
    : m_dir(std::move(dir)), m_maxBytes(maxBytes) {}

std::string SummaryCache::defaultDir() {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/')
        return (fs::path(xdg) / "ckptscope").string();
    const char* home = std::getenv("HOME");
    if (home && home[0] != '\0')
        return (fs::path(home) / ".cache" / "ckptscope").string();
    return {};
}

uint64_t SummaryCache::defaultMaxBytes() {
    const char* env = std::getenv("CKPTSCOPE_CACHE_MAX_BYTES");
    if (!env || !*env)
        return kDefaultMaxBytes;
    uint64_t v = 0;
    for (const char* p = env; *p; ++p) {
        if (*p < '0' || *p > '9')
            return kDefaultMaxBytes;
        const auto d = uint64_t(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return kDefaultMaxBytes;
        v = v * 10 + d;
    }
    return v;
}

std::string SummaryCache::entryPath(const std::string& absolutePath) const {
    static const char* hex = "0123456789abcdef";
    const uint64_t h = fnv1a64(absolutePath);
    std::string name(16, '0');
    for (int i = 0; i < 16; ++i)
        name[size_t(i)] = hex[(h >> (60 - 4 * i)) & 15];
    return (fs::path(m_dir) / (name + kEntrySuffix)).string();
}

std::optional<FileSummary> SummaryCache::load(const FileIdentity& id) const {
    if (m_dir.empty())
        return std::nullopt;
    const std::string entry = entryPath(id.path);
    const auto bytes = readSmallFile(entry);
    if (!bytes)
        return std::nullopt;
    auto decoded = decodeSummaryEntry(*bytes);
    if (!decoded || !(decoded->first == id))
        return std::nullopt;
    // Recently used: eviction goes by mtime.
    ::utimensat(AT_FDCWD, entry.c_str(), nullptr, 0);
    return std::move(decoded->second);
}

void SummaryCache::store(const FileIdentity& id, const FileSummary& summary) {
    if (m_dir.empty())
        return;
    try {
        std::error_code ec;
        fs::create_directories(m_dir, ec);
        const std::string bytes = encodeSummaryEntry(id, summary);
        writeFileAtomically(entryPath(id.path), [&](std::ostream& out) {
            out.write(bytes.data(), std::streamsize(bytes.size()));
        });
    } catch (const std::exception&) {
        return; // an unwritable cache only costs time
    }
    trim();
}

void SummaryCache::trim() const {
    if (m_dir.empty())
        return;
    struct Entry {
        int64_t usedNs;
        uint64_t size;
        std::string path;
    };
    std::vector<Entry> entries;
    uint64_t total = 0;
    std::error_code ec;
    for (fs::directory_iterator it(m_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        // Temporaries of a writer in progress start with '.'.
        if (name.empty() || name[0] == '.' || !name.ends_with(kEntrySuffix))
            continue;
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        entries.push_back({ns(st.st_mtim), uint64_t(st.st_size), it->path().string()});
        total += uint64_t(st.st_size);
    }
    if (total <= m_maxBytes)
        return;
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.usedNs != b.usedNs ? a.usedNs < b.usedNs : a.path < b.path;
    });
    for (const Entry& e : entries) {
        if (total <= m_maxBytes)
            break;
        if (fs::remove(e.path, ec))
            total -= e.size;
    }
}

} // namespace ckptscope
