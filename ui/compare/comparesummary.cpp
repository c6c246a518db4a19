#include "compare/comparesummary.h"

#include "compare/comparetensormodel.h"

#include "ckptscope/common/numberformat.h"

#include <QCoreApplication>
#include <QFile>

#include <algorithm>

using namespace ckptscope;

namespace comparesummary {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("CompareWindow", text);
}

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QString chip(DiffStatus s, uint64_t n) {
    return QStringLiteral("<span style='color:%1'>■</span> %2 %3")
        .arg(CompareTensorModel::statusColor(s).name(), q(fmt::grouped(n)),
             CompareTensorModel::statusText(s));
}

} // namespace

QString tensorSummary(const TensorDiff& d, const QString& labelA, const QString& labelB,
                      const QString& toleranceText) {
    const auto metaChanged =
        std::count_if(d.metadata.begin(), d.metadata.end(),
                      [](const MetadataDiffEntry& m) { return m.status != DiffStatus::Same; });
    const TensorDiffSummary& s = d.summary;
    QStringList chips = {chip(DiffStatus::Changed, s.changed)};
    if (s.dtypeChanged > 0)
        chips << chip(DiffStatus::DtypeChanged, s.dtypeChanged);
    chips << chip(DiffStatus::Added, s.added) << chip(DiffStatus::Removed, s.removed)
          << chip(DiffStatus::ShapeChanged, s.shapeChanged) << chip(DiffStatus::Same, s.same);
    const QString nonFinite =
        s.nonFiniteMismatch == 0
            ? QString()
            : QStringLiteral(" &nbsp; <span style='color:#d03a2f'>⚠ %1</span>")
                  .arg(q(fmt::counted(s.nonFiniteMismatch, "tensor", "tensors")) +
                       tr(" with NaN/Inf mismatches"));
    // Counted as the CLI counts them: "1 differing element", "0 of 1 metadata
    // entry differs".
    return tr("<b>A</b> %1 → <b>B</b> %2: %3%4 — %5; %6 of %7; %8")
        .arg(labelA.toHtmlEscaped(), labelB.toHtmlEscaped(), chips.join(QStringLiteral(" &nbsp; ")),
             nonFinite,
             q(fmt::counted(s.differingElements, "differing element", "differing elements")))
        .arg(metaChanged)
        .arg(
            q(fmt::counted(d.metadata.size(), "metadata entry differs", "metadata entries differ")))
        .arg(toleranceText);
}

QString gradientSummary(const GradientDiff& g, const QString& labelA, const QString& labelB) {
    const GradientDiffSummary& s = g.summary;
    return tr("<b>A</b> %1 → <b>B</b> %2 (nodes matched by %3): nodes %4 &nbsp; %5 &nbsp; %6 "
              "&nbsp; %7; edges: %8 added, %9 removed; %10 of %11 optimizer blobs differ")
        .arg(labelA.toHtmlEscaped(), labelB.toHtmlEscaped(),
             g.structureMatching ? tr("op and position") : tr("id"),
             chip(DiffStatus::Changed, s.nodesChanged), chip(DiffStatus::Added, s.nodesAdded),
             chip(DiffStatus::Removed, s.nodesRemoved), chip(DiffStatus::Same, s.nodesSame))
        .arg(s.edgesAdded)
        .arg(s.edgesRemoved)
        .arg(s.optimizerChanged)
        .arg(g.optimizerState.size());
}

} // namespace comparesummary
