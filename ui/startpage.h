#pragma once

#include <QWidget>

class QListWidget;
class RecentFiles;

// Shown while no file is open: bundled samples, recent files and Open.
class StartPage : public QWidget {
    Q_OBJECT
public:
    StartPage(RecentFiles* recent, QWidget* parent = nullptr);

    // Bundled samples (Qt resource paths).
    static QStringList samples();

Q_SIGNALS:
    void openRequested(const QString& path);
    void openDialogRequested();

private:
    void refreshRecent();
    RecentFiles* m_recent;
    QListWidget* m_recentList;
};
