#include "ckptscope/io/mappedfile.h"

#include "ckptscope/io/bytesource.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/sigbusguard.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 // Linux 5.14
#endif

namespace ckptscope {

namespace {

uint64_t pageSize() {
    static const uint64_t size = uint64_t(::sysconf(_SC_PAGESIZE));
    return size;
}

// False once the kernel said it does not know MADV_POPULATE_READ: then
// pages come in by faults (slower, same result).
std::atomic<bool> g_populate{true};

// -1: not decided yet (the environment decides on first use).
std::atomic<int> g_policy{-1};

std::string changedMessage(const std::string& name) {
    return name + ": file changed on disk while reading — reload";
}

} // namespace

MapPolicy mapPolicyFrom(const char* value) {
    if (value && std::strcmp(value, "1") == 0)
        return MapPolicy::Always;
    if (value && std::strcmp(value, "measure") == 0)
        return MapPolicy::Measure;
    return MapPolicy::Never;
}

std::optional<MappedValues> mapForScan(const ByteSource& source, uint64_t offset, uint64_t count,
                                       ScanUse use) {
    const MapPolicy policy = mapPolicy();
    if (policy == MapPolicy::Never || (policy == MapPolicy::Measure && use == ScanUse::Comparison))
        return std::nullopt;
    const MappedFile* file = source.mappedFile();
    if (!file || offset > file->size() || count > (file->size() - offset) / 4)
        return std::nullopt;
    if (policy == MapPolicy::Measure && !file->cheapToScan())
        return std::nullopt;
    return MappedValues{file, offset};
}

MapPolicy mapPolicy() {
    int p = g_policy.load(std::memory_order_relaxed);
    if (p < 0) {
        int expected = -1;
        g_policy.compare_exchange_strong(expected,
                                         int(mapPolicyFrom(std::getenv("CKPTSCOPE_MMAP"))));
        p = g_policy.load();
    }
    return MapPolicy(p);
}

void setMapPolicy(MapPolicy policy) {
    g_policy = int(policy);
}

std::unique_ptr<MappedFile> MappedFile::create(const FileSource& file, int fd, uint64_t size) {
    // Without the guard a truncated file would kill the process: read instead.
    if (size == 0 || size > uint64_t(SIZE_MAX) || !SigbusGuard::install())
        return nullptr;
    void* p = ::mmap(nullptr, size_t(size), PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return nullptr;
    return std::unique_ptr<MappedFile>(new MappedFile(file, static_cast<const uint8_t*>(p), size));
}

MappedFile::~MappedFile() {
    ::munmap(const_cast<uint8_t*>(m_data), size_t(m_size));
}

const std::string& MappedFile::name() const {
    return m_file.name();
}

bool MappedFile::cheapToScan() const {
    std::call_once(m_measureOnce, [this] {
        constexpr uint64_t kProbe = uint64_t(2) << 20, kLeast = uint64_t(256) << 10;
        // What a pread copy of a page costs (0.55-0.59 µs on both VMs
        // measured), which is what mapping it saves. The first pages of a
        // fresh map cost more than later ones (page tables, the file's small
        // head folios): 170-380 ns on a VM where the scan through the map is
        // 15-20% faster than copying, about 2 µs where it is 3x slower.
        constexpr double kCheapNsPerPage = 600;
        const uint64_t length = std::min(m_size, kProbe);
        if (length < kLeast || !g_populate.load(std::memory_order_relaxed))
            return;
        void* const at = const_cast<uint8_t*>(m_data);
        const auto start = std::chrono::steady_clock::now();
        const int rc = ::madvise(at, size_t(length), MADV_POPULATE_READ);
        const auto ns =
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
                .count();
        if (rc != 0) { // EINVAL: an old kernel; EFAULT: the file shrank
            if (errno == EINVAL)
                g_populate = false;
            return;
        }
        ::madvise(at, size_t(length), MADV_DONTNEED); // measured, not kept
        m_cheap = ns / double(length / pageSize()) < kCheapNsPerPage;
    });
    return m_cheap;
}

void MappedFile::release(uint64_t offset, uint64_t length) const {
    if (length == 0 || offset >= m_size)
        return;
    const uint64_t page = pageSize();
    const uint64_t from = offset / page * page;
    const uint64_t to = std::min(m_size, offset + std::min(length, m_size - offset));
    // DONTNEED on a shared file map only unmaps: another thread still
    // reading a page at the edge simply maps it again.
    ::madvise(const_cast<uint8_t*>(m_data) + from, size_t(to - from), MADV_DONTNEED);
}

void MappedFile::accessImpl(const Window* windows, int count, void (*body)(void*) noexcept,
                            void* context) {
    SigbusGuard::Range ranges[SigbusGuard::kMaxRanges];
    count = std::clamp(count, 0, SigbusGuard::kMaxRanges);
    const uint64_t page = pageSize();
    for (int k = 0; k < count; ++k) {
        const Window& w = windows[k];
        const MappedFile& f = *w.file;
        if (w.offset > f.m_size || w.length > f.m_size - w.offset)
            throw SourceChangedError(f.name() + ": read past the end of the file at byte " +
                                         std::to_string(w.offset),
                                     f.name());
        ranges[k] = {f.m_data + w.offset, size_t(w.length)};
        if (w.length > 0 && g_populate.load(std::memory_order_relaxed)) {
            const uint64_t from = w.offset / page * page;
            if (::madvise(const_cast<uint8_t*>(f.m_data) + from, size_t(w.offset + w.length - from),
                          MADV_POPULATE_READ) != 0) {
                if (errno == EFAULT) // a page past the file's end now: it shrank
                    throw SourceChangedError(changedMessage(f.name()), f.name());
                if (errno == EINVAL)
                    g_populate = false;
                // Anything else (EINTR, ENOMEM): the faults bring the pages in.
            }
        }
    }
    const int hit = SigbusGuard::run(ranges, count, body, context);
    if (hit >= 0) {
        const std::string& name = windows[hit].file->name();
        throw SourceChangedError(changedMessage(name), name);
    }
    // As FileSource::read: a write before or during the access (same size
    // or not) shows in size or mtime.
    for (int k = 0; k < count; ++k)
        if (windows[k].file->m_file.contentChanged())
            throw SourceChangedError(changedMessage(windows[k].file->name()),
                                     windows[k].file->name());
}

} // namespace ckptscope
