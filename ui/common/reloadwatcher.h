#pragma once

#include <QDateTime>
#include <QMap>
#include <QObject>
#include <QPair>
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
    // nothing). The same path again (a reload) keeps a change still
    // settling, and reports one made while the load read the files.
    void watch(const QString& path, const QStringList& files = {});
    // A reload of the document watched starts: its files as they are now.
    void loading();
    // Watches the same files again (a file renamed over one watched is a
    // new file).
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
    QStringList m_changed;                                // since the last report
    QMap<QString, QPair<qint64, QDateTime>> m_loadStamps; // size, mtime when a reload began
    int m_attempts = 0;
};
