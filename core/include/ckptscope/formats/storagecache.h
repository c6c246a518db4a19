#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

namespace ckptscope {

// Storages read whole, once, for strided views whose reads each spread over
// much more of their storage than they take: a transposed matrix read
// 65,536 values at a time wants a few elements of every column per window,
// so each window read the whole storage again (17 GB read for the
// statistics of a 64 MiB tensor). A storage of at most kMaxStorage bytes is
// read once and kept; the cache holds at most its budget, the least
// recently used storage dropped before a new one is read. One per
// document; thread-safe (two readers of one storage wait for a single
// read). Kept bytes are little-endian elements of one size (a big-endian
// storage swapped as read): a storage is kept per element size.
class StorageCache {
public:
    static constexpr uint64_t kMaxStorage = uint64_t(256) << 20;
    static constexpr uint64_t kBudget = uint64_t(256) << 20;

    using Bytes = std::shared_ptr<const std::vector<uint8_t>>;

    explicit StorageCache(uint64_t budget = kBudget) : m_budget(budget) {}

    // Storage `storage`'s `bytes` bytes as elements of `elementSize`, read
    // into the buffer by `read` when they are not kept (then kept). Null
    // when they would pass the budget or the memory cannot be had: the
    // caller reads as it would without a cache. Throws what `read` throws,
    // keeping nothing.
    Bytes get(uint32_t storage, unsigned elementSize, uint64_t bytes,
              const std::function<void(uint8_t*)>& read);

    // Bytes held (for tests).
    uint64_t heldBytes() const;

private:
    struct Entry {
        uint32_t storage;
        unsigned elementSize;
        Bytes bytes;
    };
    const uint64_t m_budget;
    mutable std::mutex m_mutex;
    std::mutex m_readMutex;     // one storage read at a time: never two copies of one
    std::list<Entry> m_entries; // most recently used first
    uint64_t m_held = 0;
};

} // namespace ckptscope
