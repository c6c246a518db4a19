#include "tensor/tensorpage.h"
#include "widgets/wrapanywherelabel.h"

#include "common/documentsummary.h"
#include "common/plaintext.h"
#include "common/sizeformat.h"
#include "tensor/histogramview.h"
#include "tensor/statsrunner.h"

#include "ckptscope/stats/documentstats.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QProgressBar>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

namespace {
const char* kInfoRows[] = {"Shape", "Stored values", "Elements",
                           "Bytes", "Data offset",   "Data type"};
const char* kStatKeys[] = {"min", "max", "mean", "std", "l2", "zeros", "nan", "+inf", "-inf"};
const char* kStatLabels[] = {"Min",   "Max", "Mean", "Std dev", "L2 norm",
                             "Zeros", "NaN", "+Inf", "−Inf"};
const char* kOptimizerKeys[] = {"update_rms",  "update_max",          "update_to_weight",
                                "exp_avg_rms", "exp_avg_sq_sqrt_rms", "decay_rms"};
const char* kOptimizerLabels[] = {"Update RMS",  "Update max |u|",  "Update / weight",
                                  "exp_avg RMS", "√exp_avg_sq RMS", "Decay RMS"};
const char* kOptimizerTips[] = {
    "RMS of u = lr · m̂ / (√v̂ + eps) (Adam) or lr · momentum_buffer (SGD)",
    "the largest |u| of any element",
    "RMS(u) / RMS(w): about 1e-3 in a healthy run",
    "RMS of Adam's first moment",
    "RMS of √exp_avg_sq, Adam's running scale of the gradients",
    "RMS of lr · weight_decay · w, the decoupled decay (AdamW)"};
} // namespace

TensorPage::TensorPage(QWidget* parent) : QWidget(parent), m_runner(new StatsRunner(this)) {
    auto* layout = new QVBoxLayout(this);
    m_title = new WrapAnywhereLabel;
    QFont big = m_title->font();
    big.setPointSizeF(big.pointSizeF() * 1.3);
    big.setBold(true);
    m_title->setFont(big);
    // Names are shown made printable (shownText); the notes below are HTML
    // with the file's text escaped once. Never let Qt guess (Qt::AutoText).
    m_title->setTextFormat(Qt::PlainText);
    m_description = new WrapAnywhereLabel;
    m_description->setTextFormat(Qt::RichText);
    layout->addWidget(m_title);
    layout->addWidget(m_description);

    layout->addLayout(buildFigures());
    layout->addWidget(buildOptimizerBox());
    layout->addLayout(buildControls());
    m_histogram = new HistogramView;
    layout->addWidget(m_histogram, 1);
    connectControls();
    clear();
}

// The layout rows (shape, bytes…) beside the statistics grid.
QLayout* TensorPage::buildFigures() {
    auto* top = new QHBoxLayout;
    auto* infoBox = new QGroupBox(tr("Layout"));
    auto* form = new QFormLayout(infoBox);
    for (const char* row : kInfoRows) {
        auto* value = new QLabel;
        value->setTextFormat(Qt::PlainText);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        form->addRow(tr(row), value);
        m_info << value;
    }
    auto* statsBox = new QGroupBox(tr("Statistics (finite values)"));
    auto* grid = new QGridLayout(statsBox);
    for (int i = 0; i < 9; ++i) {
        auto* value = new QLabel(missingText());
        value->setTextFormat(Qt::PlainText);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        value->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
        grid->addWidget(new QLabel(tr(kStatLabels[i])), i % 5, (i / 5) * 2);
        grid->addWidget(value, i % 5, (i / 5) * 2 + 1);
        m_stats.insert(QString::fromLatin1(kStatKeys[i]), value);
    }
    top->addWidget(infoBox, 1);
    top->addWidget(statsBox, 2);
    return top;
}

// The optimizer's last update of this tensor's parameter (hidden without).
QGroupBox* TensorPage::buildOptimizerBox() {
    m_optimizerBox = new QGroupBox;
    auto* grid = new QGridLayout(m_optimizerBox);
    for (int i = 0; i < int(std::size(kOptimizerKeys)); ++i) {
        auto* value = new QLabel;
        value->setTextFormat(Qt::PlainText);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        value->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
        auto* label = new QLabel(tr(kOptimizerLabels[i]));
        label->setToolTip(tr(kOptimizerTips[i]));
        grid->addWidget(label, i % 3, (i / 3) * 2);
        grid->addWidget(value, i % 3, (i / 3) * 2 + 1);
        m_optimizer.insert(QString::fromLatin1(kOptimizerKeys[i]), value);
    }
    m_optimizerNote = new WrapAnywhereLabel;
    m_optimizerNote->setTextFormat(Qt::RichText);
    grid->addWidget(m_optimizerNote, 3, 0, 1, 6);
    connect(m_optimizerNote, &QLabel::linkActivated, this, [this](const QString& tensor) {
        Q_EMIT stateTensorRequested(m_optimizerFile, tensor);
    });
    m_optimizerBox->hide();
    return m_optimizerBox;
}

void TensorPage::setOptimizer(const ckptscope::ParameterUpdate* u, const QString& file,
                              const QStringList& stateTensors) {
    m_optimizerBox->setVisible(u != nullptr);
    m_optimizerFile = file;
    if (!u)
        return;
    m_optimizerBox->setTitle(tr("Optimizer's last update (%1, step %2, lr %3)")
                                 .arg(QString::fromUtf8(ckptscope::updateRuleName(u->rule)),
                                      numberText(u->step), numberText(u->lr)));
    const std::optional<double> values[] = {u->updateRms, u->updateMax,       u->updateToWeight,
                                            u->expAvgRms, u->expAvgSqSqrtRms, u->decayRms};
    for (int i = 0; i < int(std::size(kOptimizerKeys)); ++i)
        m_optimizer[QString::fromLatin1(kOptimizerKeys[i])]->setText(numberText(values[i]));
    QStringList lines;
    if (!u->note.empty())
        lines << plainToHtml(QString::fromStdString(u->note));
    QStringList links;
    for (const QString& t : stateTensors)
        links << QStringLiteral("<a href=\"%1\">%2</a>").arg(t.toHtmlEscaped(), plainToHtml(t));
    if (!links.isEmpty())
        lines << tr("Histograms of its state in %1: %2")
                     .arg(plainToHtml(shownText(file)), links.join(QStringLiteral(", ")));
    m_optimizerNote->setText(lines.join(QStringLiteral("<br>")));
    m_optimizerNote->setVisible(!lines.isEmpty());
}

QString TensorPage::optimizerText(const QString& key) const {
    const QLabel* value = m_optimizer.value(key);
    return !m_optimizerBox->isHidden() && value ? value->text() : QString();
}

// Bins, log scale, the NaN/Inf note, progress and cancel.
QLayout* TensorPage::buildControls() {
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Bins:")));
    m_bins = new QSpinBox;
    m_bins->setRange(1, 4096);
    m_bins->setValue(64);
    m_bins->setAccelerated(true);
    m_bins->setToolTip(tr("Number of equal-width bins over the finite range"));
    controls->addWidget(m_bins);
    m_log = new QCheckBox(tr("&Log scale"));
    m_log->setToolTip(tr("Logarithmic count axis"));
    controls->addWidget(m_log);
    controls->addStretch();
    m_specials = new QLabel;
    m_specials->setTextFormat(Qt::RichText);
    controls->addWidget(m_specials);
    m_progress = new QProgressBar;
    m_progress->setRange(0, 100);
    m_progress->setMaximumWidth(160);
    m_progress->setVisible(false);
    controls->addWidget(m_progress);
    m_cancel = new QToolButton;
    m_cancel->setText(tr("Cancel"));
    m_cancel->setVisible(false);
    controls->addWidget(m_cancel);
    return controls;
}

void TensorPage::connectControls() {
    connect(m_bins, &QSpinBox::valueChanged, this, [this](int n) {
        Q_EMIT binsChanged(n);
        startStats();
    });
    connect(m_log, &QCheckBox::toggled, this, [this](bool on) {
        m_histogram->setLogScale(on);
        Q_EMIT logScaleChanged(on);
    });
    connect(m_cancel, &QToolButton::clicked, this, [this] {
        m_runner->cancel();
        m_progress->setVisible(false);
        m_cancel->setVisible(false);
        m_specials->setText(tr("Statistics cancelled"));
    });
    connect(m_runner, &StatsRunner::progress, this,
            [this](int, double p) { m_progress->setValue(int(p * 100)); });
    connect(m_runner, &StatsRunner::finished, this,
            [this](int key, const ckptscope::StatsResult& r) {
                showStats(r);
                Q_EMIT statsReady(key, r);
            });
    connect(m_runner, &StatsRunner::failed, this, [this](int, const QString& message) {
        m_progress->setVisible(false);
        m_cancel->setVisible(false);
        // Nothing of this tensor was read: show no numbers and no histogram
        // rather than those of the tensor before.
        for (QLabel* l : std::as_const(m_stats))
            l->setText(missingText());
        m_histogram->clear();
        m_specials->setText(tr("<span style='color:#d33'>%1</span>").arg(message.toHtmlEscaped()));
        Q_EMIT statsFailed(message);
    });
}

void TensorPage::setInfoRow(int row, const QString& value) {
    m_info[row]->setText(value);
}

void TensorPage::clear() {
    m_runner->cancel();
    m_document.reset();
    m_tensor = -1;
    setOptimizer(nullptr);
    m_reader = nullptr;
    m_job = nullptr;
    m_count = 0;
    m_title->setText(tr("No tensor selected"));
    m_description->clear();
    for (QLabel* l : std::as_const(m_info))
        l->clear();
    for (QLabel* l : std::as_const(m_stats))
        l->setText(missingText());
    m_specials->clear();
    m_progress->setVisible(false);
    m_cancel->setVisible(false);
    m_histogram->clear();
}

namespace {

// Where a view's elements lie and what the pickle says of the tensor:
// its storage and strides, what else views that storage, the same object
// under another name, a parameter, the parameter an optimizer tensor
// belongs to.
QStringList viewNotes(const ckptscope::Document& doc, size_t tensor) {
    QStringList notes;
    const ckptscope::TensorEntry& t = doc.tensors()[tensor];
    if (t.view != ckptscope::kNoView && !doc.views().at(t.view).pieces.empty()) {
        // A tensor made of pieces (a DeepSpeed partition, a DCP chunk): how
        // many, from which files.
        const auto& pieces = doc.views()[t.view].pieces;
        QStringList files;
        for (const ckptscope::TensorPiece& p : pieces) {
            const ckptscope::TensorStorage& s = doc.storages().at(p.storage);
            const QString file = doc.shards().empty()
                                     ? QString()
                                     : shownText(doc.shards().at(s.shard).name).toHtmlEscaped();
            if (!file.isEmpty() && !files.contains(file))
                files << file;
        }
        notes << QObject::tr("Made of %1, read from %2")
                     .arg(countNoun(pieces.size(), QObject::tr("piece"), QObject::tr("pieces")),
                          files.join(QStringLiteral(", ")));
        // Each box (a DCP chunk): where in the tensor, from which file. A
        // run of the flattened tensor (a ZeRO partition) is said by the line above.
        const auto list = [](const std::vector<uint64_t>& v) {
            QStringList parts;
            for (uint64_t x : v)
                parts << groupedNumber(x);
            return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
        };
        for (const ckptscope::TensorPiece& p : pieces) {
            if (p.offsets.size() != t.shape.size())
                continue;
            const ckptscope::TensorStorage& s = doc.storages().at(p.storage);
            notes << QObject::tr("&nbsp;&nbsp;at %1, sizes %2: %3")
                         .arg(list(p.offsets), list(p.sizes),
                              doc.shards().empty()
                                  ? shownText(s.key).toHtmlEscaped()
                                  : shownText(doc.shards().at(s.shard).name).toHtmlEscaped());
        }
    }
    if (t.view != ckptscope::kNoView && doc.views().at(t.view).pieces.empty()) {
        const ckptscope::TensorView& v = doc.views()[t.view];
        const ckptscope::TensorStorage& s = doc.storages().at(v.storage);
        QString text = QObject::tr("A view of storage %1 (%2, %3) from element %4")
                           .arg(shownText(s.key).toHtmlEscaped(),
                                QString::fromLatin1(ckptscope::dtypeName(s.dtype)),
                                humanBytes(s.bytes), groupedNumber(v.elementOffset));
        if (!v.strides.empty()) {
            QStringList strides;
            for (int64_t x : v.strides)
                strides << QString::number(x);
            text += QObject::tr(", strides [%1] (not contiguous)")
                        .arg(strides.join(QStringLiteral(", ")));
        }
        size_t others = 0;
        for (size_t i = 0; i < doc.tensors().size(); ++i)
            if (i != tensor && doc.tensors()[i].view != ckptscope::kNoView &&
                doc.views()[doc.tensors()[i].view].pieces.empty() &&
                doc.views()[doc.tensors()[i].view].storage == v.storage)
                ++others;
        if (others > 0)
            text += others == 1
                        ? QObject::tr("; 1 other tensor views it")
                        : QObject::tr("; %1 other tensors view it").arg(groupedNumber(others));
        notes << text + QLatin1Char('.');
    }
    if (tensor < doc.traits().size()) {
        const ckptscope::TensorTraits& traits = doc.traits()[tensor];
        if (traits.sameAs < doc.tensors().size())
            notes << QObject::tr("The same tensor object as %1 (the pickle refers to it twice).")
                         .arg(shownText(doc.tensors()[traits.sameAs].name).toHtmlEscaped());
        if (traits.isParameter)
            notes << (traits.requiresGrad ? QObject::tr("An nn.Parameter (requires_grad).")
                                          : QObject::tr("An nn.Parameter (requires_grad False)."));
        if (traits.meta)
            notes << QObject::tr("A meta tensor: torch saved its dtype and shape, no values (the "
                                 "model was on the meta device when saved).");
        if (!traits.quantization.empty())
            notes << QObject::tr("Quantized: its values are the stored integers with the "
                                 "quantizer's parameters %1 (scheme, scale, zero point…); they "
                                 "are not read as values.")
                         .arg(shownText(traits.quantization).toHtmlEscaped());
        if (!traits.parameter.empty())
            notes << QObject::tr("Optimizer state of the parameter %1 (inferred from the "
                                 "parameter groups' order and the shapes).")
                         .arg(shownText(traits.parameter).toHtmlEscaped());
    }
    return notes;
}

} // namespace

void TensorPage::setTensor(std::shared_ptr<const ckptscope::Document> document, int tensor) {
    if (!document || tensor < 0 || size_t(tensor) >= document->tensors().size()) {
        clear();
        return;
    }
    setOptimizer(nullptr); // the window gives the new tensor's, when it has one
    const ckptscope::TensorEntry& t = document->tensors()[size_t(tensor)];
    m_document = document;
    m_tensor = tensor;
    m_count = t.dataLen;
    // The reader keeps the document alive for as long as the work runs.
    m_reader = [document, tensor](uint64_t first, uint64_t n, float* out) {
        document->readValues(size_t(tensor), first, n, out);
    };
    m_histogram->clear(); // another tensor's histogram must not stand under this name
    m_title->setText(shownText(t.name));
    QStringList notes;
    for (const auto& w : document->warnings())
        if (w.tensor && *w.tensor == size_t(tensor))
            notes << QStringLiteral("⚠ ") + plainToHtml(QString::fromStdString(w.message));
    m_job = [document, tensor](const ckptscope::StatsOptions& options) {
        return ckptscope::computeTensorStats(*document, size_t(tensor), options);
    };
    m_f32Values = ckptscope::exactInF32(t.dtype);
    const QString dtype = QString::fromLatin1(ckptscope::dtypeName(t.dtype));
    // (none for complex and quantized values, nor for a meta tensor's none)
    const bool statistics = ckptscope::statisticsNote(*document, size_t(tensor)) == nullptr;
    if (ckptscope::isComplex(t.dtype))
        notes << tr("%1: each value is a (real, imaginary) pair of %2; statistics and the "
                    "histogram are not computed for complex values. The Values tab shows them "
                    "exactly.")
                     .arg(dtype, t.dtype == ckptscope::Dtype::C64 ? QStringLiteral("float32")
                                                                  : QStringLiteral("float64"));
    else if (!ckptscope::hasStatistics(t.dtype))
        notes << tr("%1: statistics and the histogram are not computed for quantized values.")
                     .arg(dtype);
    else if (t.dtype == ckptscope::Dtype::F64)
        notes << tr("F64: statistics and the histogram are computed in double; the values "
                    "view shows each value rounded to f32.");
    else if (t.dtype != ckptscope::Dtype::F32 && t.dataLen > 0) // (a meta tensor has none)
        notes << tr("%1 values are shown converted to f32%2.")
                     .arg(dtype, ckptscope::exactInF32(t.dtype)
                                     ? tr(", exactly")
                                     : tr(" (integers beyond 2^24 are rounded)"));
    notes << viewNotes(*document, size_t(tensor));
    m_description->setText(notes.join(QStringLiteral("<br>")));
    setInfoRow(0, shapeText(t.shape));
    setInfoRow(1, groupedNumber(t.dataLen));
    setInfoRow(2, t.elementCount ? groupedNumber(*t.elementCount) : tr("overflows 64 bits"));
    const auto bytes = ckptscope::tensorSizeBytes(t);
    setInfoRow(
        3, bytes ? humanBytes(*bytes) +
                       QStringLiteral(" (%1 stored)")
                           .arg(humanBytes(ckptscope::dtypeBytes(t.dtype, t.dataLen).value_or(0)))
                 : missingText());
    // A sharded model's offset is within the tensor's shard: name it. A
    // tensor made of pieces has one place per piece, listed above.
    const bool pieces =
        t.view != ckptscope::kNoView && !document->views().at(t.view).pieces.empty();
    setInfoRow(4, pieces ? tr("in its pieces (listed above)")
                  : document->isSharded()
                      ? tr("%1 in %2")
                            .arg(groupedNumber(t.dataOffset),
                                 QString::fromStdString(document->shardName(size_t(tensor))))
                      : groupedNumber(t.dataOffset));
    setInfoRow(5, dtype);
    if (!statistics) { // nothing to compute: say so in every figure
        m_reader = nullptr;
        m_runner->cancel();
        m_progress->setVisible(false);
        m_cancel->setVisible(false);
        m_specials->clear();
        for (QLabel* l : std::as_const(m_stats))
            l->setText(tr("not computed"));
        return;
    }
    startStats();
}

void TensorPage::setValues(const QString& title, const QString& description, uint64_t count,
                           ckptscope::ValueReader reader) {
    m_document.reset();
    m_tensor = -1;
    m_count = count;
    m_reader = std::move(reader);
    m_job = nullptr;
    m_f32Values = true;
    m_histogram->clear();
    m_title->setText(title);
    m_description->setText(plainToHtml(description));
    setInfoRow(0, QStringLiteral("[%1]").arg(count));
    setInfoRow(1, groupedNumber(count));
    setInfoRow(2, groupedNumber(count));
    setInfoRow(3, humanBytes(count * 4));
    setInfoRow(4, missingText());
    setInfoRow(5, tr("F32 (bytes read as f32)"));
    startStats();
}

void TensorPage::startStats() {
    if (!m_reader)
        return;
    for (QLabel* l : std::as_const(m_stats))
        l->setText(QStringLiteral("…"));
    m_specials->clear();
    m_progress->setValue(0);
    m_progress->setVisible(true);
    m_cancel->setVisible(true);
    if (m_job)
        m_runner->start(m_tensor, m_job, m_bins->value());
    else
        m_runner->start(m_tensor, m_count, m_reader, m_bins->value());
}

void TensorPage::showStats(const ckptscope::StatsResult& r) {
    m_progress->setVisible(false);
    m_cancel->setVisible(false);
    const ckptscope::TensorStats& s = r.stats;
    // The extremes are values of the file: as it holds them, not rounded.
    m_stats[QStringLiteral("min")]->setText(
        QString::fromStdString(ckptscope::extremeText(s, false, m_f32Values)));
    m_stats[QStringLiteral("max")]->setText(
        QString::fromStdString(ckptscope::extremeText(s, true, m_f32Values)));
    m_stats[QStringLiteral("mean")]->setText(numberText(s.mean));
    m_stats[QStringLiteral("std")]->setText(numberText(s.std));
    m_stats[QStringLiteral("l2")]->setText(numberText(s.l2));
    // An empty tensor has no share of zeros to speak of; its count, 0, is
    // as the CLI gives it.
    m_stats[QStringLiteral("zeros")]->setText(
        s.count == 0 ? groupedNumber(0)
                     : QStringLiteral("%1 (%2%)")
                           .arg(groupedNumber(s.zeros))
                           .arg(100.0 * double(s.zeros) / double(s.count), 0, 'f', 2));
    m_stats[QStringLiteral("nan")]->setText(groupedNumber(s.nan));
    m_stats[QStringLiteral("+inf")]->setText(groupedNumber(s.posInf));
    m_stats[QStringLiteral("-inf")]->setText(groupedNumber(s.negInf));
    const uint64_t special = s.nan + s.posInf + s.negInf;
    m_specials->setText(
        special ? tr("⚠ not in the histogram: %1 NaN, %2 +Inf, %3 −Inf")
                      .arg(groupedNumber(s.nan), groupedNumber(s.posInf), groupedNumber(s.negInf))
        : s.count == 0 ? tr("empty tensor")
        : s.finite     ? tr("%1 finite values").arg(groupedNumber(s.finite))
                       : tr("no finite values"));
    m_histogram->setHistogram(r.histogram);
}

int TensorPage::bins() const {
    return m_bins->value();
}
void TensorPage::setBins(int bins) {
    m_bins->setValue(bins);
}
bool TensorPage::logScale() const {
    return m_log->isChecked();
}
void TensorPage::setLogScale(bool on) {
    m_log->setChecked(on);
}
bool TensorPage::isComputing() const {
    return m_runner->isRunning();
}
QString TensorPage::statText(const QString& key) const {
    const QLabel* l = m_stats.value(key);
    return l ? l->text() : QString();
}
