#include "common/valuecache.h"

#include <algorithm>

ValueCache::ValueCache(size_t maxChunks, QObject* parent)
    : QObject(parent), m_maxChunks(std::max<size_t>(1, maxChunks)) {}

void ValueCache::setDocument(std::shared_ptr<const ckptscope::Document> document) {
    m_task.cancel();
    m_document = std::move(document);
    m_chunks.clear();
    m_lru.clear();
    m_queue.clear();
    m_reading.clear();
    m_error.clear();
}

const ckptscope::ValueChunk* ValueCache::chunk(size_t tensor, uint64_t chunk) {
    const Key key{tensor, chunk};
    if (auto it = m_chunks.find(key); it != m_chunks.end()) {
        m_lru.splice(m_lru.begin(), m_lru, it->second.second);
        return &it->second.first;
    }
    if (!m_document || tensor >= m_document->tensors().size() ||
        chunk * kChunk >= m_document->tensors()[tensor].dataLen || failed())
        return nullptr;
    if (!m_reading.count(key) && std::find(m_queue.begin(), m_queue.end(), key) == m_queue.end())
        m_queue.push_back(key);
    if (!m_task.isRunning())
        readNext();
    return nullptr;
}

void ValueCache::cancelPending() {
    m_queue.clear();
    m_reading.clear();
    m_task.cancel();
}

// Hands the worker the requests asked for so far, newest first (what the
// view shows now); it posts each chunk as it is read.
void ValueCache::readNext() {
    if (m_queue.empty() || !m_document)
        return;
    std::vector<Key> batch(m_queue.rbegin(), m_queue.rend());
    batch.resize(std::min<size_t>(batch.size(), 16));
    for (const Key& k : batch) {
        m_reading.insert(k);
        m_queue.erase(std::find(m_queue.begin(), m_queue.end(), k));
    }
    m_task.start(
        [this, batch, document = m_document](BackgroundTask::Run& run) {
            for (const Key& key : batch) {
                if (run.cancelled())
                    return;
                const uint64_t first = key.second * kChunk;
                const uint64_t count =
                    std::min(kChunk, document->tensors()[key.first].dataLen - first);
                auto values =
                    std::make_shared<ckptscope::ValueChunk>(*document, key.first, first, count);
                run.post([this, key, values] {
                    if (!m_reading.erase(key))
                        return; // dropped meanwhile
                    if (m_chunks.size() >= m_maxChunks) {
                        m_chunks.erase(m_lru.back());
                        m_lru.pop_back();
                    }
                    m_lru.push_front(key);
                    m_chunks.emplace(key, std::make_pair(std::move(*values), m_lru.begin()));
                    Q_EMIT chunkReady(key.first, key.second);
                });
            }
            run.finish([this] { readNext(); });
        },
        {{}, [this](const QString& message) {
             m_reading.clear();
             m_queue.clear();
             m_error = message; // report once, not for every cell asked
             Q_EMIT readFailed(message);
         }});
}
