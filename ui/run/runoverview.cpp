#include "run/runoverview.h"

#include "browser/documentsummary.h"
#include "common/sizeformat.h"

#include <QFile>
#include <QHeaderView>
#include <QTableWidget>
#include <QVBoxLayout>

using namespace ckptscope;

namespace {

QString lines(const std::vector<std::string>& texts) {
    QStringList out;
    for (const std::string& t : texts)
        out << QString::fromStdString(t);
    return out.join(QLatin1Char('\n'));
}

} // namespace

RunOverview::RunOverview(QWidget* parent) : QWidget(parent), m_table(new QTableWidget(0, 2)) {
    m_table->setHorizontalHeaderLabels({tr("Property"), tr("Value")});
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_table);
    setRun(nullptr);
}

void RunOverview::addRow(const QString& label, const QString& value, const QString& tip) {
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    auto* key = new QTableWidgetItem(label);
    auto* text = new QTableWidgetItem(value); // plain text: names come from files
    text->setToolTip(tip.isEmpty() ? value : tip);
    m_table->setItem(row, 0, key);
    m_table->setItem(row, 1, text);
}

void RunOverview::setRun(std::shared_ptr<const Run> run) {
    m_table->setRowCount(0);
    if (!run) {
        addRow(tr("Run"), tr("No run loaded."));
        return;
    }
    addRow(tr("Checkpoints"),
           countNoun(run->checkpoints.size(), tr("checkpoint"), tr("checkpoints")));
    std::optional<uint64_t> first, last;
    for (const RunCheckpoint& c : run->checkpoints)
        if (c.step) {
            first = first ? std::min(*first, *c.step) : *c.step;
            last = last ? std::max(*last, *c.step) : *c.step;
        }
    if (first)
        addRow(tr("Steps"), *first == *last
                                ? groupedNumber(*first)
                                : tr("%1 – %2").arg(groupedNumber(*first), groupedNumber(*last)));
    QStringList skipped;
    for (const SkippedPath& s : run->skipped)
        skipped << QString::fromStdString(s.path + ": " + s.reason);
    addRow(tr("Skipped"), QString::number(skipped.size()), skipped.join(QLatin1Char('\n')));
    if (!run->warnings.empty())
        addRow(tr("Warnings"), lines(run->warnings));
    if (run->modelConfig) {
        const ModelConfig& config = *run->modelConfig;
        addRow(tr("Model config"), QFile::decodeName(config.path.c_str()));
        for (const auto& [key, value] : config.rows())
            addRow(QString::fromStdString(key), QString::fromStdString(value));
    }
    m_table->resizeColumnToContents(0);
    m_table->resizeRowsToContents();
}

QString RunOverview::valueOf(const QString& label) const {
    for (int r = 0; r < m_table->rowCount(); ++r)
        if (m_table->item(r, 0)->text() == label)
            return m_table->item(r, 1)->text();
    return {};
}
