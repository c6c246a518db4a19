#include "browser/overviewpage.h"

#include "ckptscope/formats/pytorch/numpyarrays.h"
#include "ckptscope/formats/pytorch/picklescan.h"

#include "common/documentsummary.h"
#include "common/plaintext.h"

#include "common/filelocation.h"
#include "common/sizeformat.h"
#include "metadata/metadatatext.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/io/httpsource.h"
#include "ckptscope/run/trainerfiles.h"

#include <QFileInfo>
#include <QTimer>
#include <QUrl>

#include <algorithm>
#include <iterator>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

QString row(const QString& key, const QString& value) {
    return QStringLiteral("<tr><td style='padding-right:16px'><b>%1</b></td><td>%2</td></tr>")
        .arg(key.toHtmlEscaped(), value);
}

// A file's text, made printable (a newline as \n) and escaped once as HTML.
QString esc(const std::string& s) {
    return shownText(s).toHtmlEscaped();
}

// What the format's module says of the model (a GGUF model's architecture,
// name and file type), then, where tensors may be block-quantized, the bits
// per weight overall and per type, and how much of the file the tensor data
// is.
QString modelRows(const ckptscope::Document& doc) {
    QString html;
    const ckptscope::FormatModule& m = doc.formatModule();
    if (m.summary)
        for (const auto& [label, text] : m.summary(doc.index()))
            html += row(QString::fromStdString(label), esc(text));
    if (!m.quantized)
        return html;
    struct PerType {
        uint64_t tensors = 0, elements = 0, bytes = 0;
    };
    std::map<ckptscope::Dtype, PerType> types;
    PerType all;
    for (const ckptscope::TensorEntry& t : doc.tensors()) {
        PerType& p = types[t.dtype];
        const uint64_t bytes = ckptscope::tensorSizeBytes(t).value_or(0);
        for (PerType* q : {&p, &all}) {
            ++q->tensors;
            q->elements += t.elementCount.value_or(0);
            q->bytes += bytes;
        }
    }
    const auto bpw = [](const PerType& p) {
        // As the CLI gives it (6.5625 for Q6_K, not 6.56).
        return p.elements ? QString::fromStdString(
                                ckptscope::fmt::display(double(p.bytes) * 8 / double(p.elements)))
                          : QStringLiteral("–");
    };
    html += row(QObject::tr("Bits per weight"), bpw(all));
    QStringList perType;
    for (const auto& [dtype, p] : types)
        perType << QObject::tr("%1: %2 bpw, %3")
                       .arg(QString::fromUtf8(ckptscope::dtypeName(dtype)), bpw(p),
                            countNoun(p.tensors, QObject::tr("tensor"), QObject::tr("tensors")))
                       .toHtmlEscaped();
    if (!perType.isEmpty())
        html += row(QObject::tr("Types"), perType.join(QStringLiteral("<br>")));
    const uint64_t size = doc.fileSize();
    html += row(
        QObject::tr("Tensor data"),
        QObject::tr("%1 of %2 (%3%)")
            .arg(humanBytes(all.bytes), humanBytes(size),
                 QString::number(size ? 100.0 * double(all.bytes) / double(size) : 0.0, 'f', 1)));
    return html;
}

// A gradient checkpoint's facts. One walk over the nodes gives the loss
// node, how far the step got and the ops: at 100k nodes each walk of the
// graph's map is ~10 ms before the window paints.
QString gradientRows(const ckptscope::Document& doc, const ckptscope::GradientCheckpoint& g) {
    uint64_t forward = 0, backward = 0;
    const ckptscope::ComputationNode* loss = nullptr; // g.lossNode(), without its own walk
    std::unordered_map<std::string_view, uint64_t> opCounts;
    for (const auto& [id, n] : g.graph.nodes()) {
        forward += n.outputCid.has_value();
        backward += n.gradientCid.has_value();
        ++opCounts[n.op];
        if (!loss && g.lossCid && n.outputCid == g.lossCid)
            loss = &n;
    }
    QString html = row(QObject::tr("Format"), QObject::tr("Gradient checkpoint (JSON)"));
    html += row(QObject::tr("Step"), groupedNumber(g.step));
    for (const ckptscope::MetadataRow& r : doc.metadataRows())
        if (r.kind == ckptscope::MetadataKind::Timestamp)
            html += row(QObject::tr("Timestamp"), metadataValueText(r).toHtmlEscaped());
    html += row(QObject::tr("Loss CID"), g.lossCid ? esc(*g.lossCid) : QObject::tr("none yet"));
    html += row(QObject::tr("Loss node"),
                loss ? esc(loss->id + " (" + loss->op + ")") : QObject::tr("none"));
    const QString nodes = groupedNumber(g.graph.nodeCount());
    html += row(QObject::tr("Graph"),
                QObject::tr("%1 nodes, %2 edges").arg(nodes, groupedNumber(g.graph.edgeCount())));
    uint64_t blobBytes = 0;
    for (const auto& [name, bytes] : g.optimizerState)
        blobBytes += bytes.size();
    html +=
        row(QObject::tr("Optimizer state"),
            QObject::tr("%1 blobs, %2").arg(g.optimizerState.size()).arg(humanBytes(blobBytes)));
    html += row(QObject::tr("Forward done"),
                QObject::tr("%1 of %2 nodes").arg(groupedNumber(forward), nodes));
    html += row(QObject::tr("Backward done"),
                QObject::tr("%1 of %2 nodes").arg(groupedNumber(backward), nodes));
    std::vector<std::pair<std::string_view, uint64_t>> ops(opCounts.begin(), opCounts.end());
    std::sort(ops.begin(), ops.end()); // by name
    QStringList opList;
    for (const auto& [op, count] : ops)
        opList << QStringLiteral("%1&nbsp;×&nbsp;%2")
                      .arg(QString::fromUtf8(op.data(), qsizetype(op.size())).toHtmlEscaped(),
                           QString::number(count));
    html += row(QObject::tr("Ops"), opList.join(QStringLiteral(", ")));
    return html;
}

const QString kTensorScheme = QStringLiteral("tensor");
const QString kOpenScheme = QStringLiteral("openwarning"); // openwarning:N opens warning N's file
const QString kScanScheme = QStringLiteral("scanvalues");  // asks for the NaN/Inf scan
constexpr size_t kNamedTensors = 20;                       // the rest are counted

} // namespace

OverviewPage::OverviewPage(QWidget* parent)
    : QTextBrowser(parent), m_renderTimer(new QTimer(this)) {
    setOpenLinks(false);
    setFrameShape(QFrame::NoFrame);
    m_renderTimer->setSingleShot(true);
    m_renderTimer->setInterval(100);
    connect(m_renderTimer, &QTimer::timeout, this, &OverviewPage::render);
    connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        if (url.scheme() == kTensorScheme)
            Q_EMIT tensorLinkActivated(url.path().toInt());
        if (url.scheme() == kScanScheme)
            Q_EMIT scanRequested();
        const size_t warning = url.path().toULongLong();
        if (url.scheme() == kOpenScheme && m_doc && warning < m_doc->warnings().size())
            Q_EMIT openRequested(QString::fromStdString(m_doc->warnings()[warning].opens));
    });
}

void OverviewPage::setDocument(const std::shared_ptr<const ckptscope::Document>& doc) {
    m_doc = doc;
    m_nonFinite.clear();
    m_scanned = false;
    m_scanOffered = false;
    render();
}

void OverviewPage::markNonFinite(int tensor) {
    if (!m_doc || tensor < 0 || size_t(tensor) >= m_doc->tensors().size())
        return;
    if (m_nonFinite.insert(tensor).second && !m_renderTimer->isActive())
        m_renderTimer->start();
}

void OverviewPage::setValuesScanned() {
    m_scanned = true;
    m_scanOffered = false;
    m_renderTimer->start();
}

void OverviewPage::offerScan(bool offer) {
    m_scanOffered = offer;
    m_renderTimer->start();
}

void OverviewPage::render() {
    m_renderTimer->stop();
    const std::shared_ptr<const ckptscope::Document>& doc = m_doc;
    if (!doc) {
        clear();
        return;
    }
    QString html =
        QStringLiteral("<h2>%1</h2><table>")
            .arg(filelocation::displayName(QString::fromStdString(doc->path())).toHtmlEscaped());
    // A local file by its absolute path, not as typed ("big.gguf").
    const QString path = QString::fromStdString(doc->path());
    const bool local = !filelocation::isBundled(path) && !filelocation::isRemote(path);
    html += row(tr("Path"),
                esc(local ? QFileInfo(path).absoluteFilePath().toStdString() : doc->path()));
    html +=
        row(tr("File size"), humanBytes(doc->fileSize()) +
                                 QStringLiteral(" (%1 bytes)").arg(groupedNumber(doc->fileSize())));
    if (doc->hasTensors()) {
        // The module's own name for the format, with its version where it has one.
        const QString format = QString::fromUtf8(doc->formatModule().description);
        html += row(tr("Format"),
                    doc->version() ? tr("%1, version %2").arg(format).arg(doc->version()) : format);
        if (doc->flags())
            html += row(tr("Flags"), tr("0x%1 (reserved, ignored)").arg(doc->flags(), 0, 16));
        html += row(tr("Tensors"), groupedNumber(doc->tensors().size()));
        // The sums saturate: a shape whose count overflows has no true total.
        const uint64_t params = doc->numParams(), bytes = doc->totalBytes();
        html += row(tr("Parameters"),
                    params == UINT64_MAX ? tr("overflows 64 bits") : groupedNumber(params));
        html += row(tr("Parameter bytes"),
                    bytes == UINT64_MAX ? tr("overflows 64 bits") : humanBytes(bytes));
        html += modelRows(*doc);
        html += shardsHtml();
        // A Hugging Face model's config.json beside it: what the model is.
        if (!ckptscope::isUrl(doc->path()))
            if (const auto config = ckptscope::modelConfigBeside(doc->path()))
                for (const auto& [key, value] : config->rows())
                    html += row(shownText(key), esc(value));
        std::map<std::string, std::string> meta(doc->metadata().begin(), doc->metadata().end());
        for (const char* key : {"step", "epoch", "loss", "lr", "learning_rate"}) {
            const auto it = meta.find(key);
            if (it != meta.end())
                html += row(QString::fromLatin1(key), esc(it->second));
        }
    } else if (const ckptscope::GradientCheckpoint* g = doc->gradient()) {
        html += gradientRows(*doc, *g);
    }
    html += QStringLiteral("</table>");
    setHtml(html + pickleHtml() + warningsHtml());
}

// What the file's pickle would import if torch.load read it, each global
// with its count and risk, unsafe ones first and in red with the calls they
// would make (Ckptscope imports and calls none of them).
QString OverviewPage::pickleHtml() const {
    const auto& imports = m_doc->imports();
    if (imports.empty())
        return {};
    std::vector<std::string> names;
    for (const ckptscope::TensorEntry& t : m_doc->tensors())
        names.push_back(t.name);
    ckptscope::CallArguments arguments(m_doc->objects(), names);
    QString html = QStringLiteral("<h3>%1</h3><p>%2</p><table>")
                       .arg(tr("Pickle imports"),
                            tr("What torch.load would import to rebuild this file's object. "
                               "Ckptscope read the pickle without importing or calling any of "
                               "them."));
    // The first imports, then how many more of each risk: a page of a table
    // of 20 000 rows takes Qt minutes to lay out.
    constexpr size_t kShownImports = 100;
    constexpr ckptscope::ImportRisk kOrder[] = {
        ckptscope::ImportRisk::Unsafe, ckptscope::ImportRisk::Unknown, ckptscope::ImportRisk::Safe};
    size_t rows = 0, more[std::size(kOrder)] = {};
    for (size_t r = 0; r < std::size(kOrder); ++r)
        for (const ckptscope::PickleImport& imp : imports) {
            const ckptscope::ImportRisk risk = kOrder[r];
            if (imp.risk != risk)
                continue;
            if (rows++ >= kShownImports) {
                ++more[r];
                continue;
            }
            const QString riskText = QString::fromLatin1(ckptscope::importRiskName(risk));
            QString what = tr("%1 × %2").arg(esc(imp.name)).arg(groupedNumber(imp.count));
            // The first calls' arguments; `ckptscope-cli scan` lists them all
            // (a page of 100 000 calls would hold the window up).
            constexpr size_t kShownCalls = 20;
            for (size_t i = 0; i < imp.calls.size() && i < kShownCalls; ++i) {
                const std::optional<std::string> args = arguments.json(imp.calls[i]);
                what += QStringLiteral("<br>&nbsp;&nbsp;") +
                        (args ? tr("called with %1").arg(shownExcerpt(*args, 1000).toHtmlEscaped())
                              : tr("called %1").arg(esc(ckptscope::CallArguments::kNotWritten)));
            }
            if (imp.calls.size() > kShownCalls)
                what += QStringLiteral("<br>&nbsp;&nbsp;") +
                        tr("and %1 more calls (ckptscope-cli scan lists every one)")
                            .arg(groupedNumber(imp.calls.size() - kShownCalls));
            html += QStringLiteral("<tr><td style='padding-right:12px'>%1</td><td>%2</td></tr>")
                        .arg(risk == ckptscope::ImportRisk::Unsafe
                                 ? QStringLiteral("<b style='color:#d33'>%1</b>").arg(riskText)
                                 : riskText,
                             what);
        }
    if (rows > kShownImports) {
        QStringList counts;
        for (size_t r = 0; r < std::size(kOrder); ++r)
            if (more[r] > 0)
                counts << tr("%1 %2").arg(
                    groupedNumber(more[r]),
                    QString::fromLatin1(ckptscope::importRiskName(kOrder[r])));
        html += QStringLiteral("<tr><td></td><td>%1</td></tr>")
                    .arg(tr("and %1 more imports (%2; ckptscope-cli scan lists every one)")
                             .arg(groupedNumber(rows - kShownImports),
                                  counts.join(QStringLiteral(", "))));
    }
    html += QStringLiteral("</table>");
    // NumPy arrays are not tensors: said apart (a Trainer's rng_state.pth
    // holds NumPy's MT19937 state).
    const std::vector<ckptscope::NumpyArray> arrays = ckptscope::numpyArrays(m_doc->objects());
    if (!arrays.empty()) {
        html += QStringLiteral("<h3>%1</h3><table>").arg(tr("NumPy arrays"));
        for (const ckptscope::NumpyArray& a : arrays) {
            QStringList dims;
            for (uint64_t d : a.shape)
                dims << groupedNumber(d);
            QString what = tr("%1 × %2").arg(dims.isEmpty() ? QStringLiteral("1")
                                                            : dims.join(QStringLiteral(" × ")),
                                             esc(a.dtype));
            if (!a.role.empty())
                what += QStringLiteral(" (%1)").arg(esc(a.role));
            html += row(esc(a.path.empty() ? std::string("(root)") : a.path), what);
        }
        html += QStringLiteral("</table>");
    }
    return html;
}

// A sharded model: its shards (a GGUF model's splits) and the index's own
// metadata (total_size…).
QString OverviewPage::shardsHtml() const {
    if (!m_doc->isSharded())
        return {};
    QStringList names;
    for (const ckptscope::IndexShard& s : m_doc->shards())
        names << esc(s.name);
    // As the format calls them: a GGUF model's splits (gguf-split), a
    // folder format's files.
    QString words = QString::fromUtf8(m_doc->formatModule().partWords);
    words[0] = words[0].toUpper();
    QString html = row(
        words,
        QStringLiteral("%1: %2").arg(m_doc->shards().size()).arg(names.join(QStringLiteral(", "))));
    for (const ckptscope::MetadataRow& r : m_doc->indexMetadata())
        html += row(tr("Index %1").arg(shownText(r.key)), metadataValueText(r).toHtmlEscaped());
    return html;
}

// The file's warnings, then the tensors known to hold NaN or Inf; "No
// warnings" only when the values were all read (a tensor file) or there are
// none to read.
QString OverviewPage::warningsHtml() const {
    QString html;
    const auto& warnings = m_doc->warnings();
    if (!warnings.empty()) {
        html += QStringLiteral("<h3>%1</h3><ul>")
                    .arg(countNoun(warnings.size(), tr("warning"), tr("warnings")));
        // The first ones: a list of 20 000 takes Qt minutes to lay out.
        constexpr size_t kShownWarnings = 100;
        for (size_t i = 0; i < warnings.size() && i < kShownWarnings; ++i)
            html += QStringLiteral("<li>⚠ %1%2</li>")
                        .arg(shownExcerpt(warnings[i].message, 2000).toHtmlEscaped(),
                             warnings[i].opens.empty() ? QString()
                                                       : QStringLiteral(" — <a href='%1:%2'>%3</a>")
                                                             .arg(kOpenScheme)
                                                             .arg(i)
                                                             .arg(tr("Open the whole model")));
        if (warnings.size() > kShownWarnings)
            html += QStringLiteral("<li>%1</li>")
                        .arg(tr("and %1 more (ckptscope-cli info lists every one)")
                                 .arg(groupedNumber(warnings.size() - kShownWarnings)));
        html += QStringLiteral("</ul>");
    }
    if (!m_nonFinite.empty()) {
        html += QStringLiteral("<h3>⚠ %1</h3><ul>")
                    .arg(countNoun(m_nonFinite.size(), tr("tensor holds NaN or Inf"),
                                   tr("tensors hold NaN or Inf")));
        size_t named = 0;
        for (int t : m_nonFinite) {
            if (named++ == kNamedTensors)
                break;
            html += QStringLiteral("<li><a href='%1:%2'>%3</a></li>")
                        .arg(kTensorScheme)
                        .arg(t)
                        .arg(esc(m_doc->tensors()[size_t(t)].name));
        }
        if (m_nonFinite.size() > kNamedTensors)
            html += QStringLiteral("<li>%1</li>")
                        .arg(tr("and %1 more (flagged in the tree)")
                                 .arg(m_nonFinite.size() - kNamedTensors));
        html += QStringLiteral("</ul>");
    }
    const bool hasValues = m_doc->hasTensors() && !m_doc->tensors().empty();
    const bool valuesPending = hasValues && !m_scanned;
    if (valuesPending && m_scanOffered)
        html += QStringLiteral("<p>%1 <a href='%2:'>%3</a> %4</p>")
                    .arg(tr("The values are not checked for NaN and Inf: a model read over the "
                            "network is read only for the tensors you look at."),
                         kScanScheme, tr("Check every value"),
                         tr("(reads all %1)").arg(humanBytes(m_doc->totalBytes())));
    else if (valuesPending)
        html += QStringLiteral("<p>%1</p>")
                    .arg(tr("The values are not yet all checked for NaN "
                            "and Inf."));
    else if (warnings.empty() && m_nonFinite.empty())
        html += QStringLiteral("<p>%1</p>")
                    .arg(hasValues ? tr("No warnings: the file is consistent "
                                        "and no tensor holds NaN or Inf.")
                                   : tr("No warnings: the file is consistent."));
    return html;
}
