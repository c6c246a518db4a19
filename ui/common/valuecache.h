#pragma once

#include "common/backgroundtask.h"

#include "ckptscope/document/document.h"
#include "ckptscope/export/valuechunk.h"

#include <QObject>
#include <QString>

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

// The values views show, read off the GUI thread: chunks of kChunk values
// of one document's tensors, kept in a bounded LRU. A view asks for a chunk;
// one that is in comes back at once, one that is not comes back empty and is
// read in the background (chunkReady follows), so the window never waits
// for a disk or a server. The Values page, the compare Values page, the
// Block panel and the metadata arrays each keep one. Requests the view no
// longer needs are dropped with cancelPending() (it moved on).
class ValueCache : public QObject {
    Q_OBJECT
public:
    static constexpr uint64_t kChunk = 4096; // values per chunk

    explicit ValueCache(size_t maxChunks = 256, QObject* parent = nullptr);

    // Forgets every chunk and request; the chunks of document are asked
    // from now on.
    void setDocument(std::shared_ptr<const ckptscope::Document> document);
    const std::shared_ptr<const ckptscope::Document>& document() const { return m_document; }

    // Values [chunk × kChunk, …) of tensor, when read; else nullptr, and the
    // chunk is read in the background unless a read failed since the last
    // setDocument (failed() then).
    const ckptscope::ValueChunk* chunk(size_t tensor, uint64_t chunk);
    // A read failed since the last setDocument: its message.
    bool failed() const { return !m_error.isEmpty(); }
    const QString& error() const { return m_error; }
    // Drops the requests not yet read.
    void cancelPending();
    // Requests waiting or being read.
    size_t pending() const { return m_queue.size() + m_reading.size(); }

Q_SIGNALS:
    void chunkReady(size_t tensor, uint64_t chunk);
    void readFailed(const QString& message); // once, until the next setDocument

private:
    using Key = std::pair<size_t, uint64_t>;
    void readNext();

    std::shared_ptr<const ckptscope::Document> m_document;
    size_t m_maxChunks;
    std::map<Key, std::pair<ckptscope::ValueChunk, std::list<Key>::iterator>> m_chunks;
    std::list<Key> m_lru;     // most recent first
    std::vector<Key> m_queue; // asked for, newest last
    std::set<Key> m_reading;  // handed to the worker
    QString m_error;
    BackgroundTask m_task{this};
};
