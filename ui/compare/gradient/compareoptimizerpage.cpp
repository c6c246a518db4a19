#include "compare/gradient/compareoptimizerpage.h"
#include "widgets/wrapanywherelabel.h"

#include "widgets/rowheight.h"
#include "compare/comparedetail.h"
#include "compare/comparehistogramview.h"
#include "compare/comparestatsmodel.h"
#include "compare/comparetensormodel.h"
#include "compare/gradient/compareblobmodel.h"
#include "tensor/histogramview.h"

#include "ckptscope/common/numberformat.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

using namespace ckptscope;

namespace {
constexpr int kBins = 64;
}

CompareOptimizerPage::CompareOptimizerPage(QWidget* parent)
    : QWidget(parent), m_blobs(new CompareBlobModel(this)), m_stats(new CompareStatsModel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* split = new QSplitter(Qt::Vertical);
    m_table = new QTableView;
    m_table->setModel(m_blobs);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    rowheight::followFont(m_table, 4);
    m_table->horizontalHeader()->setStretchLastSection(true);
    split->addWidget(m_table);

    auto* detail = new QWidget;
    auto* detailLayout = new QVBoxLayout(detail);
    detailLayout->setContentsMargins(0, 0, 0, 0);
    m_title = new WrapAnywhereLabel;
    detailLayout->addWidget(m_title);
    auto* figures = new QSplitter;
    auto* statsView = new QTableView;
    showCompareStats(statsView, m_stats);
    figures->addWidget(statsView);
    auto* charts = new QSplitter(Qt::Vertical);
    m_overlay = new CompareHistogramView;
    m_overlay->chart()->setTitle(tr("Values of A and B as f32 (same bins)"));
    charts->addWidget(m_overlay);
    m_delta = new HistogramView;
    m_delta->chart()->setTitle(tr("B − A over the pairs finite on both sides"));
    charts->addWidget(m_delta);
    figures->addWidget(charts);
    figures->setSizes({380, 520});
    detailLayout->addWidget(figures, 1);
    split->addWidget(detail);
    split->setSizes({180, 560});
    layout->addWidget(split);

    connect(
        m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        [this](const QModelIndex& current) { showBlob(current.isValid() ? current.row() : -1); });
    showBlob(-1);
}

CompareOptimizerPage::~CompareOptimizerPage() = default;

void CompareOptimizerPage::setResult(std::shared_ptr<const CompareResult> result) {
    m_task.cancel();
    m_result = result && result->gradient ? std::move(result) : nullptr;
    m_blobs->setBlobs(m_result ? m_result->gradient->optimizerState : std::vector<BlobDiff>{});
    m_table->resizeColumnsToContents();
    // Open on the first blob that differs, else the first.
    int first = m_blobs->rowCount() > 0 ? 0 : -1;
    for (int r = 0; r < m_blobs->rowCount(); ++r)
        if (m_blobs->blob(r)->status != DiffStatus::Same) {
            first = r;
            break;
        }
    selectBlob(first);
}

void CompareOptimizerPage::selectBlob(int row) {
    if (row >= 0 && row == m_table->currentIndex().row())
        showBlob(row); // already current: show it afresh
    else
        m_table->setCurrentIndex(m_blobs->index(row, 0));
    if (row < 0)
        showBlob(-1);
}

QString CompareOptimizerPage::title() const {
    return m_title->text();
}

void CompareOptimizerPage::showBlob(int row) {
    // Nothing of the previous selection stays on screen.
    m_task.cancel();
    m_stats->clear();
    m_overlay->clear();
    m_delta->clear();
    m_row = row;
    const BlobDiff* blob = m_blobs->blob(row);
    if (!blob || !m_result) {
        m_title->setText(m_blobs->rowCount() == 0 ? tr("Neither checkpoint has optimizer state.")
                                                  : tr("Select a blob to compare its values."));
        return;
    }
    const QString name = QString::fromStdString(blob->name);
    QString how;
    if (blob->f32)
        how = tr("read as %1 f32 values (little-endian) on both sides")
                  .arg(QString::fromStdString(fmt::grouped(blob->f32->count)));
    else if (blob->bytesA && blob->bytesB && *blob->bytesA != *blob->bytesB)
        how = tr("lengths differ: no element comparison; each side read as f32 where its length "
                 "is a multiple of 4");
    else if (blob->bytesA && blob->bytesB)
        how = tr("length not a multiple of 4: compared bytewise only");
    else
        how = tr("on one side only; read as f32 where its length is a multiple of 4");
    m_title->setText(
        tr("%1 — %2; %3").arg(name, CompareTensorModel::statusText(blob->status), how));
    if (blob->f32)
        m_delta->setHistogram(blob->f32->histogram);
    const auto result = m_result; // keeps both documents (and their bytes) alive
    const std::string key = blob->name;
    BackgroundTask::Handlers handlers;
    handlers.failed = [this](const QString& message) { m_title->setText(message); };
    m_task.start(
        [result, key](BackgroundTask::Run& run) {
            auto bytes = [&key](const GradientCheckpoint* g) -> const std::vector<uint8_t>* {
                const auto it = g->optimizerState.find(key);
                return it == g->optimizerState.end() ? nullptr : &it->second;
            };
            return computeBlobDetail(bytes(result->a->gradient()), bytes(result->b->gradient()),
                                     kBins, run.cancelFlag(),
                                     [&run](double p) { run.progress(p); });
        },
        [this](const CompareDetail& detail) { showDetail(detail); }, std::move(handlers));
}

void CompareOptimizerPage::showDetail(const CompareDetail& detail) {
    const BlobDiff* blob = m_blobs->blob(m_row);
    if (!blob)
        return;
    m_stats->setValues(detail.statsA(), detail.statsB(), blob->f32);
    m_overlay->setHistograms(detail.overlayA, detail.overlayB);
    Q_EMIT detailShown(m_row);
}
