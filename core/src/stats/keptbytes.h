#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

// A tensor's stored bytes kept between the two passes of its statistics:
// pass 1 copies them from the file into this buffer, pass 2 reads them
// there instead of copying them from the page cache again (`stats` of
// 1 GiB of Q4_K: 0.275 s → 0.24 s, docs/PERFORMANCE.md).
//
// One buffer for the process, reused from tensor to tensor, and only while
// a Session is open: fresh memory costs a fault and the zeroing of each
// page, which for one tensor cost more than the copy it saves (0.30 s).
// Backed by 2 MiB pages where the kernel allows, given back when the last
// Session ends. One tensor at a time: a second one asking while the buffer
// is leased reads the file twice.
namespace ckptscope::stats {

class KeptBytes {
public:
    // The most a tensor may keep: larger ones read twice.
    static constexpr size_t kMaxBytes = size_t(256) << 20;

    // While one exists (on any thread), leases are granted and the buffer
    // outlives them; a batch of tensors opens one.
    class Session {
    public:
        Session();
        ~Session();
        Session(const Session&) = delete;
        Session& operator=(const Session&) = delete;
    };

    // The buffer for the length of a lease; data() is null when none was
    // granted: no Session, the buffer in use, `bytes` above kMaxBytes, or
    // no memory.
    class Lease {
    public:
        Lease() = default;
        Lease(Lease&&) = default;
        ~Lease();
        uint8_t* data() const { return m_data; }

    private:
        friend class KeptBytes;
        std::unique_lock<std::mutex> m_use;
        uint8_t* m_data = nullptr;
    };
    static Lease lease(size_t bytes);
};

} // namespace ckptscope::stats
