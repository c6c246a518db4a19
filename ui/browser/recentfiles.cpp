#include "browser/recentfiles.h"

#include "common/filelocation.h"

#include <QSettings>

namespace {
const auto kKey = QStringLiteral("recentFiles");
}

bool RecentFiles::s_recording = true;

void RecentFiles::setRecording(bool on) {
    s_recording = on;
}

RecentFiles::RecentFiles(QObject* parent) : QObject(parent) {
    m_files = QSettings().value(kKey).toStringList();
}

void RecentFiles::add(const QString& path) {
    if (!s_recording)
        return;
    // Other windows keep their own instance: start from what they saved.
    m_files = QSettings().value(kKey).toStringList();
    const QString absolute = filelocation::key(path);
    m_files.removeAll(absolute);
    m_files.prepend(absolute);
    while (m_files.size() > kMax)
        m_files.removeLast();
    save();
}

void RecentFiles::remove(const QString& path) {
    m_files = QSettings().value(kKey).toStringList();
    if (m_files.removeAll(filelocation::key(path)) > 0)
        save();
}

void RecentFiles::clear() {
    m_files.clear();
    save();
}

void RecentFiles::save() {
    QSettings().setValue(kKey, m_files);
    Q_EMIT changed();
}
