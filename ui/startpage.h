#pragma once

#include <QElapsedTimer>
#include <QWidget>

class QListWidget;
class QListWidgetItem;
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
    void openFolderRequested(); // a training run

private:
    void refreshRecent();
    void openItem(QListWidgetItem* item);
    RecentFiles* m_recent;
    QListWidget* m_recentList;
    QString m_lastOpened; // one open per click, double-click or Enter
    QElapsedTimer m_sinceOpen;
};
