#include "common/reloadwatcher.h"

#include "common/filelocation.h"

#include <QDateTime>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QTimer>

#include <algorithm>

ReloadWatcher::ReloadWatcher(QObject* parent)
    : QObject(parent), m_watcher(new QFileSystemWatcher(this)), m_settle(new QTimer(this)) {
    // Wait until the writer settles, then reload once.
    m_settle->setSingleShot(true);
    m_settle->setInterval(400);
    connect(m_watcher, &QFileSystemWatcher::fileChanged, this, [this](const QString& file) {
        if (!m_changed.contains(file))
            m_changed << file;
        m_settle->start();
    });
    connect(m_settle, &QTimer::timeout, this, [this] {
        if (m_files.isEmpty() || m_changed.isEmpty())
            return;
        const auto missing = std::find_if(m_files.cbegin(), m_files.cend(),
                                          [](const QString& f) { return !QFileInfo::exists(f); });
        if (missing == m_files.cend()) {
            m_attempts = 0;
            QStringList files;
            for (const QString& f : m_files) // in the document's order
                if (m_changed.contains(f))
                    files << f;
            m_changed.clear();
            Q_EMIT changed(files);
        } else if (++m_attempts < 25) {
            m_settle->start(); // replaced by rename: try again shortly
        } else {
            m_attempts = 0; // gone for good: say so instead of polling
            m_changed.clear();
            Q_EMIT gone(*missing);
        }
    });
}

namespace {

// What tells a file's contents changed without reading them.
QPair<qint64, QDateTime> stamp(const QString& file) {
    const QFileInfo info(file);
    return {info.size(), info.lastModified()};
}

} // namespace

void ReloadWatcher::watch(const QString& path, const QStringList& files) {
    const bool again = path == m_path && !path.isEmpty(); // the same document, reloaded
    if (!again) {
        m_settle->stop(); // nothing of the previous document's changes
        m_attempts = 0;
        m_changed.clear();
        m_loadStamps.clear();
    }
    m_path = path;
    m_files.clear();
    if (!path.isEmpty() && !filelocation::isBundled(path) && !filelocation::isRemote(path))
        m_files = files.isEmpty() ? QStringList{path} : files;
    rearm();
    // A change while the load read the files (the watch just renewed has
    // not seen it): reported as any other.
    for (auto it = m_loadStamps.cbegin(); it != m_loadStamps.cend(); ++it)
        if (m_files.contains(it.key()) && stamp(it.key()) != it.value() &&
            !m_changed.contains(it.key())) {
            m_changed << it.key();
            m_settle->start();
        }
    m_loadStamps.clear();
}

void ReloadWatcher::loading() {
    m_loadStamps.clear();
    for (const QString& f : m_files)
        m_loadStamps.insert(f, stamp(f));
}

void ReloadWatcher::rearm() {
    // Every path watched anew: a file renamed over the one watched is a new
    // file, and a watch on the old one (still open, so never deleted) would
    // see nothing of it.
    if (!m_watcher->files().isEmpty())
        m_watcher->removePaths(m_watcher->files());
    for (const QString& f : m_files)
        if (QFileInfo::exists(f))
            m_watcher->addPath(f);
}
