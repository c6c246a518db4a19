#include "browser/tensordock.h"

#include "widgets/namecolumn.h"

#include "tensor/tensorfilterproxy.h"
#include "tensor/tensortreemodel.h"

#include <QAction>
#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QRegularExpression>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>

TensorDock::TensorDock(QWidget* parent) : QDockWidget(tr("Tensors"), parent) {
    setObjectName(QStringLiteral("tensorDock"));
    auto* panel = new QWidget;
    auto* layout = new QVBoxLayout(panel);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* filterRow = new QHBoxLayout;
    m_filter = new QLineEdit;
    m_filter->setPlaceholderText(tr("Filter tensors (Ctrl+F)"));
    m_filter->setClearButtonEnabled(true);
    m_regex = new QCheckBox(tr("Regex"));
    m_regex->setToolTip(tr("Treat the filter as a regular expression"));
    // Escape anywhere in the panel (box or tree) empties the filter; an
    // action, so Help lists it.
    auto* clear = new QAction(tr("Clear Filter"), panel);
    clear->setShortcut(Qt::Key_Escape);
    clear->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(clear, &QAction::triggered, this, [this] {
        if (m_filter->text().isEmpty())
            return; // nothing to clear: the tree stays as the user opened it
        m_filter->clear();
        applyFilter();
    });
    panel->addAction(clear);
    filterRow->addWidget(m_filter, 1);
    filterRow->addWidget(m_regex);
    layout->addLayout(filterRow);

    m_model = new TensorTreeModel(this);
    m_proxy = new TensorFilterProxy(this);
    m_proxy->setSourceModel(m_model);
    m_tree = new QTreeView;
    m_tree->setModel(m_proxy);
    m_tree->setUniformRowHeights(true);
    m_tree->setAlternatingRowColors(true);
    m_tree->setSortingEnabled(true); // natural name order by default
    m_tree->sortByColumn(TensorTreeModel::Name, Qt::AscendingOrder);
    m_tree->header()->setStretchLastSection(false);
    prepareNameColumn(m_tree);
    // Every column as wide as its text as branches open and close; the names
    // take the room left (a stretched section would cut a deep name short:
    // the tree scrolls sideways instead).
    // Once per burst: expandToDepth signals every branch it opens, and
    // measuring the rows each time was quadratic (1 500 tensors: 20 s).
    m_resizeTimer = new QTimer(this);
    m_resizeTimer->setSingleShot(true);
    connect(m_resizeTimer, &QTimer::timeout, this, &TensorDock::resizeColumns);
    for (auto signal : {&QTreeView::expanded, &QTreeView::collapsed})
        connect(m_tree, signal, m_resizeTimer, qOverload<>(&QTimer::start));
    refitOnResize(m_tree, [this] { fitNameColumn(); });
    // A warning icon added by the background scan widens its row's name:
    // fitted once the flags of a burst are in.
    m_fitTimer = new QTimer(this);
    m_fitTimer->setSingleShot(true);
    m_fitTimer->setInterval(200); // once a burst of flags is in, not per flag
    connect(m_fitTimer, &QTimer::timeout, this, [this] {
        m_namesWidth = namesWidth(m_tree, TensorTreeModel::Name);
        fitNameColumn();
    });
    connect(m_model, &QAbstractItemModel::dataChanged, m_fitTimer, qOverload<>(&QTimer::start));
    layout->addWidget(m_tree, 1);
    setWidget(panel);

    // Filter after a short pause in typing: 100k tensors re-filter in ~0.1 s.
    m_filterTimer = new QTimer(this);
    m_filterTimer->setSingleShot(true);
    m_filterTimer->setInterval(200);
    connect(m_filterTimer, &QTimer::timeout, this, &TensorDock::applyFilter);
    connect(m_filter, &QLineEdit::textChanged, m_filterTimer, qOverload<>(&QTimer::start));
    connect(m_regex, &QCheckBox::toggled, this, &TensorDock::applyFilter);
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) {
                const int tensor = current.data(TensorTreeModel::TensorIndexRole).toInt();
                if (m_filtering || tensor < 0) // rows moving under the filter are not a choice
                    return;
                m_chosen = current.data(TensorTreeModel::FullNameRole).toString();
                Q_EMIT tensorSelected(tensor);
            });
    connect(m_tree, &QTreeView::activated, this, [this](const QModelIndex& idx) {
        const int tensor = idx.data(TensorTreeModel::TensorIndexRole).toInt();
        if (tensor >= 0)
            Q_EMIT tensorActivated(tensor);
    });
}

void TensorDock::setDocument(std::shared_ptr<const ckptscope::Document> document) {
    m_chosen.clear();
    m_model->setDocument(std::move(document));
    m_tree->expandToDepth(0);
    resizeColumns();
}

void TensorDock::resizeColumns() {
    for (int c = 1; c < TensorTreeModel::ColumnCount; ++c)
        m_tree->resizeColumnToContents(c);
    m_namesWidth = namesWidth(m_tree, TensorTreeModel::Name);
    fitNameColumn();
}

void TensorDock::fitNameColumn() {
    int rest = m_tree->viewport()->width();
    for (int c = 1; c < TensorTreeModel::ColumnCount; ++c)
        rest -= m_tree->columnWidth(c);
    m_tree->setColumnWidth(TensorTreeModel::Name,
                           std::max(rest, nameColumnWidth(m_tree, m_namesWidth)));
}

bool TensorDock::selectTensor(const QString& fullName) {
    const QModelIndex source = m_model->indexOfName(fullName);
    QModelIndex idx = m_proxy->mapFromSource(source);
    if (!idx.isValid() && source.isValid() && !m_filter->text().isEmpty()) {
        // The filter hides it: cleared, so a link to the tensor (the
        // Overview's NaN list) shows it rather than doing nothing.
        m_filter->clear();
        applyFilter();
        idx = m_proxy->mapFromSource(source);
    }
    if (!idx.isValid())
        return false;
    m_tree->setCurrentIndex(idx);
    m_tree->scrollTo(idx);
    return true;
}

QString TensorDock::currentTensorName() const {
    return m_tree->currentIndex().data(TensorTreeModel::FullNameRole).toString();
}

void TensorDock::focusFilter() {
    m_filter->setFocus();
    m_filter->selectAll();
}

void TensorDock::applyFilter() {
    m_filterTimer->stop();
    m_filtering = true;
    const QString text = m_filter->text();
    if (m_regex->isChecked()) {
        const QRegularExpression re(text, QRegularExpression::CaseInsensitiveOption);
        m_filter->setStyleSheet(re.isValid() ? QString() : QStringLiteral("color: #d33"));
        m_filter->setToolTip(re.isValid() ? QString() : re.errorString());
        if (re.isValid())
            m_proxy->setFilterRegularExpression(re);
    } else {
        m_filter->setStyleSheet(QString());
        m_proxy->setFilterFixedString(text);
    }
    // Show the matches; a huge tree opens only its first levels. Without a
    // filter, the tree as a file opens.
    if (text.isEmpty())
        m_tree->expandToDepth(0);
    else if (m_model->tensorCount() > 20000)
        m_tree->expandToDepth(2);
    else
        m_tree->expandAll();
    resizeColumns();
    keepChosenVisible();
    m_filtering = false;
}

// The tensor shown stays current and in view whenever the filter lets it
// through (the proxy drops the current row when a filter hides it).
void TensorDock::keepChosenVisible() {
    const QModelIndex idx = m_proxy->mapFromSource(m_model->indexOfName(m_chosen));
    if (!idx.isValid())
        return;
    if (m_tree->currentIndex().siblingAtColumn(0) != idx)
        m_tree->setCurrentIndex(idx);
    m_tree->scrollTo(idx); // opens the groups above it
}
