#include "ckptscope/formats/bytecursor.h"

#include "ckptscope/formats/checkpointerror.h"

#include <algorithm>
#include <cstring>

namespace ckptscope {

namespace {
constexpr size_t kWindow = 64 * 1024;
// After a jump far past the window (skipping a tensor's values), the next
// fields are a few bytes: read this much, not a whole window, so indexing a
// 1 GiB file copies about what indexing a 1 MiB one does.
constexpr size_t kSmallWindow = 4 * 1024;
} // namespace

ByteCursor::ByteCursor(const ByteSource& source, uint64_t offset)
    : m_source(source), m_offset(offset) {}

void ByteCursor::require(uint64_t n, const char* what) const {
    const uint64_t left = m_offset <= m_source.size() ? m_source.size() - m_offset : 0;
    if (n > left)
        throw CheckpointError(CheckpointError::Kind::Truncated,
                              m_source.name() + ": truncated at byte " + std::to_string(m_offset) +
                                  ": " + what + " needs " + std::to_string(n) + " bytes, " +
                                  std::to_string(left) + " left in the file",
                              m_offset);
}

void ByteCursor::fill(void* dst, size_t n) {
    // Small reads come from a window so indexing a file with many tensors is
    // not one system call per field.
    if (n <= kWindow) {
        const uint64_t winEnd = m_windowStart + m_window.size();
        if (m_offset < m_windowStart || m_offset + n > winEnd) {
            // Reading on from the window, or landing within a window's length
            // of it: a whole window. After a long jump: a small one first.
            const bool near =
                m_window.empty() || (m_offset >= m_windowStart && m_offset <= winEnd + kWindow);
            const size_t want = std::max(n, near ? kWindow : kSmallWindow);
            const uint64_t len = std::min<uint64_t>(want, m_source.size() - m_offset);
            m_window.resize(size_t(len));
            m_source.read(m_offset, m_window.data(), m_window.size());
            m_windowStart = m_offset;
        }
        std::memcpy(dst, m_window.data() + (m_offset - m_windowStart), n);
    } else {
        m_source.read(m_offset, dst, n);
    }
    m_offset += n;
}

uint32_t ByteCursor::u32(const char* what) {
    require(4, what);
    uint8_t b[4];
    fill(b, 4);
    return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
}

uint64_t ByteCursor::u64(const char* what) {
    require(8, what);
    uint8_t b[8];
    fill(b, 8);
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = v << 8 | b[i];
    return v;
}

std::string ByteCursor::bytes(uint64_t n, const char* what) {
    require(n, what); // before allocating: n comes from the file
    std::string s(size_t(n), '\0');
    fill(s.data(), size_t(n));
    return s;
}

void ByteCursor::skip(uint64_t n, const char* what) {
    require(n, what);
    m_offset += n;
}

} // namespace ckptscope
