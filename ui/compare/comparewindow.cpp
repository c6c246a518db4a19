#include "compare/comparewindow.h"

#include "common/filelocation.h"
#include "common/plaintext.h"
#include "common/reloadwatcher.h"
#include "common/tolerancevalidator.h"
#include "compare/comparedetail.h"
#include "compare/comparefilterproxy.h"
#include "compare/comparehistogramview.h"
#include "compare/comparemetadatamodel.h"
#include "compare/comparestatsmodel.h"
#include "compare/comparesummary.h"
#include "compare/comparetensormodel.h"
#include "compare/comparevaluesmodel.h"
#include "compare/gradient/comparechanges.h"
#include "compare/gradient/comparefieldsmodel.h"
#include "compare/gradient/comparegraphpage.h"
#include "compare/gradient/compareoptimizerpage.h"
#include "tensor/histogramview.h"
#include "widgets/notificationbar.h"
#include "widgets/valuewidth.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/formats/dtype.h"

#include <QCheckBox>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>

using namespace ckptscope;

namespace {

constexpr int kBins = 64;
QString q(const std::string& s) {
    return QString::fromStdString(s);
}

std::string local(const QString& path) {
    return QFile::encodeName(path).toStdString();
}

} // namespace

CompareWindow::CompareWindow(QWidget* parent) : QMainWindow(parent) {
    setAttribute(Qt::WA_DeleteOnClose);
    buildUi();
    resize(1300, 820);
    updateTitle();

    connect(m_notification, &NotificationBar::actionTriggered, this, &CompareWindow::recompare);
    // A training job rewrites a side: compare again once it settles.
    for (ReloadWatcher*& watch : m_watch) {
        watch = new ReloadWatcher(this);
        connect(watch, &ReloadWatcher::changed, this, [this](const QStringList& files) {
            m_changedFiles << files; // with a change still being compared
            startComparison();
        });
        connect(watch, &ReloadWatcher::gone, this, [this](const QString& file) {
            m_notification->showMessage(
                NotificationBar::Kind::Error,
                tr("%1 was deleted or moved; the comparison shows it as it was.")
                    .arg(file.toHtmlEscaped()),
                tr("Retry"));
        });
    }
}

CompareWindow::~CompareWindow() {
    // A tolerance field losing focus as the window goes must not compare
    // again in a half-destroyed window (editingFinished on focus-out).
    disconnect(m_atolEdit, nullptr, this, nullptr);
    disconnect(m_rtolEdit, nullptr, this, nullptr);
}

void CompareWindow::compare(const QString& pathA, const QString& pathB) {
    m_pathA = pathA;
    m_pathB = pathB;
    updateTitle();
    watchSides();
    m_changedFiles.clear();
    recompare();
    m_keep = {}; // other files: open on their most changed tensor
}

void CompareWindow::recompare() {
    m_changedFiles.clear(); // asked for: no file change to report
    startComparison();
}

void CompareWindow::startComparison() {
    if (m_pathA.isEmpty() || m_pathB.isEmpty())
        return;
    m_comparing = {m_pathA, m_pathB};
    // The same pair again (reload, swap, tolerance): the same tensor and page.
    if (const TensorDiffEntry* e = m_tensorModel->entry(m_detailRow))
        m_keep.tensor = q(e->name);
    if (m_result)
        m_keep.page = m_tabs->currentWidget();
    for (ReloadWatcher* watch : m_watch) { // the files as the comparison reads them
        watch->rearm();
        watch->loading();
    }
    m_progress->setValue(0);
    m_progress->show();
    m_cancel->show();
    statusBar()->showMessage(tr("Comparing…"));
    const std::string a = local(m_pathA), b = local(m_pathB);
    const double atol = m_tolerance.atol, rtol = m_tolerance.rtol;
    BackgroundTask::Handlers handlers;
    handlers.progress = [this](double p) { m_progress->setValue(int(p * 1000)); };
    handlers.failed = [this](const QString& message) { showFailure(message); };
    m_task.start(
        [a, b, atol, rtol](BackgroundTask::Run& run) {
            DiffOptions o;
            o.atol = atol;
            o.rtol = rtol;
            o.bins = kBins;
            o.cancel = run.cancelFlag();
            o.progress = [&run](double p) { run.progress(p); };
            return runComparison(a, b, o);
        },
        [this](std::shared_ptr<CompareResult> result) { showResult(std::move(result)); },
        std::move(handlers));
}

void CompareWindow::cancel() {
    const bool comparing = m_task.isRunning();
    m_task.cancel();
    m_detailTask.cancel();
    if (comparing) {
        m_progress->hide();
        m_cancel->hide();
        statusBar()->showMessage(tr("Comparison cancelled"));
        m_changedFiles.clear();
    }
}

void CompareWindow::swapSides() {
    if (m_pathA.isEmpty())
        return;
    std::swap(m_pathA, m_pathB);
    std::swap(m_watch[0], m_watch[1]); // each file's watch, and what it saw, goes along
    updateTitle();
    recompare();
}

bool CompareWindow::setTolerance(const QString& atol, const QString& rtol) {
    const auto a = ToleranceValidator::value(atol), r = ToleranceValidator::value(rtol);
    if (!a || !r)
        return false;
    m_atolEdit->setText(atol.trimmed());
    m_rtolEdit->setText(rtol.trimmed());
    Tolerance t;
    t.atol = *a;
    t.rtol = *r;
    t.atolText = atol.trimmed().isEmpty() ? QStringLiteral("0") : atol.trimmed();
    t.rtolText = rtol.trimmed().isEmpty() ? QStringLiteral("0") : rtol.trimmed();
    if (t.atol == m_tolerance.atol && t.rtol == m_tolerance.rtol)
        return true;
    m_tolerance = t;
    recompare();
    return true;
}

void CompareWindow::applyToleranceFields() {
    setTolerance(m_atolEdit->text(), m_rtolEdit->text());
}

void CompareWindow::setDifferencesOnly(bool on) {
    m_differencesOnly->setChecked(on);
}

void CompareWindow::selectTensor(int tensor) {
    const QModelIndex i = m_proxy->mapFromSource(m_tensorModel->indexOfTensor(tensor));
    if (i.isValid() && i == m_tensorView->currentIndex().siblingAtColumn(0)) {
        showTensor(tensor); // already current: show it afresh
        return;
    }
    m_tensorView->setCurrentIndex(i);
    if (i.isValid())
        m_tensorView->scrollTo(i); // opens the groups above it
}

QString CompareWindow::errorText() const {
    return m_notification->isHidden() ? QString() : m_notification->text();
}

QString CompareWindow::summaryText() const {
    return m_summary->text();
}

void CompareWindow::updateTitle() {
    const auto [a, b] = filelocation::pairLabels(m_pathA, m_pathB);
    setWindowTitle(tr("%1 ↔ %2 — Ckptscope").arg(a, b));
}

void CompareWindow::watchSides() {
    const QString paths[2] = {m_pathA, m_pathB};
    for (int side = 0; side < 2; ++side) {
        // Every shard of a model, from the result when it is of this path
        // (a folder's document is its index).
        const auto& doc = !m_result ? nullptr : side == 0 ? m_result->a : m_result->b;
        const bool shown = doc && m_compared[size_t(side)] == paths[side];
        m_watch[side]->watch(paths[side],
                             shown ? filelocation::localFiles(doc->sourceNames()) : QStringList());
    }
}

void CompareWindow::showFailure(const QString& message) {
    m_progress->hide();
    m_cancel->hide();
    statusBar()->clearMessage();
    m_changedFiles.clear();
    watchSides(); // a writer still at work: compared again when it is done
    // Whatever was shown stays; the message says which side failed.
    m_notification->showMessage(NotificationBar::Kind::Error,
                                tr("Could not compare: side %1").arg(message), tr("Retry"));
    Q_EMIT comparisonFailed(message);
}

void CompareWindow::showResult(std::shared_ptr<CompareResult> result) {
    m_progress->hide();
    m_cancel->hide();
    statusBar()->clearMessage();
    m_notification->hide();
    m_result = std::move(result);
    m_compared = m_comparing; // the newest comparison is the one delivered
    watchSides();
    m_shownTolerance = m_tolerance; // the newest comparison is the one delivered
    const bool tensors = m_result->tensors.has_value();
    const auto [a, b] = filelocation::pairLabels(m_pathA, m_pathB);
    if (tensors) {
        const TensorDiff& d = *m_result->tensors;
        m_tensorDiff = std::shared_ptr<const TensorDiff>(m_result, &*m_result->tensors);
        m_tensorModel->setDiff(m_tensorDiff, m_result->b);
        // The whole tree open while it is small enough to read.
        if (m_tensorModel->tensorCount() <= 2000)
            m_tensorView->expandAll();
        else
            m_tensorView->expandToDepth(0);
        // Columns that would stay empty take no room.
        m_tensorView->setColumnHidden(CompareTensorModel::Dtype, !m_tensorModel->anyDtypeDiffers());
        m_tensorView->setColumnHidden(CompareTensorModel::NonFinite,
                                      d.summary.nonFiniteMismatch == 0);
        // A quantization report: cosine and B's bits per weight.
        for (int c : {CompareTensorModel::Cosine, CompareTensorModel::BitsPerWeight})
            m_tensorView->setColumnHidden(c, !m_tensorModel->quantizationReport());
        fitTreeColumns();
        fitTreeWidth(m_statsWidth); // what fitStats found, once it has run
        m_metadataModel->setRows(d.metadata);
        m_changesModel->clear();
        const Tolerance& tol = m_shownTolerance;
        const QString tolerance =
            tol.atol == 0 && tol.rtol == 0
                ? tr("values compared exactly")
                : tr("values equal within |Δ| ≤ %1 + %2·|a|")
                      .arg(tol.atolText.toHtmlEscaped(), tol.rtolText.toHtmlEscaped());
        // A GGUF against its Hugging Face model pairs under llama.cpp's names.
        const QString paired =
            d.nameMap.empty()
                ? tolerance
                : tolerance + tr("; tensors paired by llama.cpp's names for %1 (q/k rows in A's "
                                 "order)")
                                  .arg(QString::fromStdString(d.nameMap).toHtmlEscaped());
        m_summary->setText(comparesummary::tensorSummary(d, a, b, paired));
        m_tabs->setTabVisible(m_tabs->indexOf(m_tensorPage), true);
        m_tabs->setTabVisible(m_tabs->indexOf(m_valuesPage), true);
        showGradientPages(false);
        m_tensorListPanel->show();
        m_tabs->setCurrentWidget(m_tensorPage);
        // Open on the tensor shown before (the same pair compared again), else
        // on the most changed one (NaN/Inf mismatches first, then rel. L2).
        int shown = mostChangedTensor(d);
        for (size_t r = 0; !m_keep.tensor.isEmpty() && r < d.tensors.size(); ++r)
            if (q(d.tensors[r].name) == m_keep.tensor) {
                shown = int(r);
                break;
            }
        if (m_keep.page && m_tabs->isTabVisible(m_tabs->indexOf(m_keep.page)))
            m_tabs->setCurrentWidget(m_keep.page);
        m_keep = {};
        if (shown >= 0)
            selectTensor(shown);
        else
            showTensor(-1);
    } else {
        const GradientDiff& g = *m_result->gradient;
        m_tensorDiff.reset();
        m_tensorModel->setDiff(nullptr);
        m_metadataModel->setRows({});
        fillGradientChanges(m_changesModel, g);
        m_summary->setText(comparesummary::gradientSummary(g, a, b));
        m_tabs->setTabVisible(m_tabs->indexOf(m_tensorPage), false);
        m_tabs->setTabVisible(m_tabs->indexOf(m_valuesPage), false);
        showGradientPages(true);
        m_tensorListPanel->hide();
        m_tabs->setCurrentWidget(m_graphPage);
    }
    if (!m_changedFiles.isEmpty()) { // say why the view changed by itself
        QStringList names;
        for (const QString& f : m_changedFiles)
            if (!names.contains(filelocation::displayName(f)))
                names << filelocation::displayName(f);
        statusBar()->showMessage(
            tr("%1 changed on disk; compared again.").arg(names.join(QStringLiteral(", "))));
        m_changedFiles.clear();
    }
    Q_EMIT comparisonFinished();
}

void CompareWindow::showGradientPages(bool on) {
    const std::shared_ptr<const CompareResult> r = on ? m_result : nullptr;
    m_graphPage->setResult(r);
    m_fieldsModel->setFields(r ? r->gradient->fields : std::vector<FieldDiff>{});
    m_fieldsView->resizeColumnsToContents();
    m_optimizerPage->setResult(r);
    for (QWidget* page : {static_cast<QWidget*>(m_graphPage), static_cast<QWidget*>(m_fieldsView),
                          static_cast<QWidget*>(m_optimizerPage)})
        m_tabs->setTabVisible(m_tabs->indexOf(page), on);
    // Gradient checkpoints hold no tensors and no flat metadata: no empty pages.
    for (QWidget* page : {m_tensorPage, m_valuesPage, m_metadataPage})
        m_tabs->setTabVisible(m_tabs->indexOf(page), !on);
    // Nor a tensor filter with no tensors to filter (the tolerances stay:
    // they apply to the optimizer state's f32 comparison).
    for (QAction* action : m_tensorToolActions + m_tensorMenuActions)
        action->setVisible(!on);
}

void CompareWindow::showTensor(int sourceRow) {
    // Nothing of the previous selection stays on screen.
    m_detailTask.cancel();
    m_statsModel->clear();
    m_overlay->clear();
    m_delta->clear();
    m_detailRow = sourceRow;
    const TensorDiffEntry* e = m_tensorModel->entry(sourceRow);
    m_valuesModel->setTolerance(m_shownTolerance.atol, m_shownTolerance.rtol);
    m_valuesModel->setTensor(m_result ? m_result->a : nullptr, m_result ? m_result->b : nullptr,
                             m_result ? e : nullptr);
    if (!e || !m_result) {
        m_tensorTitle->setText(tr("Select a tensor to compare its values."));
        return;
    }
    QString title =
        tr("<b>%1</b> — %2")
            .arg(shownText(e->name).toHtmlEscaped(), CompareTensorModel::statusText(e->status));
    if (const QString inB = CompareTensorModel::nameInB(*e); !inB.isEmpty())
        title += QStringLiteral("<br>") + inB.toHtmlEscaped();
    // Values without statistics of their own (hasStatistics): say what Δ's
    // figures are of instead.
    const auto sideIs = [](const std::shared_ptr<const Document>& doc, std::optional<size_t> i,
                           bool (*is)(Dtype)) { return doc && i && is(doc->tensors()[*i].dtype); };
    const auto eitherIs = [&](bool (*is)(Dtype)) {
        return sideIs(m_result->a, e->indexA, is) || sideIs(m_result->b, e->indexB, is);
    };
    if (eitherIs(isComplex))
        title += QStringLiteral("<br>") +
                 tr("Complex values: statistics and value histograms are not computed for "
                    "them; Δ's figures and histogram are of |b − a|.");
    else if (eitherIs(isQuantized))
        title += QStringLiteral("<br>") +
                 tr("Quantized values: statistics and value histograms are not computed for "
                    "them; Δ's figures are of their stored integers.");
    if (e->elements) {
        m_delta->setHistogram(e->elements->histogram);
        for (const std::string& w : overflowedFigures(*e->elements)) // F64 near ±max
            title += QStringLiteral("<br>⚠ ") + q(w).toHtmlEscaped();
    }
    m_tensorTitle->setText(title);
    const auto result = m_result; // keeps both documents alive while read
    const TensorDiffEntry entry = *e;
    BackgroundTask::Handlers handlers;
    handlers.failed = [this](const QString& message) {
        m_notification->showMessage(NotificationBar::Kind::Error, message, tr("Reload"));
    };
    m_detailTask.start(
        [result, entry](BackgroundTask::Run& run) {
            return computeCompareDetail(*result->a, *result->b, entry, kBins, run.cancelFlag(),
                                        [&run](double p) { run.progress(p); });
        },
        [this](const CompareDetail& detail) { showDetail(m_detailRow, detail); },
        std::move(handlers));
}

void CompareWindow::showDetail(int sourceRow, const CompareDetail& detail) {
    const TensorDiffEntry* e = m_tensorModel->entry(sourceRow);
    if (!e)
        return;
    m_statsModel->setValues(detail.statsA(), detail.statsB(), e->elements);
    fitStats();
    // The widths fitted to the detail can bring the tree a horizontal scroll
    // bar, which would cover a selected row at its foot: back into view.
    if (const QModelIndex current = m_tensorView->currentIndex(); current.isValid())
        m_tensorView->scrollTo(current);
    m_overlay->setHistograms(detail.overlayA, detail.overlayB);
    Q_EMIT detailShown(sourceRow);
}
