#include "stats/keptbytes.h"

#include <sys/mman.h>

namespace ckptscope::stats {

namespace {

constexpr size_t kHugePage = size_t(2) << 20;

struct State {
    std::mutex use;   // held by the lease
    std::mutex admin; // the fields below
    uint8_t* data = nullptr;
    size_t size = 0;
    int sessions = 0;

    // Precondition: admin held, and use held or no lease possible.
    void free() {
        if (data)
            ::munmap(data, size);
        data = nullptr;
        size = 0;
    }
};

State& state() {
    static State s;
    return s;
}

} // namespace

KeptBytes::Session::Session() {
    State& s = state();
    std::lock_guard lock(s.admin);
    ++s.sessions;
}

KeptBytes::Session::~Session() {
    State& s = state();
    std::lock_guard lock(s.admin);
    if (--s.sessions > 0)
        return;
    // A lease still out frees the buffer when it ends.
    std::unique_lock use(s.use, std::try_to_lock);
    if (use.owns_lock())
        s.free();
}

KeptBytes::Lease::~Lease() {
    if (!m_use.owns_lock())
        return;
    State& s = state();
    std::lock_guard lock(s.admin);
    if (s.sessions == 0)
        s.free();
}

KeptBytes::Lease KeptBytes::lease(size_t bytes) {
    Lease lease;
    State& s = state();
    if (bytes == 0 || bytes > kMaxBytes)
        return lease;
    std::unique_lock use(s.use, std::try_to_lock);
    if (!use.owns_lock())
        return lease;
    std::lock_guard lock(s.admin);
    if (s.sessions == 0)
        return lease;
    if (s.size < bytes) {
        s.free();
        const size_t size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
        void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return lease;
#ifdef MADV_HUGEPAGE // a 4 KiB fault costs 10–20 µs on a VM (hugepageheap.h)
        ::madvise(p, size, MADV_HUGEPAGE);
#endif
        s.data = static_cast<uint8_t*>(p);
        s.size = size;
    }
    lease.m_use = std::move(use);
    lease.m_data = s.data;
    return lease;
}

} // namespace ckptscope::stats
