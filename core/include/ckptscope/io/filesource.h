#pragma once

#include "ckptscope/io/bytesource.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>

namespace ckptscope {

// A read-only file read with pread(): the index, JSON, the values a view
// shows. With pread a file a training job truncated in place is a short
// read, which becomes a SourceChangedError with a message to reload; after
// each read an fstat of the descriptor also catches a same-size rewrite
// (size/mtime changed), so a read never returns mixed old/new bytes
// silently. Statistics and comparisons can scan values through
// mappedFile() instead (no copy; mapPolicy() says when they do),
// where the SIGBUS of a truncated map is caught by a SigbusGuard and becomes
// the same error; pread is their fallback when mmap fails.
class FileSource final : public ByteSource {
public:
    // Throws std::system_error-derived IoError with the path on failure.
    explicit FileSource(const std::string& path);
    ~FileSource() override;
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;

    uint64_t size() const override { return m_size; }
    void read(uint64_t offset, void* dst, size_t n) const override;
    const std::string& name() const override { return m_path; }
    // Made on first use (thread-safe) and kept while the source lives; null
    // when mmap fails.
    const MappedFile* mappedFile() const override;

    // True when the path now names a different or resized/modified file.
    bool changedOnDisk() const;
    // True when the open file itself (not the path) was resized or modified
    // since it was opened: what read() checks after every read, so a rewrite
    // in place — even to the same size — is caught, while a file replaced by
    // rename (our descriptor still reads the old, intact bytes) is not.
    bool contentChanged() const;

private:
    friend class DeferredChangeCheck;

    std::string m_path;
    int m_fd = -1;
    uint64_t m_size = 0;
    dev_t m_dev = 0;
    ino_t m_ino = 0;
    int64_t m_mtimeNs = 0;
    mutable std::atomic<int> m_deferredChecks{0};
    mutable std::once_flag m_mapOnce;
    mutable std::unique_ptr<MappedFile> m_map;
};

// Many small reads in a row (indexing a file with many tensors) need one
// change check at the end, not an fstat each: a change before that check
// shows in size or mtime just the same. While alive, read() of the source (if
// it is a FileSource) skips its per-read check; finish() does it once.
class DeferredChangeCheck {
public:
    explicit DeferredChangeCheck(const ByteSource& source);
    ~DeferredChangeCheck();
    DeferredChangeCheck(const DeferredChangeCheck&) = delete;
    DeferredChangeCheck& operator=(const DeferredChangeCheck&) = delete;
    // Throws SourceChangedError ("… changed on disk while reading — reload").
    void finish() const;

private:
    const FileSource* m_file;
};

// Why a path cannot be read as a checkpoint file, from its stat: "" for a
// regular file, "is a folder, not a checkpoint file", or "not a regular file
// (a FIFO)" (a socket, a character device…): reading those could block
// forever or never end.
std::string fileKindProblem(const struct stat& st);

// Failure to open, read or write a file (message names the file).
class IoError : public std::exception {
public:
    explicit IoError(std::string message) : m_message(std::move(message)) {}
    const char* what() const noexcept override { return m_message.c_str(); }

private:
    std::string m_message;
};

} // namespace ckptscope
