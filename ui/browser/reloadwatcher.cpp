#include "browser/reloadwatcher.h"

#include "common/filelocation.h"

#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QTimer>

ReloadWatcher::ReloadWatcher(QObject* parent)
    : QObject(parent), m_watcher(new QFileSystemWatcher(this)), m_settle(new QTimer(this)) {
    // Wait until the writer settles, then reload once.
    m_settle->setSingleShot(true);
    m_settle->setInterval(400);
    connect(m_watcher, &QFileSystemWatcher::fileChanged, m_settle, qOverload<>(&QTimer::start));
    connect(m_settle, &QTimer::timeout, this, [this] {
        if (!m_path.isEmpty() && QFileInfo::exists(m_path)) {
            m_attempts = 0;
            Q_EMIT changed();
        } else if (++m_attempts < 25) {
            m_settle->start(); // replaced by rename: try again shortly
        } else {
            m_attempts = 0; // gone for good: say so instead of polling
            Q_EMIT gone();
        }
    });
}

void ReloadWatcher::watch(const QString& path) {
    if (!m_watcher->files().isEmpty())
        m_watcher->removePaths(m_watcher->files());
    m_path = path;
    if (!path.isEmpty() && !filelocation::isBundled(path) && !filelocation::isRemote(path))
        m_watcher->addPath(path);
}

void ReloadWatcher::rearm() {
    if (!m_path.isEmpty() && !filelocation::isBundled(m_path) && !filelocation::isRemote(m_path) &&
        !m_watcher->files().contains(m_path))
        m_watcher->addPath(m_path);
}
