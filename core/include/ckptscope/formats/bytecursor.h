#pragma once

#include "ckptscope/io/bytesource.h"

#include <string>
#include <vector>

namespace ckptscope {

// Sequential little-endian reader over a ByteSource with a small window
// buffer. Every read checks the bytes that remain first; a short file raises a
// CheckpointError (Truncated) with the offset, what was being read and how many bytes were
// expected and found.
class ByteCursor {
public:
    explicit ByteCursor(const ByteSource& source, uint64_t offset = 0);

    uint64_t offset() const { return m_offset; }
    uint64_t remaining() const { return m_source.size() - m_offset; }
    uint32_t u32(const char* what);
    uint64_t u64(const char* what);
    std::string bytes(uint64_t n, const char* what);
    void skip(uint64_t n, const char* what);
    // Throws CheckpointError (Truncated) unless n bytes remain.
    void require(uint64_t n, const char* what) const;

private:
    void fill(void* dst, size_t n);

    const ByteSource& m_source;
    uint64_t m_offset;
    std::vector<uint8_t> m_window;
    uint64_t m_windowStart = 0;
};

} // namespace ckptscope
