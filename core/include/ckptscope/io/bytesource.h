#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ckptscope {

class MappedFile;

// Random-access bytes with a known size. Reads past the end throw
// SourceChangedError / a CheckpointError from the caller's context; nothing
// here trusts a count from the file.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    virtual uint64_t size() const = 0;
    // Copies exactly n bytes at offset into dst; throws SourceChangedError
    // when fewer bytes are there than the size promised (file shrank).
    virtual void read(uint64_t offset, void* dst, size_t n) const = 0;
    // read(), saying that the bytes on up to `wantedEnd` (the end of the
    // tensor being read) will be asked for next: a remote source fetches a
    // block of them in the same request. Local sources just read.
    virtual void readAhead(uint64_t offset, void* dst, size_t n, uint64_t wantedEnd) const {
        (void)wantedEnd;
        read(offset, dst, n);
    }
    virtual const std::string& name() const = 0;
    // The bytes through a memory map, for scanning values in place; null
    // when there is none (memory sources, mmap failed): use read().
    virtual const MappedFile* mappedFile() const { return nullptr; }
};

// Thrown when a file changes (shrinks, is replaced) while it is being read.
// file() names the file when the thrower knew which one (a comparison reads
// two at once), else it is empty.
class SourceChangedError : public std::exception {
public:
    explicit SourceChangedError(std::string message, std::string file = {})
        : m_message(std::move(message)), m_file(std::move(file)) {}
    const char* what() const noexcept override { return m_message.c_str(); }
    const std::string& file() const { return m_file; }

private:
    std::string m_message;
    std::string m_file;
};

// The bytes a path names: an http(s) URL read by range requests
// (HttpSource), else a local file (FileSource). Throws IoError.
std::shared_ptr<const ByteSource> openByteSource(const std::string& pathOrUrl);

// The whole content, sized once from the source (no growing buffer).
std::string readAll(const ByteSource& source);

// Bytes held in memory (read_from a stream, tests, fuzzers).
class MemorySource final : public ByteSource {
public:
    MemorySource(std::vector<uint8_t> bytes, std::string name);
    uint64_t size() const override { return m_bytes.size(); }
    void read(uint64_t offset, void* dst, size_t n) const override;
    const std::string& name() const override { return m_name; }
    const std::vector<uint8_t>& bytes() const { return m_bytes; }

private:
    std::vector<uint8_t> m_bytes;
    std::string m_name;
};

} // namespace ckptscope
