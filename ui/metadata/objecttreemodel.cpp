#include "metadata/objecttreemodel.h"

#include "common/plaintext.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/common/numberformat.h"
#include "ckptscope/formats/objectchildren.h"

#include <algorithm>
#include <climits>

using namespace ckptscope;

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QString joined(const QString& path, const QString& part) {
    return path.isEmpty() ? part : path + QLatin1Char('.') + part;
}

// "1 key", "100,000 keys": grouped as every count of the CLI and the GUI.
QString countOf(size_t n, const char* one, const char* many) {
    return QString::fromStdString(ckptscope::fmt::counted(n, one, many));
}

} // namespace

ObjectTreeModel::ObjectTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

void ObjectTreeModel::setTree(std::shared_ptr<const ObjectTree> tree,
                              std::vector<std::string> tensorNames) {
    beginResetModel();
    m_tree = std::move(tree);
    m_tensorNames = std::move(tensorNames);
    m_rows.clear();
    m_top.clear();
    m_firstPath.clear();
    if (m_tree && !m_tree->empty()) {
        // Each node's first place in depth-first order, the order the rows
        // show: there it is drawn, elsewhere linked to. Its path is made from
        // its parent's: one per value with children (their bytes bounded at
        // open), not one per link.
        m_firstPath.assign(m_tree->nodes.size(), QString());
        forEachFirstPlace(*m_tree, m_tree->root,
                          [&](uint32_t node, uint32_t parent, const std::string& part) {
                              if (parent != kNoNode)
                                  m_firstPath[node] = joined(m_firstPath[parent], q(part));
                              return true;
                          });
        // The root's own row is not shown: its children are the top rows (a
        // bare value is one row).
        if (!objectHasChildren(m_tree->at(m_tree->root))) {
            Row only;
            only.key = tr("(root)");
            only.node = m_tree->root;
            m_rows.push_back(only);
            m_top.push_back(0);
        } else {
            m_top = childRows(-1, m_tree->root, QString());
        }
    }
    endResetModel();
}

// Rows for a node's children under row `parent` (-1: the top), at `path`.
std::vector<int> ObjectTreeModel::childRows(int parent, uint32_t node, const QString& path) const {
    std::vector<int> ids;
    for (const ObjectChild& child : objectChildren(*m_tree, node)) {
        Row c;
        c.parent = parent;
        c.row = int(ids.size());
        c.key = q(child.part);
        c.path = joined(path, c.key);
        c.node = child.node;
        c.link = objectHasChildren(m_tree->at(c.node)) && m_firstPath[c.node] != c.path;
        m_rows.push_back(std::move(c)); // may move the rows: no reference kept across
        ids.push_back(int(m_rows.size() - 1));
    }
    return ids;
}

void ObjectTreeModel::build(int id) const {
    Row& r = m_rows[size_t(id)];
    if (r.built || r.link)
        return;
    r.built = true;
    const QString path = r.path;
    std::vector<int> ids = childRows(id, r.node, path);
    m_rows[size_t(id)].children = std::move(ids);
}

int ObjectTreeModel::rowId(const QModelIndex& index) const {
    return index.isValid() ? int(index.internalId()) : -1;
}

uint32_t ObjectTreeModel::nodeAt(const QModelIndex& index) const {
    const int id = rowId(index);
    return id < 0 ? kNoNode : m_rows[size_t(id)].node;
}

QModelIndex ObjectTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount || (parent.isValid() && parent.column()))
        return {};
    const int p = rowId(parent);
    if (p >= 0)
        build(p);
    const std::vector<int>& rows = p < 0 ? m_top : m_rows[size_t(p)].children;
    if (size_t(row) >= rows.size())
        return {};
    return createIndex(row, column, quintptr(rows[size_t(row)]));
}

QModelIndex ObjectTreeModel::parent(const QModelIndex& child) const {
    const int id = rowId(child);
    if (id < 0 || m_rows[size_t(id)].parent < 0)
        return {};
    const int p = m_rows[size_t(id)].parent;
    return createIndex(m_rows[size_t(p)].row, 0, quintptr(p));
}

int ObjectTreeModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() && parent.column() != 0)
        return 0;
    const int p = rowId(parent);
    if (p < 0)
        return int(m_top.size());
    build(p);
    return int(m_rows[size_t(p)].children.size());
}

int ObjectTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

bool ObjectTreeModel::hasChildren(const QModelIndex& parent) const {
    if (!parent.isValid())
        return !m_top.empty();
    if (parent.column() != 0)
        return false;
    const Row& r = m_rows[size_t(rowId(parent))];
    return !r.link && objectHasChildren(m_tree->at(r.node));
}

QModelIndex ObjectTreeModel::indexOfPath(const QString& path) {
    QModelIndex at;
    QString walked;
    while (walked != path) {
        QModelIndex next;
        for (int row = 0; row < rowCount(at) && !next.isValid(); ++row) {
            const QModelIndex candidate = index(row, 0, at);
            const QString p = m_rows[size_t(rowId(candidate))].path;
            if (p == path || path.startsWith(p + QLatin1Char('.')))
                next = candidate;
        }
        if (!next.isValid())
            return {};
        at = next;
        walked = m_rows[size_t(rowId(at))].path;
    }
    return at;
}

// A non-empty string under a key that names a credential (ends in
// "_token", as transformers' TrainingArguments' hub_token does).
bool ObjectTreeModel::isSecret(const Row& r, const ObjectNode& n) const {
    return n.kind == ObjectKind::String && !n.text.empty() &&
           r.key.endsWith(QStringLiteral("_token"), Qt::CaseInsensitive);
}

// A scalar as the CLI's JSON writes it; a container by what it holds.
QString ObjectTreeModel::valueText(const ObjectNode& n) const {
    switch (n.kind) {
    case ObjectKind::None:
        return QStringLiteral("None");
    case ObjectKind::Bool:
        return n.integer ? QStringLiteral("True") : QStringLiteral("False");
    case ObjectKind::Int:
        return QString::number(n.integer);
    case ObjectKind::BigInt:
    case ObjectKind::String:
        return q(n.text);
    case ObjectKind::Float:
        return q(objectKeyText(*m_tree, uint32_t(&n - m_tree->nodes.data()))); // Python's repr
    case ObjectKind::Bytes:
        return tr("%n byte(s)", nullptr, int(std::min<size_t>(n.text.size(), INT_MAX)));
    case ObjectKind::List:
        return tr("list of %1").arg(countOf(n.items.size(), "item", "items"));
    case ObjectKind::Tuple:
        return tr("tuple of %1").arg(countOf(n.items.size(), "item", "items"));
    case ObjectKind::Set:
    case ObjectKind::FrozenSet:
        return tr("set of %1").arg(countOf(n.items.size(), "item", "items"));
    case ObjectKind::Dict:
        return tr("dict of %1").arg(countOf(n.items.size() / 2, "key", "keys"));
    case ObjectKind::Tensor:
        return n.tensor < m_tensorNames.size() ? tr("tensor %1").arg(q(m_tensorNames[n.tensor]))
                                               : tr("tensor");
    case ObjectKind::Global:
        return q(n.text);
    case ObjectKind::Object: {
        if (const QString member = enumMember(n); !member.isEmpty())
            return member;
        // A call with a few short scalar arguments and nothing else
        // (torch.device('cpu')): as Python writes it.
        const auto shortScalar = [this](uint32_t item) {
            const ObjectNode& a = m_tree->at(item);
            return !objectHasChildren(a) && a.text.size() <= 64 && a.kind != ObjectKind::Tensor;
        };
        if (n.state == kNoNode && n.listItems == kNoNode && n.dictItems == kNoNode &&
            n.items.size() <= 4 && std::all_of(n.items.begin(), n.items.end(), shortScalar))
            return q(objectKeyText(*m_tree, uint32_t(&n - m_tree->nodes.data())));
        return q(n.text) + QStringLiteral("(…)");
    }
    case ObjectKind::Call:
        return tr("a call of a call's result");
    }
    return {};
}

QString ObjectTreeModel::enumMember(const ObjectNode& n) const {
    if (n.kind != ObjectKind::Object ||
        (n.text != "__builtin__.getattr" && n.text != "builtins.getattr") || n.items.size() != 2 ||
        m_tree->at(n.items[0]).kind != ObjectKind::Global ||
        m_tree->at(n.items[1]).kind != ObjectKind::String)
        return {};
    const std::string& cls = m_tree->at(n.items[0]).text;
    return q(cls.substr(cls.rfind('.') + 1) + "." + m_tree->at(n.items[1]).text);
}

QString ObjectTreeModel::json(uint32_t node) const {
    std::string out;
    JsonStreamWriter w(out);
    writeObjectJson(w, *m_tree, m_tensorNames, 1000000, node);
    return q(out);
}

QVariant ObjectTreeModel::data(const QModelIndex& index, int role) const {
    const int id = rowId(index);
    if (id < 0)
        return {};
    const Row& r = m_rows[size_t(id)];
    const ObjectNode& n = m_tree->at(r.node);
    if (role == PathRole)
        return r.path;
    if (role == LinkRole)
        return r.link ? m_firstPath[r.node] : QString();
    if (role == JsonRole)
        return json(r.node);
    QString text;
    switch (index.column()) {
    case Key:
        text = r.key;
        break;
    case Value:
        text = r.link
                   ? tr("→ the same object as %1")
                         .arg(m_firstPath[r.node].isEmpty() ? tr("the root") : m_firstPath[r.node])
                   : valueText(n);
        // A credential (a Trainer's hub_token, push_to_hub_token) is not put
        // on screen; a copy still takes it.
        if (role != Qt::EditRole && isSecret(r, n))
            text = tr("•••••••• (hidden: %1; Copy takes it)")
                       .arg(countOf(n.text.size(), "character", "characters"));
        break;
    case Type:
        text = enumMember(n).isEmpty() ? q(objectKeyType(*m_tree, r.node)) : QStringLiteral("enum");
        break;
    }
    if (role == Qt::EditRole) // copies take the text as stored
        return index.column() == Value && n.kind == ObjectKind::Bytes ? json(r.node) : text;
    if (role == Qt::DisplayRole)
        return index.column() == Value ? shownLines(text) : shownText(text);
    if (role == Qt::ToolTipRole)
        return plainToolTip(shownLines(index.column() == Key ? r.path : text));
    return {};
}

QVariant ObjectTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return section == Key ? tr("Key") : section == Value ? tr("Value") : tr("Type");
}
