#include "browser/reloadwatcher.h"

#include "common/filelocation.h"

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
        if (m_files.isEmpty())
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

void ReloadWatcher::watch(const QString& path, const QStringList& files) {
    if (!m_watcher->files().isEmpty())
        m_watcher->removePaths(m_watcher->files());
    m_path = path;
    m_files.clear();
    m_changed.clear();
    if (path.isEmpty() || filelocation::isBundled(path) || filelocation::isRemote(path))
        return;
    m_files = files.isEmpty() ? QStringList{path} : files;
    m_watcher->addPaths(m_files);
}

void ReloadWatcher::rearm() {
    for (const QString& f : m_files)
        if (!m_watcher->files().contains(f))
            m_watcher->addPath(f);
}
