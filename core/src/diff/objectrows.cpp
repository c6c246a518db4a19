#include "diff/objectrows.h"

#include "ckptscope/formats/objectchildren.h"

#include <utility>

namespace ckptscope {

namespace {

// The rows' text of a leaf.
std::string leafText(const ObjectTree& tree, uint32_t node) {
    const ObjectNode& n = tree.at(node);
    switch (n.kind) {
    case ObjectKind::List:
        return "[]";
    case ObjectKind::Tuple:
        return "()";
    case ObjectKind::Dict:
        return "{}";
    case ObjectKind::Set:
        return "set()";
    case ObjectKind::FrozenSet:
        return "frozenset()";
    case ObjectKind::Object:
        return n.text + "()";
    default:
        return objectKeyText(tree, node); // Python's repr of a scalar
    }
}

} // namespace

std::vector<MetadataRow> objectRows(const ObjectTree& tree) {
    std::vector<MetadataRow> rows;
    if (tree.empty())
        return rows;
    std::vector<std::string> firstPath(tree.nodes.size());
    std::vector<bool> seen(tree.nodes.size(), false);
    // Depth first with a stack of its own: a file's nesting sets the depth.
    std::vector<std::pair<uint32_t, std::string>> stack{{tree.root, std::string()}};
    while (!stack.empty()) {
        auto [node, path] = std::move(stack.back());
        stack.pop_back();
        const ObjectNode& n = tree.at(node);
        const std::string key = path.empty() ? "(root)" : path;
        if (n.kind == ObjectKind::Tensor)
            continue; // compared as a tensor, by name, with its values
        if (!objectHasChildren(n)) {
            rows.emplace_back(key, leafText(tree, node));
            rows.back().type = objectKeyType(tree, node);
            continue;
        }
        if (seen[node]) { // shared, or a way back into itself
            rows.emplace_back(key, "→ " + (firstPath[node].empty() ? "(root)" : firstPath[node]));
            rows.back().type = "reference";
            continue;
        }
        seen[node] = true;
        firstPath[node] = path;
        if (n.kind == ObjectKind::Object) {
            rows.emplace_back(key, n.text);
            rows.back().type = "class";
        }
        const std::vector<ObjectChild> children = objectChildren(tree, node);
        for (auto it = children.rbegin(); it != children.rend(); ++it)
            stack.emplace_back(it->node, objectPath(path, it->part));
    }
    return rows;
}

} // namespace ckptscope
