#include "run/layerprofileview.h"

#include "common/sizeformat.h"
#include "run/heatmapview.h"
#include "run/runsteps.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/run/optimizeroutliers.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

using namespace ckptscope;

LayerProfileView::LayerProfileView(QWidget* parent)
    : QWidget(parent), m_family(new QComboBox), m_statistic(new QComboBox),
      m_log(new QCheckBox(tr("Log colours"))), m_meaning(new QLabel), m_heatmap(new HeatmapView) {
    for (int s = 0; s < int(LayerStatistic::Count); ++s)
        m_statistic->addItem(QString::fromUtf8(layerStatisticName(LayerStatistic(s))), s);
    // Narrow windows: the box shrinks and elides; its tooltip names the family.
    m_family->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_family->setMinimumContentsLength(12);
    m_meaning->setWordWrap(true);
    m_meaning->setTextFormat(Qt::PlainText);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Family:")));
    controls->addWidget(m_family, 1);
    controls->addWidget(new QLabel(tr("Statistic:")));
    controls->addWidget(m_statistic);
    controls->addWidget(m_log);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_meaning);
    layout->addWidget(m_heatmap, 1);
    m_heatmap->setHoverText([this](int row, int col) { return cellText(row, col); });
    connect(m_family, &QComboBox::currentIndexChanged, this, &LayerProfileView::refresh);
    connect(m_family, &QComboBox::currentTextChanged, m_family, &QWidget::setToolTip);
    connect(m_statistic, &QComboBox::currentIndexChanged, this, [this] {
        // The optimizer's figures span decades across layers: log colours
        // first (the box stays the user's to clear).
        if (isOptimizerStatistic(LayerStatistic(m_statistic->currentData().toInt())))
            m_log->setChecked(true);
        refresh();
    });
    connect(m_log, &QCheckBox::toggled, m_heatmap, &HeatmapView::setLogScale);
    connect(m_heatmap, &HeatmapView::cellClicked, this, [this](int row, int) {
        if (const TensorSeries* s = member(row))
            Q_EMIT tensorChosen(QString::fromStdString(s->name));
    });
    refresh();
}

bool LayerProfileView::setStatistic(const QString& name) {
    for (int i = 0; i < m_statistic->count(); ++i)
        if (m_statistic->itemText(i).compare(name, Qt::CaseInsensitive) == 0) {
            m_statistic->setCurrentIndex(i);
            return true;
        }
    return false;
}

int LayerProfileView::currentFamily() const {
    return m_family->currentIndex();
}

void LayerProfileView::setRun(std::shared_ptr<const Run> run,
                              std::shared_ptr<const std::vector<TensorSeries>> series) {
    const QString keep = m_family->currentText();
    m_run = std::move(run);
    m_series = std::move(series);
    m_families = m_run && m_series ? layerFamilies(*m_series) : std::vector<LayerFamily>{};
    {
        const QSignalBlocker block(m_family);
        m_family->clear();
        for (const LayerFamily& f : m_families)
            m_family->addItem(tr("%1 (%n layers)", nullptr, int(f.members.size()))
                                  .arg(QString::fromStdString(f.pattern())));
        const int again = m_family->findText(keep);
        m_family->setCurrentIndex(again >= 0 ? again : (m_families.empty() ? -1 : 0));
    }
    m_family->setToolTip(m_family->currentText());
    setSelectedTensor(m_selected); // picks the selected tensor's family when needed
    refresh();
}

void LayerProfileView::setSelectedTensor(const QString& name) {
    m_selected = name;
    const auto holds = [&](int f) { return familyRow(f, name); };
    if (holds(currentFamily()) < 0)
        for (int f = 0; f < int(m_families.size()); ++f)
            if (holds(f) >= 0) {
                m_family->setCurrentIndex(f); // refresh() via the signal
                break;
            }
    m_heatmap->setHighlightedRow(holds(currentFamily()));
}

const TensorSeries* LayerProfileView::member(int row) const {
    const int f = currentFamily();
    if (!m_series || f < 0 || f >= int(m_families.size()) || row < 0 ||
        row >= int(m_families[size_t(f)].members.size()))
        return nullptr;
    return &(*m_series)[m_families[size_t(f)].members[size_t(row)].series];
}

void LayerProfileView::refresh() {
    const int f = currentFamily();
    const auto stat = LayerStatistic(m_statistic->currentData().toInt());
    m_meaning->setText(tr("Each cell: %1.").arg(QString::fromUtf8(layerStatisticMeaning(stat))));
    if (!m_run || f < 0 || f >= int(m_families.size())) {
        m_profile = {};
        m_heatmap->setData({}, m_run ? tr("No layer families: no two tensor names differ by "
                                          "just one number.")
                                     : tr("No run loaded."));
        m_log->setEnabled(false);
        return;
    }
    if (isOptimizerStatistic(stat) && !runHasUpdates(*m_run)) {
        m_profile = {};
        m_heatmap->setData({}, tr("No checkpoint of this run holds optimizer state (a Trainer "
                                  "folder's optimizer.pt, a Lightning checkpoint's "
                                  "optimizer_states)."));
        m_log->setEnabled(false);
        return;
    }
    const LayerFamily& family = m_families[size_t(f)];
    m_profile = layerProfile(*m_run, *m_series, family, stat);
    const RunSteps steps = RunSteps::of(*m_run);
    HeatmapData d;
    d.rows = int(m_profile.rows.size());
    d.cols = int(m_run->checkpoints.size());
    for (const auto& row : m_profile.values)
        d.values.insert(d.values.end(), row.begin(), row.end());
    for (const auto& row : m_profile.nonFinite)
        for (uint64_t bad : row)
            d.flagged.push_back(bad > 0);
    d.colX = steps.x;
    d.xTitle = steps.title;
    d.yTitle = tr("layer: {N} in %1").arg(QString::fromStdString(family.pattern()));
    for (const std::string& r : m_profile.rows)
        d.rowLabels << QString::fromStdString(r);
    d.valueTitle = QString::fromUtf8(layerStatisticName(stat));
    m_heatmap->setData(std::move(d));
    m_log->setEnabled(m_heatmap->canUseLogScale());
    m_heatmap->setLogScale(m_log->isChecked());
    // Only the highlight follows the selected tensor here: the family is the
    // one the user chose, even when the selected tensor is not in it.
    m_heatmap->setHighlightedRow(familyRow(currentFamily(), m_selected));
}

int LayerProfileView::familyRow(int f, const QString& name) const {
    if (f < 0 || f >= int(m_families.size()) || !m_series)
        return -1;
    const std::string n = name.toStdString();
    const auto& members = m_families[size_t(f)].members;
    for (size_t r = 0; r < members.size(); ++r)
        if ((*m_series)[members[r].series].name == n)
            return int(r);
    return -1;
}

QString LayerProfileView::cellText(int row, int col) const {
    const TensorSeries* s = member(row);
    if (!s || !m_run || col < 0 || size_t(col) >= m_run->checkpoints.size())
        return {};
    const LayerFamily& family = m_families[size_t(currentFamily())];
    const QString head = tr("%1 — layer %2\n%3\n%4")
                             .arg(QString::fromStdString(family.pattern()),
                                  QString::fromStdString(m_profile.rows[size_t(row)]),
                                  QString::fromStdString(s->name),
                                  RunSteps::of(*m_run).describe(*m_run, size_t(col)));
    const QString stat = QString::fromUtf8(layerStatisticName(m_profile.statistic));
    const auto& v = m_profile.values[size_t(row)][size_t(col)];
    QString bad;
    if (const uint64_t n = m_profile.nonFinite[size_t(row)][size_t(col)])
        bad = QLatin1Char('\n') +
              tr("holds %1 NaN/Inf: the figure is of the finite values only").arg(groupedNumber(n));
    if (v)
        return head + QStringLiteral("\n%1: %2").arg(stat, QString::fromStdString(fmt::exact(*v))) +
               bad;
    QString why;
    if (!s->point(*m_run, size_t(col)))
        why = tr("this layer is not in this checkpoint");
    else if (m_profile.statistic == LayerStatistic::L2RelativeChange)
        why = col == 0 || !s->point(*m_run, size_t(col) - 1)
                  ? tr("the previous checkpoint does not hold this layer")
                  : tr("its L2 norm in the previous checkpoint is 0");
    else
        why = tr("no finite value");
    return head + QStringLiteral("\n%1: %2 (%3)").arg(stat, missingText(), why) + bad;
}
