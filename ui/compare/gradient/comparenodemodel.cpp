#include "compare/gradient/comparenodemodel.h"

#include "common/plaintext.h"
#include "compare/comparetensormodel.h"
#include "compare/gradient/comparefieldsmodel.h"

#include <set>

using namespace ckptscope;

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

std::optional<QString> cid(const ComputationNode* n,
                           const std::optional<std::string> ComputationNode::*field) {
    if (!n)
        return std::nullopt;
    return n->*field ? q(*(n->*field)) : QStringLiteral("null");
}

} // namespace

CompareNodeModel::CompareNodeModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareNodeModel::setNodes(const ComputationNode* a, const ComputationNode* b) {
    beginResetModel();
    m_rows.clear();
    auto add = [&](const QString& field, std::optional<QString> va, std::optional<QString> vb) {
        Row r{field, std::move(va), std::move(vb), DiffStatus::Same};
        if (r.a && !r.b)
            r.status = DiffStatus::Removed;
        else if (!r.a && r.b)
            r.status = DiffStatus::Added;
        else if (r.a != r.b)
            r.status = DiffStatus::Changed;
        m_rows.push_back(std::move(r));
    };
    if (a || b) {
        auto text = [](const ComputationNode* n, auto get) -> std::optional<QString> {
            return n ? std::optional<QString>(get(*n)) : std::nullopt;
        };
        add(QStringLiteral("id"), text(a, [](auto& n) { return q(n.id); }),
            text(b, [](auto& n) { return q(n.id); }));
        add(QStringLiteral("op"), text(a, [](auto& n) { return q(n.op); }),
            text(b, [](auto& n) { return q(n.op); }));
        auto inputs = [](const ComputationNode& n) {
            QStringList l;
            for (const std::string& c : n.inputCids)
                l << q(c);
            return l.join(QLatin1Char('\n'));
        };
        add(QStringLiteral("input_cids"), text(a, inputs), text(b, inputs));
        add(QStringLiteral("output_cid"), cid(a, &ComputationNode::outputCid),
            cid(b, &ComputationNode::outputCid));
        add(QStringLiteral("gradient_cid"), cid(a, &ComputationNode::gradientCid),
            cid(b, &ComputationNode::gradientCid));
        std::set<std::string> keys;
        for (const auto* n : {a, b})
            if (n)
                for (const auto& kv : n->metadata)
                    keys.insert(kv.first);
        for (const std::string& k : keys) {
            auto value = [&k](const ComputationNode* n) -> std::optional<QString> {
                if (!n)
                    return std::nullopt;
                const auto it = n->metadata.find(k);
                return it == n->metadata.end() ? std::nullopt : std::optional(q(it->second));
            };
            add(QStringLiteral("metadata.") + q(k), value(a), value(b));
        }
        // One side missing: the whole node was added or removed, not each field.
        if (!a || !b)
            for (Row& r : m_rows)
                r.status = a ? DiffStatus::Removed : DiffStatus::Added;
    }
    endResetModel();
}

int CompareNodeModel::rowOf(const QString& field) const {
    for (size_t r = 0; r < m_rows.size(); ++r)
        if (m_rows[r].field == field)
            return int(r);
    return -1;
}

int CompareNodeModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CompareNodeModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareNodeModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= m_rows.size())
        return {};
    const Row& r = m_rows[size_t(index.row())];
    if (role == StatusRole)
        return int(r.status);
    const bool marked = r.status != DiffStatus::Same;
    if (role == Qt::DecorationRole && index.column() == Field && marked)
        return CompareTensorModel::statusIcon(r.status);
    if (role == Qt::ForegroundRole && index.column() == Field && marked)
        return CompareTensorModel::statusColor(r.status);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    const std::optional<QString> text = index.column() == Field   ? std::optional(r.field)
                                        : index.column() == SideA ? r.a
                                                                  : r.b;
    if (!text)
        return {};
    return role == Qt::ToolTipRole ? plainToolTip(*text) : *text;
}

QVariant CompareNodeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    // The same columns as the checkpoint fields table, without its Status.
    static_assert(int(Field) == CompareFieldsModel::Field &&
                  int(SideA) == CompareFieldsModel::SideA &&
                  int(SideB) == CompareFieldsModel::SideB);
    return CompareFieldsModel::header(section, orientation, role, ColumnCount);
}
