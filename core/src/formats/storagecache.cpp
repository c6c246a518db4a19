#include "ckptscope/formats/storagecache.h"

namespace ckptscope {

namespace {

template <class List> auto findStorage(List& entries, uint32_t storage) {
    auto it = entries.begin();
    while (it != entries.end() && it->storage != storage)
        ++it;
    return it;
}

} // namespace

StorageCache::Bytes StorageCache::get(uint32_t storage, uint64_t bytes,
                                      const std::function<void(uint8_t*)>& read) {
    const auto lookUp = [&]() -> Bytes {
        std::lock_guard lock(m_mutex);
        const auto it = findStorage(m_entries, storage);
        if (it == m_entries.end())
            return nullptr;
        m_entries.splice(m_entries.begin(), m_entries, it);
        return it->bytes;
    };
    if (Bytes kept = lookUp())
        return kept;
    // Reads are serialised so that two readers of one storage read it once;
    // the second finds it kept.
    std::lock_guard reading(m_readMutex);
    if (Bytes kept = lookUp())
        return kept;
    auto fresh = std::make_shared<std::vector<uint8_t>>(size_t(bytes));
    read(fresh->data());
    std::lock_guard lock(m_mutex);
    while (!m_entries.empty() && m_held + bytes > m_budget) {
        m_held -= m_entries.back().bytes->size();
        m_entries.pop_back();
    }
    m_entries.push_front({storage, fresh});
    m_held += bytes;
    return fresh;
}

uint64_t StorageCache::heldBytes() const {
    std::lock_guard lock(m_mutex);
    return m_held;
}

} // namespace ckptscope
