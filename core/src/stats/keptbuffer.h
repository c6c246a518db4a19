#pragma once

#include <cstdint>
#include <memory>

// Memory for the values pass 1 of a tensor's statistics read, kept for pass
// 2: binning them again from memory costs a fraction of reading them again
// (a page-cache copy, a decode).
namespace ckptscope::stats {

// Kept only for a tensor of at most this many bytes.
constexpr uint64_t kKeepBytes = uint64_t(64) << 20;

// `bytes` of memory, or none (data() null) past kKeepBytes or when it
// cannot be had (the values are then read again). The calling
// thread's buffer is reused from tensor to tensor up to 16 MiB (fresh pages
// cost their faults on every tensor: that, not the keeping, made an earlier
// try at keeping slower than reading again); a larger one is freed after
// use, and a nested user on the same thread gets memory of its own. Pool
// helpers may write into it: it lives until the destructor.
class KeptBuffer {
public:
    explicit KeptBuffer(uint64_t bytes);
    ~KeptBuffer();
    KeptBuffer(const KeptBuffer&) = delete;
    KeptBuffer& operator=(const KeptBuffer&) = delete;

    uint8_t* data() const { return m_data; }

private:
    uint8_t* m_data = nullptr;
    std::unique_ptr<uint8_t[]> m_own; // when the thread's buffer is in use
    bool m_usesThreadBuffer = false;
};

} // namespace ckptscope::stats
