#include "browser/startpage.h"

#include "browser/recentfiles.h"
#include "common/filelocation.h"
#include "common/plaintext.h"

#include "ckptscope/formats/formatlist.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

StartPage::StartPage(RecentFiles* recent, QWidget* parent) : QWidget(parent), m_recent(recent) {
    auto* outer = new QHBoxLayout(this);
    outer->addStretch(1);
    auto* col = new QVBoxLayout;
    outer->addLayout(col, 3);
    outer->addStretch(1);
    col->addStretch(1);
    auto* title = new QLabel(
        tr("<h1>Ckptscope</h1><p>Open a checkpoint (%1), or a folder of checkpoints (a training "
           "run) — drop it here, or:</p>")
            .arg(QString::fromStdString(ckptscope::readableFormatsText()).toHtmlEscaped()));
    title->setObjectName(QStringLiteral("startTitle"));
    title->setWordWrap(true);
    col->addWidget(title);
    auto* open = new QPushButton(tr("&Open File…"));
    open->setObjectName(QStringLiteral("openFile"));
    connect(open, &QPushButton::clicked, this, &StartPage::openDialogRequested);
    col->addWidget(open);
    auto* folder = new QPushButton(tr("Open a &Training Run Folder…"));
    folder->setObjectName(QStringLiteral("openFolder"));
    folder->setToolTip(tr("Every checkpoint of a run, step by step"));
    connect(folder, &QPushButton::clicked, this, &StartPage::openFolderRequested);
    col->addWidget(folder);
    auto* compare = new QPushButton(tr("&Compare Two Checkpoints…"));
    compare->setObjectName(QStringLiteral("compareTwo"));
    compare->setToolTip(tr("Choose A, the reference, then B: what changed from A to B"));
    connect(compare, &QPushButton::clicked, this, &StartPage::compareRequested);
    col->addWidget(compare);
    col->addWidget(new QLabel(tr("<h3>Samples</h3>")));
    for (const QString& sample : samples()) {
        auto* button = new QPushButton(QFileInfo(sample).fileName());
        button->setObjectName(QStringLiteral("sample:") + QFileInfo(sample).fileName());
        connect(button, &QPushButton::clicked, this,
                [this, sample] { Q_EMIT openRequested(sample); });
        col->addWidget(button);
    }
    col->addWidget(new QLabel(tr("<h3>Recent files</h3>")));
    m_recentList = new QListWidget;
    m_recentList->setMaximumHeight(220);
    // A single click opens, like a link; Enter (and a double-click) too.
    connect(m_recentList, &QListWidget::itemClicked, this, &StartPage::openItem);
    connect(m_recentList, &QListWidget::itemActivated, this, &StartPage::openItem);
    col->addWidget(m_recentList);
    col->addStretch(2);
    connect(m_recent, &RecentFiles::changed, this, &StartPage::refreshRecent);
    refreshRecent();
}

QStringList StartPage::samples() {
    QStringList out;
    for (const QString& name : QDir(QStringLiteral(":/samples")).entryList(QDir::Files, QDir::Name))
        out << QStringLiteral(":/samples/") + name;
    return out;
}

void StartPage::openItem(QListWidgetItem* item) {
    const QString path = item ? item->data(Qt::UserRole).toString() : QString();
    if (path.isEmpty()) // "(none yet)"
        return;
    // A double-click also clicks, and some styles activate on a single
    // click: the same file asked for again at once is one request.
    if (path == m_lastOpened && m_sinceOpen.isValid() &&
        m_sinceOpen.elapsed() < QApplication::doubleClickInterval())
        return;
    m_lastOpened = path;
    m_sinceOpen.start();
    Q_EMIT openRequested(path);
}

void StartPage::refreshRecent() {
    m_recentList->clear();
    for (const QString& path : m_recent->files()) {
        auto* item = new QListWidgetItem(filelocation::displayName(path) + QStringLiteral("  —  ") +
                                         filelocation::container(path));
        item->setData(Qt::UserRole, path);
        item->setToolTip(plainToolTip(path));
        m_recentList->addItem(item);
    }
    if (m_recent->files().isEmpty())
        m_recentList->addItem(tr("(none yet)"));
}
