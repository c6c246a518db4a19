#pragma once

#include <QObject>
#include <QStringList>

// The last opened files (most recent first, at most 10), kept in QSettings.
class RecentFiles : public QObject {
    Q_OBJECT
public:
    static constexpr int kMax = 10;
    explicit RecentFiles(QObject* parent = nullptr);

    QStringList files() const { return m_files; }
    void add(const QString& path);
    // Off for a run that only takes a screenshot (`--screenshot`): the files
    // it opens are not the user's. On by default.
    static void setRecording(bool on);
    void remove(const QString& path);
    void clear();

Q_SIGNALS:
    void changed();

private:
    void save();
    QStringList m_files;
    static bool s_recording;
};
