#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

class QFileSystemWatcher;
class QTimer;

// Watches the open file, and every shard of a multi-file model, for a
// writer (a training job rewriting it). Changes are reported once they
// settle; a file replaced by rename is looked for again for about ten
// seconds before it is reported gone.
class ReloadWatcher : public QObject {
    Q_OBJECT
public:
    explicit ReloadWatcher(QObject* parent = nullptr);

    // Watches `files` (the local files the document at `path` reads; empty:
    // path itself) instead of those before (bundled ":/" files and URLs:
    // nothing).
    void watch(const QString& path, const QStringList& files = {});
    // Watches the same files again: a rename drops one from the watcher.
    void rearm();
    QString path() const { return m_path; }

Q_SIGNALS:
    // The files changed (in watch order) settled: reload.
    void changed(const QStringList& files);
    // `file` was deleted or moved for good.
    void gone(const QString& file);

private:
    QFileSystemWatcher* m_watcher;
    QTimer* m_settle;
    QString m_path;
    QStringList m_files;
    QStringList m_changed; // since the last report
    int m_attempts = 0;
};
