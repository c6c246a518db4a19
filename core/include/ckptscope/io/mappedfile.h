#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace ckptscope {

class ByteSource;
class FileSource;

// A FileSource's bytes through one read-only, shared memory map: values are
// scanned where the page cache holds them, with no copy (pread costs about
// as much CPU as `cat` itself).
//
// Bytes are touched in windows. access() maps a window's pages in (one
// madvise instead of a page fault per 64 KiB) and runs the body under a
// SigbusGuard: a file truncated under the reader gives SourceChangedError
// ("… changed on disk while reading — reload"), never a signal. After the
// body, the file's size and mtime are checked as FileSource::read does, so a
// rewrite in place is caught too. release() drops a window's pages from the
// process again: mapped file pages count in its resident memory (RSS), and
// only the windows in use should.
class MappedFile {
public:
    // Maps the whole file; nullptr when the file is empty, mmap fails or the
    // SIGBUS guard could not be installed (the caller reads with
    // FileSource::read instead).
    static std::unique_ptr<MappedFile> create(const FileSource& file, int fd, uint64_t size);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    uint64_t size() const { return m_size; }
    const std::string& name() const;
    // Byte 0 of the map. Touch bytes only inside access().
    const uint8_t* data() const { return m_data; }

    // One window of one file, for access().
    struct Window {
        const MappedFile* file = nullptr;
        uint64_t offset = 0;
        uint64_t length = 0;
    };

    // Runs body() with the windows (at most 4, of one or several files)
    // mapped in and guarded; body reads them through data(). The body may be
    // abandoned midway by a jump (see SigbusGuard::run): only plain loops and
    // trivially destructible locals in it, nothing that allocates, locks or
    // throws. Throws SourceChangedError naming the file that shrank or
    // changed, also for a window past its end.
    template <typename Body> static void access(const Window* windows, int count, Body& body) {
        accessImpl(
            windows, count, [](void* b) noexcept { (*static_cast<Body*>(b))(); }, &body);
    }
    template <typename Body> void access(uint64_t offset, uint64_t length, Body& body) const {
        const Window w{this, offset, length};
        access(&w, 1, body);
    }

    // Drops the pages of [offset, offset + length), widened to whole pages,
    // from this process (they stay in the page cache; a later access maps them
    // again).
    void release(uint64_t offset, uint64_t length) const;

    // Whether mapping this file's pages in was measured cheap enough for
    // scanning through the map to beat a pread copy: on the first call, the
    // first 2 MiB are mapped in once (MADV_POPULATE_READ) and timed. False for
    // files under 256 KiB (too few pages to tell; a copy of them costs
    // little) and when the kernel cannot populate.
    bool cheapToScan() const;

private:
    MappedFile(const FileSource& file, const uint8_t* data, uint64_t size)
        : m_file(file), m_data(data), m_size(size) {}
    static void accessImpl(const Window* windows, int count, void (*body)(void*) noexcept,
                           void* context);

    const FileSource& m_file;
    const uint8_t* m_data;
    uint64_t m_size;
    mutable std::once_flag m_measureOnce;
    mutable bool m_cheap = false;
};

// How statistics and comparisons get f32 values from a file: scanned in
// place through its map, or copied with pread into a buffer. Neither wins
// everywhere (docs/PERFORMANCE.md): the map was 15-20 % faster for
// statistics on one VM, and 2.2-3.8x slower on another (nested paging),
// where timing the mapping in still made it look cheap.
// - Never (the default; CKPTSCOPE_MMAP unset or "0"): both copy;
// - Measure (CKPTSCOPE_MMAP=measure): statistics scan through the map when
//   MappedFile::cheapToScan() says so; comparisons copy (two files' windows
//   mapped at once keep up to ~40 MiB more resident);
// - Always (CKPTSCOPE_MMAP=1): both through the map.
enum class MapPolicy { Measure, Always, Never };
// The policy CKPTSCOPE_MMAP names: "1" Always, "measure" Measure, else (or
// unset) Never.
MapPolicy mapPolicyFrom(const char* environmentValue);
// The process's policy: from the environment on first use, or as set.
MapPolicy mapPolicy();
void setMapPolicy(MapPolicy policy);

// The f32 values of one tensor in a mapped file: value i is the
// little-endian float at byte offset + 4 i (not necessarily 4-byte aligned).
struct MappedValues {
    const MappedFile* file = nullptr;
    uint64_t offset = 0;
};

// What values are scanned for; MapPolicy::Measure treats the two apart.
enum class ScanUse { Statistics, Comparison };

// The one map-or-copy decision (statistics and comparisons both ask it):
// the `count` f32 values at byte `offset` of `source`, to scan in place
// through its map, or empty when they are to be copied: mapPolicy() says
// copy for this use (the source is then not mapped at all), the source has
// no map, or the values are not inside it.
std::optional<MappedValues> mapForScan(const ByteSource& source, uint64_t offset, uint64_t count,
                                       ScanUse use);

} // namespace ckptscope
