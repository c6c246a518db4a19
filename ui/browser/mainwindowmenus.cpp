// The main window's menu bar (File, View ▸ Find, Help) and what its entries
// open: the Open and Open URL dialogs, the recent files.
#include "browser/mainwindow.h"

#include "browser/openurldialog.h"
#include "browser/recentfiles.h"
#include "browser/startpage.h"
#include "browser/tensordock.h"
#include "common/filelocation.h"
#include "common/helpdialogs.h"
#include "common/plaintext.h"
#include "common/windowregistry.h"
#include "export/exportactions.h"
#include "graph/graphpage.h"
#include "launch/comparelauncher.h"
#include "launch/runlauncher.h"
#include "widgets/notificationbar.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDockWidget>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLineEdit>
#include <QMenuBar>
#include <QStackedWidget>
#include <QTabWidget>

void MainWindow::buildActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::openDialog);
    open->setShortcut(QKeySequence::Open);
    QAction* openFolder =
        file->addAction(tr("Open &Folder…"), this, [this] { RunLauncher::openFolderDialog(this); });
    openFolder->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+O")));
    // Ctrl+L as web browsers' "open location" (Ctrl+Shift+O is Open Folder).
    file->addAction(tr("Open &URL…"), this, &MainWindow::openUrlDialog)
        ->setShortcut(QKeySequence(QStringLiteral("Ctrl+L")));
    // A URL pasted into the window opens like one typed into the dialog.
    auto* paste = new QAction(this);
    paste->setShortcut(QKeySequence::Paste);
    paste->setShortcutContext(Qt::WindowShortcut);
    connect(paste, &QAction::triggered, this, [this] {
        const QString text = QGuiApplication::clipboard()->text().trimmed();
        if (filelocation::isRemote(text))
            openFile(text);
    });
    addAction(paste);
    connect(m_start, &StartPage::openFolderRequested, openFolder, &QAction::trigger);
    connect(m_start, &StartPage::compareRequested, this,
            [this] { CompareLauncher::compareTwoWithDialogs(this); });
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("Compare &With…"), this,
                    [this] { CompareLauncher::compareWithDialog(this, m_path); });
    connect(m_recent, &RecentFiles::changed, this, &MainWindow::updateRecentMenu);
    updateRecentMenu();
    m_reloadAction = file->addAction(tr("&Reload"), this, &MainWindow::reload);
    m_reloadAction->setShortcuts({QKeySequence::Refresh, QKeySequence(Qt::CTRL | Qt::Key_R)});
    m_reloadAction->setEnabled(false);
    file->addSeparator(); // Export Statistics…, Convert…; the Tensor menu (ui/exportactions)
    auto* exports = new ExportActions(this, this);
    exports->install(file, menuBar()->addMenu(tr("T&ensor")));
    connect(this, &MainWindow::documentLoaded, exports, &ExportActions::updateActions);
    file->addSeparator();
    QAction* newWindow =
        file->addAction(tr("&New Window"), this, [] { WindowRegistry::instance().newWindow(); });
    newWindow->setShortcut(QKeySequence::New);
    file->addSeparator();
    QAction* close = file->addAction(tr("&Close Window"), this, &QWidget::close);
    close->setShortcuts(QKeySequence::Close); // every binding (Ctrl+W too), not the first
    QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    m_findAction = view->addAction(tr("&Find"), this, &MainWindow::find);
    m_findAction->setShortcut(QKeySequence::Find);
    connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::updateFindAction);
    connect(m_stack, &QStackedWidget::currentChanged, this, &MainWindow::updateFindAction);
    updateFindAction();
    view->addActions(m_graphPage->groupActions()); // Expand All, Collapse All
    for (QDockWidget* dock : findChildren<QDockWidget*>())
        view->addAction(dock->toggleViewAction());

    addHelpMenu(menuBar(), this);
}

void MainWindow::find() {
    if (m_stack->currentWidget() != m_tabs || !m_document)
        return;
    if (m_document->hasTensors()) {
        m_tensorDock->show();
        m_tensorDock->raise();
        m_tensorDock->focusFilter();
        return;
    }
    // Gradient checkpoints: the graph's search, whichever tab is showing.
    m_tabs->setCurrentWidget(m_graphPage);
    m_graphPage->searchEdit()->setFocus(Qt::ShortcutFocusReason);
    m_graphPage->searchEdit()->selectAll();
}

void MainWindow::updateFindAction() {
    if (!m_findAction)
        return;
    const bool open = m_document && m_stack->currentWidget() == m_tabs;
    m_findAction->setEnabled(open);
    if (!open)
        m_findAction->setText(tr("&Find"));
    else if (m_document->hasTensors())
        m_findAction->setText(tr("&Filter Tensors"));
    else
        m_findAction->setText(tr("&Find Node in Graph"));
}

void MainWindow::updateRecentMenu() {
    m_recentMenu->clear();
    // The name and where it is: a URL and a local file of one name apart.
    for (const QString& path : m_recent->files())
        m_recentMenu
            ->addAction(QString(filelocation::displayName(path) + QStringLiteral(" — ") +
                                filelocation::place(path))
                            .replace(QLatin1Char('&'), QStringLiteral("&&")),
                        this, [this, path] { openFile(path); }) // '&' is no mnemonic here
            ->setToolTip(plainToolTip(path));
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(tr("Clear List"), m_recent, &RecentFiles::clear);
    m_recentMenu->setEnabled(!m_recent->files().isEmpty());
}

void MainWindow::openDialog() {
    // Beside the open file; a URL's has no folder here.
    const QString dir =
        m_path.isEmpty() || filelocation::isBundled(m_path) || filelocation::isRemote(m_path)
            ? QString()
            : QFileInfo(m_path).absolutePath();
    const QStringList paths = RunLauncher::askForCheckpoints(this, dir);
    if (paths.size() == 1)
        openFile(paths.first());
    else if (paths.size() > 1) // several files: the checkpoints of one run
        WindowRegistry::instance().openRun(paths);
}

void MainWindow::openUrlDialog() {
    // A URL on the clipboard is the likely answer: offer it.
    const QString clip = QGuiApplication::clipboard()->text().trimmed();
    const QStringList urls =
        OpenUrlDialog::ask(this, filelocation::isRemote(clip) ? clip : QString());
    if (urls.isEmpty())
        return;
    for (const QString& url : urls)
        if (!filelocation::isRemote(url)) {
            m_bar->showMessage(NotificationBar::Kind::Error,
                               tr("<b>Not a URL.</b> An address starts with http://, https:// or "
                                  "s3://."));
            return;
        }
    if (urls.size() == 1)
        openFile(urls.first());
    else // as several files chosen in File ▸ Open…
        WindowRegistry::instance().openRun(urls);
}
