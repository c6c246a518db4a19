#include "stats/keptbuffer.h"

#include <new>

namespace ckptscope::stats {

namespace {

constexpr uint64_t kKeepHeld = uint64_t(16) << 20;

struct ThreadBuffer {
    std::unique_ptr<uint8_t[]> data;
    uint64_t capacity = 0;
    bool busy = false;
};
thread_local ThreadBuffer t_buffer;

} // namespace

KeptBuffer::KeptBuffer(uint64_t bytes) {
    if (bytes > kKeepBytes)
        return;
    if (t_buffer.busy) {
        m_own.reset(new (std::nothrow) uint8_t[size_t(bytes)]);
        m_data = m_own.get();
        return;
    }
    if (t_buffer.capacity < bytes) {
        t_buffer.data.reset(); // the old one first: never both held
        t_buffer.capacity = 0;
        t_buffer.data.reset(new (std::nothrow) uint8_t[size_t(bytes)]);
        if (!t_buffer.data)
            return;
        t_buffer.capacity = bytes;
    }
    t_buffer.busy = m_usesThreadBuffer = true;
    m_data = t_buffer.data.get();
}

KeptBuffer::~KeptBuffer() {
    if (!m_usesThreadBuffer)
        return;
    t_buffer.busy = false;
    if (t_buffer.capacity > kKeepHeld) {
        t_buffer.data.reset();
        t_buffer.capacity = 0;
    }
}

} // namespace ckptscope::stats
