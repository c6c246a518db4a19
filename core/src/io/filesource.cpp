#include "ckptscope/io/filesource.h"

#include "ckptscope/io/mappedfile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ckptscope {

namespace {

int64_t mtimeNs(const struct stat& st) {
    return int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

std::string changedMessage(const std::string& path) {
    return path + ": file changed on disk while reading — reload";
}

} // namespace

std::string fileKindProblem(const struct stat& st) {
    if (S_ISREG(st.st_mode))
        return {};
    if (S_ISDIR(st.st_mode))
        return "is a folder, not a checkpoint file";
    const char* kind = S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                                              : "not a file";
    return std::string("not a regular file (") + kind + ")";
}

FileSource::FileSource(const std::string& path) : m_path(path) {
    // The kind is checked before opening: opening a FIFO for reading blocks
    // until a writer comes. O_NONBLOCK covers the path being swapped for one
    // between the stat and the open; the fstat below checks again.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw IoError(path + ": cannot open: " + std::strerror(errno));
    if (const std::string problem = fileKindProblem(st); !problem.empty())
        throw IoError(path + ": " + problem);
    m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (m_fd < 0)
        throw IoError(path + ": cannot open: " + std::strerror(errno));
    if (::fstat(m_fd, &st) != 0) {
        const int err = errno;
        ::close(m_fd);
        throw IoError(path + ": cannot stat: " + std::strerror(err));
    }
    if (const std::string problem = fileKindProblem(st); !problem.empty()) {
        ::close(m_fd);
        throw IoError(path + ": " + problem);
    }
    m_size = uint64_t(st.st_size);
    m_dev = st.st_dev;
    m_ino = st.st_ino;
    m_mtimeNs = mtimeNs(st);
    // Values are read front to back in large blocks: tell the kernel.
    ::posix_fadvise(m_fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

FileSource::~FileSource() {
    m_map.reset(); // unmapped before the descriptor closes
    if (m_fd >= 0)
        ::close(m_fd);
}

const MappedFile* FileSource::mappedFile() const {
    std::call_once(m_mapOnce, [this] { m_map = MappedFile::create(*this, m_fd, m_size); });
    return m_map.get();
}

void FileSource::read(uint64_t offset, void* dst, size_t n) const {
    if (offset > m_size || n > m_size - offset)
        throw SourceChangedError(m_path + ": read past the end of the file at byte " +
                                 std::to_string(offset));
    auto* out = static_cast<char*>(dst);
    size_t done = 0;
    while (done < n) {
        const ssize_t got = ::pread(m_fd, out + done, n - done, off_t(offset + done));
        if (got < 0) {
            if (errno == EINTR)
                continue;
            throw IoError(m_path + ": read failed at byte " + std::to_string(offset + done) + ": " +
                          std::strerror(errno));
        }
        if (got == 0) // the file is shorter than when we opened it
            throw SourceChangedError(changedMessage(m_path));
        done += size_t(got);
    }
    // A write during or before the read (a job rewriting the file in place,
    // same size or not) changes size or mtime: what was read may mix old and
    // new bytes. One fstat per read (blocks of 64 KiB to 4 MiB) is cheap.
    if (m_deferredChecks.load(std::memory_order_relaxed) == 0 && contentChanged())
        throw SourceChangedError(changedMessage(m_path));
}

bool FileSource::contentChanged() const {
    struct stat st {};
    if (::fstat(m_fd, &st) != 0)
        return true;
    return uint64_t(st.st_size) != m_size || mtimeNs(st) != m_mtimeNs;
}

bool FileSource::changedOnDisk() const {
    struct stat st {};
    if (::stat(m_path.c_str(), &st) != 0)
        return true;
    return st.st_dev != m_dev || st.st_ino != m_ino || uint64_t(st.st_size) != m_size ||
           mtimeNs(st) != m_mtimeNs;
}

DeferredChangeCheck::DeferredChangeCheck(const ByteSource& source)
    : m_file(dynamic_cast<const FileSource*>(&source)) {
    if (m_file)
        ++m_file->m_deferredChecks;
}

DeferredChangeCheck::~DeferredChangeCheck() {
    if (m_file)
        --m_file->m_deferredChecks;
}

void DeferredChangeCheck::finish() const {
    if (m_file && m_file->contentChanged())
        throw SourceChangedError(changedMessage(m_file->name()));
}

} // namespace ckptscope
