#include "tensor/tensorvaluesview.h"

#include "common/plaintext.h"
#include "gguf/blockpanel.h"
#include "tensor/tensorvaluesmodel.h"
#include "widgets/rowheight.h"
#include "widgets/valuewidth.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QEvent>
#include <QFontMetrics>
#include <QHeaderView>
#include <QLabel>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

TensorValuesView::TensorValuesView(QWidget* parent)
    : QWidget(parent), m_model(new TensorValuesModel(this)) {
    auto* layout = new QVBoxLayout(this);
    m_selectors = new QHBoxLayout;
    layout->addLayout(m_selectors);
    m_note = new QLabel;
    m_note->setWordWrap(true);
    m_note->setTextFormat(Qt::RichText); // file text in it is escaped once
    layout->addWidget(m_note);
    m_table = new QTableView;
    m_table->setModel(m_model);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    // Fixed section sizes: the view never asks the model for every row.
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->horizontalHeader()->setDefaultSectionSize(valueColumnWidth());
    rowheight::followFont(m_table, 6);
    m_blockPanel = new BlockPanel;
    m_body = new QSplitter;
    m_body->addWidget(m_table);
    m_body->addWidget(m_blockPanel);
    m_body->setStretchFactor(0, 1);
    m_body->setStretchFactor(1, 0);
    m_body->setChildrenCollapsible(false);
    layout->addWidget(m_body, 1);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) {
                m_blockPanel->showElement(current.isValid() ? std::optional(m_model->linearIndex(
                                                                  current.row(), current.column()))
                                                            : std::nullopt);
            });
    // A new slice or tensor leaves no element selected.
    connect(m_model, &QAbstractItemModel::modelReset, this,
            [this] { m_blockPanel->showElement(std::nullopt); });

    auto* copy = new QAction(tr("&Copy"), this);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(copy, &QAction::triggered, this, &TensorValuesView::copySelection);
    m_table->addAction(copy);
    m_table->setContextMenuPolicy(Qt::ActionsContextMenu);
    connect(m_model, &TensorValuesModel::readFailed, this, [this](const QString& message) {
        m_note->setText(
            QStringLiteral("<span style='color:#d33'>%1</span>").arg(message.toHtmlEscaped()));
    });
}

void TensorValuesView::setTensor(std::shared_ptr<const ckptscope::Document> document, int tensor) {
    m_blockPanel->setTensor(document, tensor);
    m_model->setTensor(std::move(document), tensor);
    m_table->horizontalHeader()->setDefaultSectionSize(valueColumnWidth());
    rebuildSelectors();
    placeBlockPanel();
    // The Block panel starts at the first element (current, not selected).
    if (m_blockPanel->applies() && m_model->rowCount() > 0)
        m_table->selectionModel()->setCurrentIndex(m_model->index(0, 0),
                                                   QItemSelectionModel::NoUpdate);
}

void TensorValuesView::rebuildSelectors() {
    while (QLayoutItem* item = m_selectors->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    const auto dims = m_model->leadingDimensions();
    QStringList notes;
    if (!dims.empty()) {
        m_selectors->addWidget(new QLabel(tr("Slice:")));
        for (size_t d = 0; d < dims.size(); ++d) {
            auto* spin = new QSpinBox;
            spin->setPrefix(QStringLiteral("dim %1 = ").arg(d));
            spin->setRange(0, int(std::min<uint64_t>(dims[d] ? dims[d] - 1 : 0, INT_MAX)));
            spin->setSuffix(QStringLiteral(" / %1").arg(dims[d]));
            connect(spin, &QSpinBox::valueChanged, this, [this, d](int v) {
                auto idx = m_model->leadingIndices();
                idx[d] = uint64_t(v);
                m_model->setLeadingIndices(idx);
            });
            m_selectors->addWidget(spin);
        }
        m_selectors->addWidget(new QLabel(tr("showing the last two dimensions")));
        m_selectors->addStretch();
    }
    if (const QString why = m_model->layoutNote(); !why.isEmpty())
        notes << plainToHtml(why);
    if (m_model->truncated())
        notes << tr("Only the first %1 rows are shown.").arg(INT_MAX);
    m_note->setText(notes.join(QLatin1Char(' ')));
}

int TensorValuesView::valueColumnWidth() const {
    const auto dtype = m_model->dtype();
    return valuewidth::ofDtype(m_table, dtype ? *dtype : ckptscope::Dtype::F32);
}

void TensorValuesView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) {
        m_table->horizontalHeader()->setDefaultSectionSize(valueColumnWidth());
        placeBlockPanel();
    }
}

void TensorValuesView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    placeBlockPanel();
}

void TensorValuesView::placeBlockPanel() {
    // The panel's width from its widest usual row, not from its sizeHint:
    // that changes as each element's block arrives, and the layout must not
    // flip with the selection.
    const QFontMetrics fm(m_blockPanel->font());
    const int panel = fm.horizontalAdvance(QStringLiteral("super-block min dmin: ")) +
                      fm.horizontalAdvance(QStringLiteral("0.004220724 · 15 − 0.031207085")) +
                      4 * style()->pixelMetric(QStyle::PM_LayoutLeftMargin);
    const int table = m_table->verticalHeader()->sizeHint().width() +
                      3 * m_table->horizontalHeader()->defaultSectionSize() +
                      style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 2 * m_table->frameWidth();
    const int margins = contentsMargins().left() + contentsMargins().right() +
                        layout()->contentsMargins().left() + layout()->contentsMargins().right();
    m_body->setOrientation(
        width() - margins >= table + m_body->handleWidth() + panel ? Qt::Horizontal : Qt::Vertical);
}

QString TensorValuesView::selectionText() const {
    // Ctrl+A on a 100M-value tensor must not read it all on the GUI thread:
    // count the cells from the selection ranges first.
    qint64 cellCount = 0;
    for (const QItemSelectionRange& r : m_table->selectionModel()->selection())
        cellCount += qint64(r.width()) * r.height();
    if (cellCount > kMaxCopyCells)
        return {};
    // Rows and columns of the selection, in order, gaps left empty.
    std::map<int, std::map<int, QString>> cells;
    int minCol = INT_MAX, maxCol = -1;
    for (const QModelIndex& idx : m_table->selectionModel()->selectedIndexes()) {
        cells[idx.row()][idx.column()] = idx.data().toString();
        minCol = std::min(minCol, idx.column());
        maxCol = std::max(maxCol, idx.column());
    }
    QStringList lines;
    for (const auto& [row, cols] : cells) {
        QStringList line;
        for (int c = minCol; c <= maxCol; ++c) {
            const auto it = cols.find(c);
            line << (it == cols.end() ? QString() : it->second);
        }
        lines << line.join(QLatin1Char('\t'));
    }
    return lines.join(QLatin1Char('\n'));
}

bool TensorValuesView::isReading() const {
    return m_model->pendingReads() > 0 || m_blockPanel->isReading();
}

void TensorValuesView::copySelection() const {
    const QString text = selectionText();
    // Cells whose values are still being read would paste as "…": asking for
    // them (selectionText did) and saying so beats copying a placeholder.
    if (m_model->pendingReads() > 0 && text.contains(TensorValuesModel::placeholder())) {
        m_note->setText(tr("The selected values are still being read; copy again once they "
                           "show."));
        return;
    }
    if (text.isEmpty() && m_table->selectionModel()->hasSelection()) {
        m_note->setText(tr("The selection is larger than %1 values; copy a smaller part, or use "
                           "ckptscope-cli for whole tensors.")
                            .arg(kMaxCopyCells));
        return;
    }
    QApplication::clipboard()->setText(text);
}
