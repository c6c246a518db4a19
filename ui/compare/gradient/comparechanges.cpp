#include "compare/gradient/comparechanges.h"

#include "compare/comparetensormodel.h"

#include "ckptscope/common/numberformat.h"

#include <QStandardItemModel>

#include <tuple>

using namespace ckptscope;

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QString optional(const std::optional<std::string>& s) {
    return s ? q(*s) : QString();
}

QString bytes(const std::optional<uint64_t>& n) {
    return n ? q(fmt::grouped(*n)) : QString();
}

void addRow(QStandardItem* group, const QString& item, DiffStatus status, const QString& a,
            const QString& b, const QString& detail, ChangeKind kind, size_t index) {
    auto* statusItem = new QStandardItem(CompareTensorModel::statusIcon(status),
                                         CompareTensorModel::statusText(status));
    statusItem->setForeground(CompareTensorModel::statusColor(status));
    // The item carries the status icon too: a long id scrolls the status
    // column out of sight, and the icon stays beside the name.
    QList<QStandardItem*> row = {new QStandardItem(CompareTensorModel::statusIcon(status), item),
                                 statusItem, new QStandardItem(a), new QStandardItem(b),
                                 new QStandardItem(detail)};
    for (QStandardItem* i : row) {
        i->setEditable(false);
        i->setToolTip(i->text());
    }
    row[0]->setData(int(kind), ChangeKindRole);
    row[0]->setData(qulonglong(index), ChangeIndexRole);
    group->appendRow(row);
}

} // namespace

QString fieldValueText(const FieldValue& v) {
    if (const auto* n = std::get_if<uint64_t>(&v))
        return QString::number(*n);
    if (const auto* s = std::get_if<std::string>(&v))
        return QString::fromStdString(*s);
    return QStringLiteral("null");
}

void fillGradientChanges(QStandardItemModel* model, const GradientDiff& d) {
    model->clear();
    model->setHorizontalHeaderLabels({QObject::tr("Item"), QObject::tr("Status"), QObject::tr("A"),
                                      QObject::tr("B"), QObject::tr("Detail")});
    auto group = [&](const QString& title, size_t n) {
        auto* g = new QStandardItem(QObject::tr("%1 (%2)").arg(title).arg(n));
        g->setEditable(false);
        QList<QStandardItem*> row = {g};
        for (int k = 1; k < 5; ++k) {
            auto* empty = new QStandardItem;
            empty->setEditable(false);
            row << empty;
        }
        model->appendRow(row);
        return g;
    };
    QStandardItem* fields = group(QObject::tr("Fields"), d.fields.size());
    for (size_t i = 0; i < d.fields.size(); ++i) {
        const FieldDiff& f = d.fields[i];
        addRow(fields, q(f.field), f.status, fieldValueText(f.a), fieldValueText(f.b), {},
               ChangeKind::Field, i);
    }
    QStandardItem* nodes =
        group(QObject::tr("Nodes changed, added or removed (matched by %1)")
                  .arg(d.structureMatching ? QObject::tr("structure") : QObject::tr("id")),
              d.nodes.size());
    for (size_t i = 0; i < d.nodes.size(); ++i) {
        const NodeDiff& n = d.nodes[i];
        QStringList changed;
        for (const std::string& c : n.changed)
            changed << q(c);
        QString detail = changed.join(QStringLiteral(", "));
        if (n.idB)
            detail += QObject::tr(" (B: %1)").arg(q(*n.idB));
        addRow(nodes, q(n.id), n.status, optional(n.opA), optional(n.opB), detail, ChangeKind::Node,
               i);
    }
    QStandardItem* edges = group(QObject::tr("Edges"), d.edgesAdded.size() + d.edgesRemoved.size());
    for (const auto& [list, status, kind] :
         {std::tuple{&d.edgesAdded, DiffStatus::Added, ChangeKind::EdgeAdded},
          {&d.edgesRemoved, DiffStatus::Removed, ChangeKind::EdgeRemoved}})
        for (size_t i = 0; i < list->size(); ++i)
            addRow(edges, q((*list)[i].first) + QStringLiteral(" → ") + q((*list)[i].second),
                   status, {}, {}, {}, kind, i);
    QStandardItem* blobs = group(QObject::tr("Optimizer state"), d.optimizerState.size());
    for (size_t i = 0; i < d.optimizerState.size(); ++i) {
        const BlobDiff& o = d.optimizerState[i];
        QString detail;
        if (o.differingBytes)
            detail = QObject::tr("%1 bytes differ").arg(q(fmt::grouped(*o.differingBytes)));
        if (o.f32)
            detail += QObject::tr("; as f32: %1 of %2 differ, max |Δ| %3, rel. L2 %4")
                          .arg(q(fmt::grouped(o.f32->differing)), q(fmt::grouped(o.f32->count)),
                               q(fmt::display(o.f32->maxAbsDiff)), q(fmt::display(o.f32->relL2)));
        addRow(blobs, q(o.name), o.status, bytes(o.bytesA), bytes(o.bytesB), detail,
               ChangeKind::Blob, i);
    }
}
