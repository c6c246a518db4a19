#include "graph/nodeinspector.h"

#include <QApplication>
#include <QClipboard>
#include <QGridLayout>
#include <QPushButton>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>

namespace {

QString esc(const std::string& s) {
    return QString::fromStdString(s).toHtmlEscaped();
}

// Linked by graph index; named by the node's key (what the graph uses).
QString nodeLink(int index, const std::string& key, const ckptscope::ComputationNode& n) {
    return QStringLiteral("<a href='node:%1'>%2</a> <small>%3</small>")
        .arg(index)
        .arg(esc(n.op), esc(key));
}

} // namespace

NodeInspector::NodeInspector(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_browser = new QTextBrowser;
    m_browser->setOpenLinks(false);
    layout->addWidget(m_browser, 1);
    auto* buttons = new QGridLayout;
    auto add = [&](const QString& text, int row, int col, auto handler) {
        auto* b = new QPushButton(text);
        connect(b, &QPushButton::clicked, this, handler);
        buttons->addWidget(b, row, col);
        m_actions << b;
    };
    add(tr("Highlight &provenance"), 0, 0, [this] { Q_EMIT provenanceRequested(m_node); });
    add(tr("Highlight &consumers"), 0, 1, [this] { Q_EMIT consumersRequested(m_node); });
    add(tr("Copy &id"), 1, 0, [this] {
        if (m_node >= 0)
            QApplication::clipboard()->setText(QString::fromStdString(m_index->id(m_node)));
    });
    add(tr("Copy output C&ID"), 1, 1, [this] {
        const auto* n = m_node >= 0 ? m_checkpoint->graph.getNode(m_index->id(m_node)) : nullptr;
        if (n && n->outputCid)
            QApplication::clipboard()->setText(QString::fromStdString(*n->outputCid));
    });
    layout->addLayout(buttons);
    connect(m_browser, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        if (url.scheme() == QStringLiteral("node"))
            Q_EMIT nodeRequested(url.path().toInt());
    });
    setNode(-1);
}

void NodeInspector::setGraph(std::shared_ptr<const ckptscope::GradientCheckpoint> checkpoint,
                             std::shared_ptr<const GraphIndex> index) {
    m_checkpoint = std::move(checkpoint);
    m_index = std::move(index);
    setNode(-1);
}

void NodeInspector::setNode(int node) {
    if (node == m_node && node >= 0)
        return; // selection echoes (table ↔ drawing) need no second render
    m_node = node;
    for (QWidget* w : std::as_const(m_actions))
        w->setEnabled(node >= 0);
    const ckptscope::ComputationNode* n =
        node >= 0 && m_index ? m_checkpoint->graph.getNode(m_index->id(node)) : nullptr;
    if (!n) {
        m_browser->setHtml(tr("<p>Select a node to inspect it.</p>"));
        return;
    }
    const auto& graph = m_checkpoint->graph;
    QString html = QStringLiteral("<h3>%1</h3><table>").arg(esc(n->op));
    auto row = [&](const QString& k, const QString& v) {
        html +=
            QStringLiteral("<tr><td valign='top'><b>%1</b>&nbsp;</td><td>%2</td></tr>").arg(k, v);
    };
    row(tr("Id"), esc(n->id));
    QStringList inputs;
    // Producers and consumers come from the node's own edges (the index),
    // not from scans of the whole graph: a click stays cheap at 100k nodes.
    auto nodeAt = [&](int i) { return graph.getNode(m_index->id(i)); };
    for (const std::string& cid : n->inputCids) {
        int p = -1;
        for (int candidate : m_index->predecessors(node)) {
            const auto* c = nodeAt(candidate);
            if (c && c->outputCid == cid) {
                p = candidate;
                break;
            }
        }
        inputs << esc(cid) + (p >= 0 ? QStringLiteral("<br>&nbsp;&nbsp;← ") +
                                           nodeLink(p, m_index->id(p), *nodeAt(p))
                                     : tr("<br>&nbsp;&nbsp;<i>(no producer in the graph)</i>"));
    }
    row(tr("Inputs"), inputs.isEmpty() ? tr("<i>none</i>") : inputs.join(QStringLiteral("<br>")));
    row(tr("Output CID"),
        n->outputCid ? esc(*n->outputCid) : tr("<i>pending (forward not run)</i>"));
    row(tr("Gradient CID"),
        n->gradientCid ? esc(*n->gradientCid) : tr("<i>pending (backward not run)</i>"));
    if (m_checkpoint->lossCid && n->outputCid == m_checkpoint->lossCid)
        row(tr("Loss"), tr("<b>this node computes the loss</b>"));
    html += QStringLiteral("</table>");
    if (!n->metadata.empty()) {
        html += tr("<h4>Metadata</h4><table>");
        for (const auto& [k, v] : n->metadata)
            row(esc(k), esc(v).replace(QLatin1Char('\n'), QStringLiteral("<br>")));
        html += QStringLiteral("</table>");
    }
    QStringList consumers;
    const std::span<const int> next = m_index->successors(node);
    std::vector<int> successors(next.begin(), next.end());
    std::sort(successors.begin(), successors.end());
    successors.erase(std::unique(successors.begin(), successors.end()), successors.end());
    for (int c : successors)
        if (const auto* consumer = nodeAt(c))
            consumers << nodeLink(c, m_index->id(c), *consumer);
    html += tr("<h4>Consumers (%1)</h4>").arg(consumers.size()) +
            (consumers.isEmpty() ? tr("<i>none</i>") : consumers.join(QStringLiteral("<br>")));
    m_browser->setHtml(html);
}

QString NodeInspector::text() const {
    return m_browser->toPlainText();
}
