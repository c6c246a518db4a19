// The compare window's widgets, built once: the tool bar and its tolerance
// fields, the tensor list, the pages (tensor, values, metadata, gradient)
// and the status bar's progress.
#include "compare/comparewindow.h"

#include "common/tolerancevalidator.h"
#include "compare/comparefilterproxy.h"
#include "compare/comparehistogramview.h"
#include "compare/comparemetadatamodel.h"
#include "compare/comparestatsmodel.h"
#include "compare/comparetensormodel.h"
#include "compare/comparevaluesmodel.h"
#include "compare/gradient/comparefieldsmodel.h"
#include "compare/gradient/comparegraphpage.h"
#include "compare/gradient/compareoptimizerpage.h"
#include "tensor/histogramview.h"
#include "widgets/namecolumn.h"
#include "widgets/notificationbar.h"
#include "widgets/rowheight.h"
#include "widgets/wrapanywheredelegate.h"
#include "widgets/wrapanywherelabel.h"

#include <QCheckBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QTreeView>
#include <QVBoxLayout>

void CompareWindow::buildUi() {
    buildToolBar();
    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 4);
    m_notification = new NotificationBar;
    layout->addWidget(m_notification);
    m_summary = new WrapAnywhereLabel;
    m_summary->setTextFormat(Qt::RichText);
    layout->addWidget(m_summary);

    m_split = new QSplitter;
    m_split->addWidget(buildTensorList());
    m_tabs = new QTabWidget;
    m_tabs->addTab(buildTensorPage(), tr("Tensor"));
    buildTablePages();
    buildGradientPages();
    m_split->addWidget(m_tabs);
    // A tab widget asks for the widest of its pages even when they are
    // hidden (the graph page's toolbar), which squeezed the tensor tree to a
    // sliver: the detail side takes what the splitter gives it instead.
    m_tabs->setMinimumWidth(400);
    m_split->setCollapsible(0, false);
    m_split->setSizes({640, 660});
    layout->addWidget(m_split, 1);
    setCentralWidget(central);
    buildStatusBar();
    buildMenus();
    connectViews();
}

void CompareWindow::buildToolBar() {
    QToolBar* bar = addToolBar(tr("Compare"));
    bar->setObjectName(QStringLiteral("compareToolBar"));
    m_swapAction = bar->addAction(tr("&Swap A ↔ B"), this, &CompareWindow::swapSides);
    m_swapAction->setShortcut(QKeySequence(tr("Ctrl+Shift+S")));
    m_swapAction->setToolTip(tr("Make B the reference"));
    m_reloadAction = bar->addAction(tr("&Reload"), this, &CompareWindow::recompare);
    m_reloadAction->setShortcut(QKeySequence::Refresh);
    bar->addSeparator();
    // Tolerances, typed exactly as `ckptscope-cli diff --atol/--rtol` takes them.
    auto toleranceEdit = [this, bar](const QString& name, const QString& label,
                                     const QString& tip) {
        auto* caption = new QLabel(label);
        caption->setToolTip(tip);
        bar->addWidget(caption);
        auto* edit = new QLineEdit;
        edit->setObjectName(name);
        edit->setPlaceholderText(QStringLiteral("0"));
        edit->setValidator(new ToleranceValidator(edit));
        edit->setToolTip(tip);
        edit->setMaximumWidth(90);
        caption->setBuddy(edit);
        bar->addWidget(edit);
        connect(edit, &QLineEdit::editingFinished, this, &CompareWindow::applyToleranceFields);
        return edit;
    };
    m_atolEdit = toleranceEdit(QStringLiteral("atol"), tr(" &atol "),
                               tr("Absolute tolerance: elements count as equal when "
                                  "|b − a| ≤ atol + rtol·|a| (default 0: exact equality)"));
    m_rtolEdit = toleranceEdit(QStringLiteral("rtol"), tr(" &rtol "),
                               tr("Relative tolerance, times |a| (A is the reference)"));
    bar->addSeparator();
    m_differencesOnly = new QCheckBox(tr("Differences only"));
    m_differencesOnly->setObjectName(QStringLiteral("differencesOnly"));
    m_tensorToolActions << bar->addWidget(m_differencesOnly);
    m_filter = new QLineEdit;
    m_filter->setObjectName(QStringLiteral("tensorFilter"));
    m_filter->setPlaceholderText(tr("Filter tensors"));
    m_filter->setClearButtonEnabled(true);
    m_filter->setMaximumWidth(260);
    m_tensorToolActions << bar->addWidget(m_filter);
}

QWidget* CompareWindow::buildTensorList() {
    m_tensorModel = new CompareTensorModel(this);
    m_proxy = new CompareFilterProxy(this);
    m_proxy->setSourceModel(m_tensorModel);
    m_tensorView = new QTreeView;
    m_tensorView->setModel(m_proxy);
    m_tensorView->setUniformRowHeights(true);
    m_tensorView->setIndentation(16); // six levels of a model's names, whole, beside the figures
    m_tensorView->setSortingEnabled(true);
    // Most changed first: NaN/Inf mismatches (whose figures sort as
    // infinite), then by relative L2 change.
    m_tensorView->sortByColumn(CompareTensorModel::RelL2, Qt::DescendingOrder);
    m_tensorView->setAlternatingRowColors(true);
    m_tensorView->header()->setSectionResizeMode(QHeaderView::Interactive);
    // Names whole as branches open (a narrow window scrolls the tree sideways).
    prepareNameColumn(m_tensorView);
    // Measured once per burst of branches opening (expandToDepth signals each).
    auto* fitNames = new QTimer(this);
    fitNames->setSingleShot(true);
    connect(fitNames, &QTimer::timeout, this, &CompareWindow::fitNameColumn);
    for (auto signal : {&QTreeView::expanded, &QTreeView::collapsed})
        connect(m_tensorView, signal, fitNames, qOverload<>(&QTimer::start));
    refitOnResize(m_tensorView, [this] {
        if (m_namesWidth > 0) // measured once a comparison is shown
            capNameColumn();
    });
    m_tensorListPanel = m_tensorView;
    return m_tensorView;
}

QWidget* CompareWindow::buildTensorPage() {
    m_tensorPage = new QWidget;
    auto* page = new QVBoxLayout(m_tensorPage);
    m_tensorTitle = new WrapAnywhereLabel;
    m_tensorTitle->setObjectName(QStringLiteral("tensorTitle"));
    page->addWidget(m_tensorTitle);
    auto* detailSplit = m_detailSplit = new QSplitter(Qt::Vertical);
    m_statsModel = new CompareStatsModel(this);
    m_statsView = new QTableView;
    showCompareStats(m_statsView, m_statsModel);
    m_figureLeast = m_statsView->horizontalHeader()->minimumSectionSize();
    detailSplit->addWidget(m_statsView);
    m_overlay = new CompareHistogramView;
    m_overlay->chart()->setTitle(tr("Values of A and B (same bins)"));
    detailSplit->addWidget(m_overlay);
    m_delta = new HistogramView;
    m_delta->chart()->setTitle(tr("B − A over the pairs finite on both sides"));
    detailSplit->addWidget(m_delta);
    // Two charts and the whole table fit a window 860 pixels high (with
    // its menu bar).
    m_overlay->setMinimumHeight(140);
    m_delta->setMinimumHeight(140);
    detailSplit->setSizes({330, 230, 230});
    page->addWidget(detailSplit, 1);
    return m_tensorPage;
}

void CompareWindow::buildTablePages() {
    m_valuesModel = new CompareValuesModel(this);
    auto* valuesView = new QTableView;
    valuesView->setModel(m_valuesModel);
    valuesView->verticalHeader()->hide();
    rowheight::followFont(valuesView, 4);
    connect(m_valuesModel, &QAbstractItemModel::modelReset, this, &CompareWindow::fitValuesColumns);
    connect(m_tabs, &QTabWidget::currentChanged, this, &CompareWindow::fitValuesWidth);
    m_valuesPage = valuesView;
    m_tabs->addTab(valuesView, tr("Values"));

    m_metadataModel = new CompareMetadataModel(this);
    auto* metaView = new QTableView;
    metaView->setModel(m_metadataModel);
    metaView->verticalHeader()->hide();
    // Keys and statuses whole; values share the rest, wrapped anywhere (a
    // hash has no spaces) in rows as tall as they need: nothing elided.
    metaView->setItemDelegate(new WrapAnywhereDelegate(metaView));
    metaView->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    for (int c : {CompareMetadataModel::Key, CompareMetadataModel::Status})
        metaView->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    metaView->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    metaView->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel); // a chat template's rows
    metaView->setWordWrap(true);
    m_metadataPage = metaView;
    m_tabs->addTab(metaView, tr("Metadata"));
}

void CompareWindow::buildGradientPages() {
    m_changesModel = new QStandardItemModel(this);
    // Gradient comparisons: the graph page lists the changes beside the drawing.
    m_graphPage = new CompareGraphPage(m_changesModel);
    m_tabs->addTab(m_graphPage, tr("Graph"));
    m_fieldsModel = new CompareFieldsModel(this);
    m_fieldsView = new QTableView;
    m_fieldsView->setModel(m_fieldsModel);
    m_fieldsView->verticalHeader()->hide();
    m_fieldsView->horizontalHeader()->setStretchLastSection(true);
    m_tabs->addTab(m_fieldsView, tr("Fields"));
    m_optimizerPage = new CompareOptimizerPage;
    m_tabs->addTab(m_optimizerPage, tr("Optimizer state"));
    // Until a result says which kind of files these are: the tensor pages,
    // the common case (no gradient page shows while a tensor file loads).
    for (QWidget* gradientPage :
         {static_cast<QWidget*>(m_graphPage), static_cast<QWidget*>(m_fieldsView),
          static_cast<QWidget*>(m_optimizerPage)})
        m_tabs->setTabVisible(m_tabs->indexOf(gradientPage), false);
}

void CompareWindow::buildStatusBar() {
    m_progress = new QProgressBar;
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(240);
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->hide();
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    connect(m_cancel, &QPushButton::clicked, this, &CompareWindow::cancel);
}

void CompareWindow::connectViews() {
    connect(m_differencesOnly, &QCheckBox::toggled, m_proxy,
            &CompareFilterProxy::setDifferencesOnly);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &CompareFilterProxy::setFilterFixedString);
    connect(m_tensorView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                // A group shows no tensor (-1).
                showTensor(current.isValid()
                               ? current.data(CompareTensorModel::TensorIndexRole).toInt()
                               : -1);
            });
}
