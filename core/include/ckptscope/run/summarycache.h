#pragma once

#include "ckptscope/io/httpsource.h"
#include "ckptscope/run/checkpointsummary.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ckptscope {

// What identifies a file's content without reading it. A rewrite in place
// changes ctime even when the size and the old mtime are put back (ctime
// cannot be set from user space), so a rewritten file never matches. A file
// by URL is its URL, size and validator (ETag, else Last-Modified, else
// nothing: then the size alone tells versions apart); the rest stays 0.
struct FileIdentity {
    std::string path; // absolute, or the URL
    uint64_t device = 0, inode = 0, size = 0;
    int64_t mtimeNs = 0, ctimeNs = 0;
    std::string validator;

    bool operator==(const FileIdentity&) const = default;
};

// stat() of the path (absolute, lexically normal); nothing when it fails
// (a URL too: its identity costs a request, urlIdentity() takes it from an
// open source).
std::optional<FileIdentity> fileIdentity(const std::string& path);
// A file by URL, as its first answer described it.
FileIdentity urlIdentity(const HttpSource& source);
// Last-Modified ("Wed, 21 Oct 2015 07:28:00 GMT") in ns since the epoch;
// none when absent or unreadable.
std::optional<int64_t> httpDateNs(const std::string& date);

// File summaries kept on disk, one entry per file path, so re-opening a run
// reads no checkpoint that did not change. An entry holds its full key, a
// format version and a checksum; an entry that is damaged, of another
// version or for another identity is ignored (a miss) and replaced when the
// new summary is stored. Entries are written atomically (temporary file,
// fsync, rename). Past the size cap the least recently used entries (by
// mtime, refreshed on every hit) are removed.
class SummaryCache {
public:
    static constexpr uint64_t kDefaultMaxBytes = uint64_t(1) << 30;

    SummaryCache(std::string dir, uint64_t maxBytes);
    // $XDG_CACHE_HOME/ckptscope (an absolute XDG_CACHE_HOME only, as the XDG
    // spec says), else $HOME/.cache/ckptscope; empty when neither is set.
    static std::string defaultDir();
    // CKPTSCOPE_CACHE_MAX_BYTES (decimal digits), else 1 GiB.
    static uint64_t defaultMaxBytes();

    const std::string& dir() const { return m_dir; }
    uint64_t maxBytes() const { return m_maxBytes; }

    // The summary stored for exactly this identity, or nothing.
    std::optional<FileSummary> load(const FileIdentity& id) const;
    // Stores (replacing the path's entry), then trims to the cap. Failures
    // (read-only cache, disk full) are swallowed: the cache is an
    // optimisation, never a reason for a run to fail.
    void store(const FileIdentity& id, const FileSummary& summary);
    // Removes least recently used entries until the total is within the cap.
    void trim() const;
    // The entry file of a path (tests damage it on purpose).
    std::string entryPath(const std::string& absolutePath) const;

private:
    std::string m_dir;
    uint64_t m_maxBytes;
};

} // namespace ckptscope
