#include "common/helpdialogs.h"

#include "common/windowregistry.h"

#include <QAction>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QHeaderView>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace {

QString plain(QString text) {
    // "&&" is a literal ampersand; a single '&' marks the mnemonic.
    text.replace(QStringLiteral("&&"), QStringLiteral("\x01"));
    text.remove(QLatin1Char('&'));
    text.replace(QLatin1Char('\x01'), QLatin1Char('&'));
    return text;
}

// The menu, tab or dock an action lives in, as the user sees it named.
QString placeOf(const QAction* action) {
    for (QObject* o = action->parent(); o; o = o->parent()) {
        if (auto* menu = qobject_cast<QMenu*>(o)) {
            // Submenus: name the top-level menu the user opens first.
            QMenu* top = menu;
            while (auto* up = qobject_cast<QMenu*>(top->parent()))
                top = up;
            return plain(top->title());
        }
        if (auto* dock = qobject_cast<QDockWidget*>(o))
            return dock->windowTitle();
        if (auto* w = qobject_cast<QWidget*>(o); w && w->parentWidget())
            if (auto* tabs = qobject_cast<QTabWidget*>(w->parentWidget()->parentWidget());
                tabs && qobject_cast<QStackedWidget*>(w->parentWidget())) {
                const int i = tabs->indexOf(w);
                if (i >= 0)
                    return plain(tabs->tabText(i));
            }
    }
    return QObject::tr("Window");
}

QDialog* dialog(QWidget* parent, const QString& name, const QString& title) {
    auto* d = new QDialog(parent);
    d->setObjectName(name);
    d->setWindowTitle(title);
    d->setAttribute(Qt::WA_DeleteOnClose);
    return d;
}

void addCloseButton(QDialog* d, QVBoxLayout* layout) {
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    QObject::connect(buttons, &QDialogButtonBox::rejected, d, &QDialog::reject);
    layout->addWidget(buttons);
}

} // namespace

QList<ShortcutEntry> collectShortcuts(QWidget* window) {
    QList<ShortcutEntry> out;
    for (const QAction* a : window->findChildren<QAction*>()) {
        QStringList keys;
        for (const QKeySequence& k : a->shortcuts())
            if (!k.isEmpty())
                keys << k.toString(QKeySequence::NativeText);
        if (keys.isEmpty() || a->text().isEmpty())
            continue;
        out.push_back({placeOf(a), plain(a->text()), keys.join(QStringLiteral(", "))});
    }
    std::stable_sort(out.begin(), out.end(), [](const ShortcutEntry& x, const ShortcutEntry& y) {
        return x.where < y.where;
    });
    return out;
}

void showShortcuts(QWidget* window) {
    QDialog* d =
        dialog(window, QStringLiteral("keyboardShortcuts"), QObject::tr("Keyboard Shortcuts"));
    auto* layout = new QVBoxLayout(d);
    auto* table = new QTableWidget(0, 4);
    table->setHorizontalHeaderLabels({QObject::tr("Window"), QObject::tr("Where"),
                                      QObject::tr("Action"), QObject::tr("Shortcut")});
    for (const WindowShortcuts& kind : WindowRegistry::instance().shortcutsOfEveryWindow(window))
        for (const ShortcutEntry& e : kind.entries) {
            const int r = table->rowCount();
            table->insertRow(r);
            int c = 0;
            for (const QString& text : {kind.window, e.where, e.action, e.shortcut})
                table->setItem(r, c++, new QTableWidgetItem(text));
        }
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->verticalHeader()->hide();
    table->resizeColumnsToContents();
    table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(table);
    addCloseButton(d, layout);
    d->resize(640, 560);
    d->show();
}

void showUserGuide(QWidget* parent) {
    QDialog* d = dialog(parent, QStringLiteral("userGuide"), QObject::tr("Ckptscope User Guide"));
    auto* layout = new QVBoxLayout(d);
    auto* browser = new QTextBrowser;
    browser->setOpenExternalLinks(true); // the guide's own links are anchors
    browser->setSource(QUrl(QStringLiteral("qrc:/help/guide.html")));
    layout->addWidget(browser);
    addCloseButton(d, layout);
    d->resize(720, 640);
    d->show();
}

void showAbout(QWidget* parent) {
    QMessageBox::about(parent, QObject::tr("About Ckptscope"),
                       QObject::tr("<h3>Ckptscope %1</h3><p>A browser for OXCK model checkpoints "
                                   "and gradient checkpoints.</p>")
                           .arg(QStringLiteral(CKPTSCOPE_VERSION)));
}

void addHelpMenu(QMenuBar* bar, QWidget* window) {
    QMenu* help = bar->addMenu(QObject::tr("&Help"));
    QAction* guide =
        help->addAction(QObject::tr("&User Guide"), window, [window] { showUserGuide(window); });
    guide->setShortcut(QKeySequence::HelpContents);
    help->addAction(QObject::tr("&Keyboard Shortcuts"), window,
                    [window] { showShortcuts(window); });
    help->addSeparator();
    help->addAction(QObject::tr("&About Ckptscope"), window, [window] { showAbout(window); });
}
