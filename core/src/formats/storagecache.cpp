#include "ckptscope/formats/storagecache.h"

#include <new>

namespace ckptscope {

StorageCache::Bytes StorageCache::get(uint32_t storage, unsigned elementSize, uint64_t bytes,
                                      const std::function<void(uint8_t*)>& read) {
    if (bytes > m_budget)
        return nullptr;
    const auto lookUp = [&]() -> Bytes {
        std::lock_guard lock(m_mutex);
        for (auto it = m_entries.begin(); it != m_entries.end(); ++it)
            if (it->storage == storage && it->elementSize == elementSize) {
                m_entries.splice(m_entries.begin(), m_entries, it);
                return it->bytes;
            }
        return nullptr;
    };
    if (Bytes kept = lookUp())
        return kept;
    // Reads are serialised so that two readers of one storage read it once;
    // the second finds it kept.
    std::lock_guard reading(m_readMutex);
    if (Bytes kept = lookUp())
        return kept;
    {
        // Room first: the new storage never sits beside the ones it replaces
        // (readers still holding one keep it alive until they are done).
        std::lock_guard lock(m_mutex);
        while (!m_entries.empty() && m_held + bytes > m_budget) {
            m_held -= m_entries.back().bytes->size();
            m_entries.pop_back();
        }
    }
    std::shared_ptr<std::vector<uint8_t>> fresh;
    try {
        fresh = std::make_shared<std::vector<uint8_t>>(size_t(bytes));
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
    read(fresh->data());
    std::lock_guard lock(m_mutex);
    m_entries.push_front({storage, elementSize, fresh});
    m_held += bytes;
    return fresh;
}

uint64_t StorageCache::heldBytes() const {
    std::lock_guard lock(m_mutex);
    return m_held;
}

} // namespace ckptscope
