#include "browser/optimizerstateview.h"

#include "common/documentsummary.h"

#include "common/naturalorder.h"
#include "common/naturalsortproxy.h"
#include "common/sizeformat.h"
#include "tensor/hexmodel.h"
#include "tensor/tensorpage.h"
#include "widgets/rowheight.h"

#include <QCheckBox>
#include <QHeaderView>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cstring>

OptimizerStateView::OptimizerStateView(QWidget* parent)
    : QWidget(parent), m_blobs(new QStandardItemModel(this)), m_sorted(new NaturalSortProxy(this)),
      m_hex(new HexModel(this)) {
    m_sorted->setSourceModel(m_blobs);
    m_sorted->setSortRole(Qt::UserRole + 1); // names naturally, bytes by number
    auto* layout = new QVBoxLayout(this);
    auto* split = new QSplitter(Qt::Vertical);
    auto* top = new QSplitter;
    m_blobTable = new QTableView;
    m_blobTable->setModel(m_sorted);
    m_blobTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_blobTable->setSelectionMode(QAbstractItemView::SingleSelection);
    m_blobTable->horizontalHeader()->setStretchLastSection(true);
    m_blobTable->setSortingEnabled(true);
    top->addWidget(m_blobTable);
    auto* hexView = new QTableView;
    hexView->setModel(m_hex);
    hexView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    hexView->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    rowheight::followFont(hexView, 4);
    hexView->setShowGrid(false);
    top->addWidget(hexView);
    top->setSizes({300, 600});
    split->addWidget(top);
    auto* bottom = new QWidget;
    auto* bottomLayout = new QVBoxLayout(bottom);
    bottomLayout->setContentsMargins(0, 0, 0, 0);
    m_asF32 = new QCheckBox(tr("Interpret as f32 (little-endian)"));
    m_asF32->setChecked(true);
    m_asF32->setToolTip(tr("Adam moments and similar states are usually f32 arrays"));
    bottomLayout->addWidget(m_asF32, 0, Qt::AlignLeft);
    m_stats = new TensorPage;
    bottomLayout->addWidget(m_stats, 1);
    split->addWidget(bottom);
    layout->addWidget(split);

    connect(m_blobTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this] {
        const std::vector<uint8_t>* bytes = selectedBytes();
        m_hex->setBytes(bytes);
        m_asF32->setEnabled(bytes && bytes->size() % 4 == 0 && !bytes->empty());
        m_stats->clear();
        if (m_asF32->isChecked())
            interpretAsF32();
    });
    connect(m_asF32, &QCheckBox::toggled, this, [this](bool on) {
        if (on)
            interpretAsF32();
        else
            m_stats->clear();
    });
}

void OptimizerStateView::setDocument(std::shared_ptr<const ckptscope::Document> document) {
    m_document = std::move(document);
    m_hex->setBytes(nullptr);
    m_stats->clear();
    m_blobs->clear();
    m_blobs->setHorizontalHeaderLabels({tr("Name"), tr("Bytes")});
    m_asF32->setEnabled(false);
    const auto* g = m_document ? m_document->gradient() : nullptr;
    if (!g)
        return;
    // Rows in natural order in the model too, so row N is the Nth shown.
    std::vector<const std::pair<const std::string, std::vector<uint8_t>>*> blobs;
    for (const auto& blob : g->optimizerState)
        blobs.push_back(&blob);
    std::stable_sort(blobs.begin(), blobs.end(), [](const auto* a, const auto* b) {
        return naturalLess(QString::fromStdString(a->first), QString::fromStdString(b->first));
    });
    for (const auto* blob : blobs) {
        const std::string& name = blob->first;
        const std::vector<uint8_t>& bytes = blob->second;
        auto* nameItem = new QStandardItem(QString::fromStdString(name));
        nameItem->setData(QString::fromStdString(name), Qt::UserRole);
        nameItem->setData(QString::fromStdString(name), Qt::UserRole + 1); // sort key
        nameItem->setEditable(false);
        auto* size = new QStandardItem(humanBytes(bytes.size()));
        size->setData(qulonglong(bytes.size()), Qt::UserRole + 1);
        size->setEditable(false);
        m_blobs->appendRow({nameItem, size});
    }
    m_blobTable->sortByColumn(0, Qt::AscendingOrder);
    m_blobTable->resizeColumnToContents(0);
    if (m_blobs->rowCount() > 0)
        selectBlob(0);
}

const std::vector<uint8_t>* OptimizerStateView::selectedBytes(QString* name) const {
    const QModelIndex current = m_blobTable->currentIndex();
    const auto* g = m_document ? m_document->gradient() : nullptr;
    if (!current.isValid() || !g)
        return nullptr;
    const QString key = current.siblingAtColumn(0).data(Qt::UserRole).toString();
    const auto it = g->optimizerState.find(key.toStdString());
    if (it == g->optimizerState.end())
        return nullptr;
    if (name)
        *name = key;
    return &it->second;
}

void OptimizerStateView::selectBlob(int row) {
    m_blobTable->setCurrentIndex(m_sorted->index(row, 0));
}

bool OptimizerStateView::interpretAsF32() {
    QString name;
    const std::vector<uint8_t>* bytes = selectedBytes(&name);
    if (!bytes || bytes->empty() || bytes->size() % 4 != 0)
        return false;
    // The reader holds the document, so the bytes outlive the computation.
    auto doc = m_document;
    const uint8_t* raw = bytes->data();
    m_stats->setValues(name,
                       tr("optimizer state read as %1, little-endian")
                           .arg(countNoun(bytes->size() / 4, tr("f32 value"), tr("f32 values"))),
                       bytes->size() / 4, [doc, raw](uint64_t first, uint64_t n, float* out) {
                           std::memcpy(out, raw + first * 4, size_t(n) * 4);
                       });
    return true;
}
