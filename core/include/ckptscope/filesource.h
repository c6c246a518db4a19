#pragma once

#include "ckptscope/bytesource.h"

#include <sys/types.h>

namespace ckptscope {

// A read-only file read with pread(). Deliberately not a memory map: a
// training job rewrites checkpoints in place (truncate, then write), and a
// mapped page past the new end raises SIGBUS. With pread a shrunken file is a
// short read, which becomes a SourceChangedError with a message to reload.
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

    // True when the path now names a different or resized/modified file.
    bool changedOnDisk() const;

private:
    std::string m_path;
    int m_fd = -1;
    uint64_t m_size = 0;
    dev_t m_dev = 0;
    ino_t m_ino = 0;
    int64_t m_mtimeNs = 0;
};

// Failure to open, read or write a file (message names the file).
class IoError : public std::exception {
public:
    explicit IoError(std::string message) : m_message(std::move(message)) {}
    const char* what() const noexcept override { return m_message.c_str(); }

private:
    std::string m_message;
};

} // namespace ckptscope
