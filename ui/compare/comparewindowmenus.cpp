// The compare window's menu bar: File, View and Help, with the standard
// shortcuts every window has (Close Window on the platform's Close, Quit).
#include "common/helpdialogs.h"
#include "compare/comparewindow.h"
#include "launch/comparelauncher.h"

#include <QApplication>
#include <QCheckBox>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QTabWidget>

void CompareWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Compare Two Checkpoints…"), this,
                    [this] { CompareLauncher::compareTwoWithDialogs(this); })
        ->setShortcut(QKeySequence::Open);
    file->addAction(m_swapAction);
    file->addAction(m_reloadAction);
    file->addSeparator();
    file->addAction(tr("&Close Window"), this, &QWidget::close)->setShortcuts(QKeySequence::Close);
    file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows)
        ->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* filter = view->addAction(tr("&Filter Tensors"), this, [this] {
        m_filter->setFocus(Qt::ShortcutFocusReason);
        m_filter->selectAll();
    });
    filter->setShortcut(QKeySequence::Find);
    QAction* differences = view->addAction(tr("&Differences Only"));
    differences->setCheckable(true);
    differences->setShortcut(QKeySequence(QStringLiteral("Ctrl+D")));
    connect(differences, &QAction::toggled, m_differencesOnly, &QCheckBox::setChecked);
    connect(m_differencesOnly, &QCheckBox::toggled, differences, &QAction::setChecked);
    // Tensor comparisons only, as the toolbar's fields.
    m_tensorMenuActions << filter << differences;
    view->addSeparator();
    for (int i = 0; i < m_tabs->count(); ++i) { // Ctrl+1 … the pages shown
        QAction* page = view->addAction(m_tabs->tabText(i), this, [this, i] {
            if (m_tabs->isTabVisible(i))
                m_tabs->setCurrentIndex(i);
        });
        page->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
    }
    addHelpMenu(menuBar(), this);
}
