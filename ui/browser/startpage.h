#pragma once

#include <QElapsedTimer>
#include <QWidget>

class QListWidget;
class QListWidgetItem;
class RecentFiles;

// Shown while no file is open: Open, Open a training run folder, Compare two
// checkpoints, bundled samples and recent files.
class StartPage : public QWidget {
    Q_OBJECT
public:
    StartPage(RecentFiles* recent, QWidget* parent = nullptr);

    // Bundled samples (Qt resource paths).
    static QStringList samples();

Q_SIGNALS:
    void openRequested(const QString& path);
    void openDialogRequested();
    void openFolderRequested();
    void compareRequested();

private:
    void refreshRecent();
    void openItem(QListWidgetItem* item);
    RecentFiles* m_recent;
    QListWidget* m_recentList;
    QString m_lastOpened; // one open per click, double-click or Enter
    QElapsedTimer m_sinceOpen;
};
