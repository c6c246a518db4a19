#include "export/tensorskept.h"

#include "ckptscope/formats/objectchildren.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace ckptscope {

std::vector<size_t> tensorsKept(const Document& doc, const char* (*leftOutWhy)(Dtype),
                                std::vector<std::string>& warnings) {
    std::vector<size_t> kept;
    struct Left {
        const char* why;
        std::string names;
        size_t count = 0;
    };
    std::vector<Left> left; // by reason, in order of first use
    for (size_t i = 0; i < doc.tensors().size(); ++i) {
        const char* why = isMetaTensor(doc.index(), i)
                              ? "meta tensors: torch saved their dtype and shape, no values"
                              : leftOutWhy(doc.tensors()[i].dtype);
        if (!why) {
            kept.push_back(i);
            continue;
        }
        auto it = std::find_if(left.begin(), left.end(),
                               [why](const Left& l) { return std::string_view(l.why) == why; });
        if (it == left.end())
            it = left.insert(left.end(), Left{why, {}, 0});
        it->names += (it->count++ ? ", " : "") + doc.tensors()[i].name;
    }
    for (const Left& l : left)
        warnings.push_back(std::to_string(l.count) + (l.count == 1 ? " tensor" : " tensors") +
                           " left out (" + l.why + "): " + l.names);
    return kept;
}

const char* quantizedLeftOut(Dtype dtype) {
    return isQuantized(dtype) ? "quantized values need their scale and zero point, which are in "
                                "the object tree"
                              : nullptr;
}

namespace {

// Marks each node that holds a tensor somewhere below it: one post-order
// walk with a stack of its own (a pickle's tree may be 1 000 levels deep),
// each shared node visited once.
std::vector<bool> holdsTensor(const ObjectTree& tree) {
    std::vector<bool> holds(tree.nodes.size(), false);
    std::vector<uint8_t> state(tree.nodes.size(), 0); // 0 new, 1 open, 2 done
    std::vector<std::pair<uint32_t, size_t>> stack{{tree.root, 0}};
    state[tree.root] = 1;
    while (!stack.empty()) {
        auto& [node, next] = stack.back();
        const ObjectNode& n = tree.nodes[node];
        const size_t extra = next >= n.items.size() ? next - n.items.size() : 0;
        if (next < n.items.size() + 4) {
            const uint32_t c =
                next < n.items.size()
                    ? n.items[next]
                    : std::array<uint32_t, 4>{n.callee, n.state, n.listItems, n.dictItems}[extra];
            ++next;
            if (c != kNoNode && state[c] == 0) {
                state[c] = 1;
                stack.emplace_back(c, 0);
            }
            continue;
        }
        bool h = n.kind == ObjectKind::Tensor;
        for (uint32_t c : n.items)
            h = h || holds[c];
        for (uint32_t c : {n.callee, n.state, n.listItems, n.dictItems})
            h = h || (c != kNoNode && holds[c]);
        holds[node] = h;
        state[node] = 2;
        stack.pop_back();
    }
    return holds;
}

} // namespace

std::vector<std::string> pickleConversionNotes(const Document& doc) {
    std::vector<std::string> notes;
    std::vector<size_t> viewers(doc.storages().size(), 0);
    for (const TensorEntry& t : doc.tensors())
        if (t.view != kNoView && doc.views()[t.view].pieces.empty())
            ++viewers[doc.views()[t.view].storage];
    std::string shared;
    size_t count = 0;
    for (const TensorEntry& t : doc.tensors())
        if (t.view != kNoView && doc.views()[t.view].pieces.empty() &&
            viewers[doc.views()[t.view].storage] > 1)
            shared += (count++ ? ", " : "") + t.name;
    if (count > 0)
        notes.push_back(std::to_string(count) +
                        " tensors share storages and are each written whole (the file holds no "
                        "shared bytes): " +
                        shared);
    const ObjectTree& tree = doc.objects();
    if (tree.empty())
        return notes;
    // The outermost values that hold no tensor, by path.
    const std::vector<bool> holds = holdsTensor(tree);
    std::string paths;
    size_t values = 0;
    std::vector<std::pair<uint32_t, std::string>> stack{{tree.root, std::string()}};
    std::vector<bool> seen(tree.nodes.size(), false);
    while (!stack.empty()) {
        auto [node, path] = std::move(stack.back());
        stack.pop_back();
        if (!holds[node]) {
            paths += (values++ ? ", " : "") + (path.empty() ? std::string("(root)") : path);
            continue;
        }
        if (seen[node] || tree.at(node).kind == ObjectKind::Tensor)
            continue;
        seen[node] = true;
        const std::vector<ObjectChild> children = objectChildren(tree, node);
        for (auto it = children.rbegin(); it != children.rend(); ++it)
            stack.emplace_back(it->node, objectPath(path, it->part));
    }
    if (values > 0)
        notes.push_back("values that are not tensors are left out: " + paths);
    return notes;
}

} // namespace ckptscope
