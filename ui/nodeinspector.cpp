#include "nodeinspector.h"

#include <QApplication>
#include <QClipboard>
#include <QGridLayout>
#include <QPushButton>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

namespace {

QString esc(const std::string& s) {
    return QString::fromStdString(s).toHtmlEscaped();
}

QString nodeLink(int index, const ckptscope::ComputationNode& n) {
    return QStringLiteral("<a href='node:%1'>%2</a> <small>%3</small>")
        .arg(index)
        .arg(esc(n.op), esc(n.id));
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
    for (const std::string& cid : n->inputCids) {
        const ckptscope::ComputationNode* producer = graph.findProducer(cid);
        const int p = producer ? m_index->indexOf(producer->id) : -1;
        inputs << esc(cid) + (p >= 0 ? QStringLiteral("<br>&nbsp;&nbsp;← ") + nodeLink(p, *producer)
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
    if (n->outputCid)
        for (const ckptscope::ComputationNode* c : graph.findConsumers(*n->outputCid))
            consumers << nodeLink(m_index->indexOf(c->id), *c);
    html += tr("<h4>Consumers (%1)</h4>").arg(consumers.size()) +
            (consumers.isEmpty() ? tr("<i>none</i>") : consumers.join(QStringLiteral("<br>")));
    m_browser->setHtml(html);
}

QString NodeInspector::text() const {
    return m_browser->toPlainText();
}
