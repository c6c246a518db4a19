#pragma once

#include <QObject>
#include <QString>

class QFileSystemWatcher;
class QTimer;

// Watches the open file for a writer (a training job rewriting it). Changes
// are reported once they settle; a file replaced by rename is looked for
// again for about ten seconds before it is reported gone.
class ReloadWatcher : public QObject {
    Q_OBJECT
public:
    explicit ReloadWatcher(QObject* parent = nullptr);

    // Watches path instead of the file before (bundled ":/" files: nothing).
    void watch(const QString& path);
    // Watches the same path again: a rename drops it from the watcher.
    void rearm();
    QString path() const { return m_path; }

Q_SIGNALS:
    void changed(); // the file settled after a change: reload it
    void gone();    // deleted or moved for good

private:
    QFileSystemWatcher* m_watcher;
    QTimer* m_settle;
    QString m_path;
    int m_attempts = 0;
};
