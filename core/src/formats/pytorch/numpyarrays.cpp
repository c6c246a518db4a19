#include "ckptscope/formats/pytorch/numpyarrays.h"

#include "ckptscope/formats/objectchildren.h"

#include <algorithm>
#include <cstring>

namespace ckptscope {

namespace {

// Bytes per element of a numeric NumPy type code ("u4" → 4), 0 for others.
size_t itemSize(const std::string& code) {
    if (code.size() < 2 || std::strchr("buif", code[0]) == nullptr)
        return 0;
    const size_t n = size_t(std::atoi(code.c_str() + 1));
    return (n == 1 || n == 2 || n == 4 || n == 8) ? n : 0;
}

// An array from a _reconstruct object's state, when it has the shape of one.
std::optional<NumpyArray> arrayOf(const ObjectTree& tree, uint32_t node) {
    const ObjectNode& n = tree.at(node);
    if (n.kind != ObjectKind::Object || !n.text.ends_with("multiarray._reconstruct") ||
        n.state == kNoNode)
        return std::nullopt;
    const ObjectNode& state = tree.at(n.state);
    if (state.kind != ObjectKind::Tuple || state.items.size() < 5)
        return std::nullopt;
    NumpyArray a;
    const ObjectNode& shape = tree.at(state.items[1]);
    if (shape.kind != ObjectKind::Tuple)
        return std::nullopt;
    for (uint32_t d : shape.items) {
        if (tree.at(d).kind != ObjectKind::Int || tree.at(d).integer < 0)
            return std::nullopt;
        a.shape.push_back(uint64_t(tree.at(d).integer));
    }
    const ObjectNode& dtype = tree.at(state.items[2]);
    if (dtype.kind != ObjectKind::Object || !dtype.text.ends_with("dtype") || dtype.items.empty() ||
        tree.at(dtype.items[0]).kind != ObjectKind::String)
        return std::nullopt;
    std::string order = "|";
    if (dtype.state != kNoNode && tree.at(dtype.state).kind == ObjectKind::Tuple &&
        tree.at(dtype.state).items.size() > 1 &&
        tree.at(tree.at(dtype.state).items[1]).kind == ObjectKind::String)
        order = tree.at(tree.at(dtype.state).items[1]).text;
    a.dtype = order + tree.at(dtype.items[0]).text;
    a.fortranOrder =
        tree.at(state.items[3]).kind == ObjectKind::Bool && tree.at(state.items[3]).integer;
    if (tree.at(state.items[4]).kind == ObjectKind::Bytes) {
        a.data = state.items[4];
        a.nbytes = tree.at(a.data).text.size();
    }
    return a;
}

} // namespace

std::vector<NumpyArray> numpyArrays(const ObjectTree& tree) {
    std::vector<NumpyArray> out;
    if (tree.empty())
        return out;
    // Most checkpoints hold none: a pass over the nodes (no paths built)
    // says so before the walk that names them (a front end asks on its
    // own thread).
    if (std::none_of(tree.nodes.begin(), tree.nodes.end(), [](const ObjectNode& n) {
            return n.kind == ObjectKind::Object && n.text.ends_with("multiarray._reconstruct");
        }))
        return out;
    std::vector<bool> seen(tree.nodes.size(), false);
    // Depth first with a stack of its own, children in file order.
    std::vector<std::pair<uint32_t, std::string>> stack{{tree.root, std::string()}};
    while (!stack.empty()) {
        auto [node, path] = std::move(stack.back());
        stack.pop_back();
        if (seen[node])
            continue;
        seen[node] = true;
        if (std::optional<NumpyArray> a = arrayOf(tree, node)) {
            a->path = path;
            out.push_back(std::move(*a));
            continue;
        }
        const ObjectNode& n = tree.at(node);
        // NumPy's RNG state: ('MT19937', keys, pos, has_gauss, cached_gaussian).
        if (n.kind == ObjectKind::Tuple && n.items.size() == 5 &&
            tree.at(n.items[0]).kind == ObjectKind::String && tree.at(n.items[0]).text == "MT19937")
            if (std::optional<NumpyArray> a = arrayOf(tree, n.items[1])) {
                a->path = objectPath(path, "1");
                a->role = "NumPy MT19937 state";
                seen[n.items[1]] = true;
                out.push_back(std::move(*a));
            }
        const std::vector<ObjectChild> children = objectChildren(tree, node);
        for (auto it = children.rbegin(); it != children.rend(); ++it)
            stack.emplace_back(it->node, objectPath(path, it->part));
    }
    return out;
}

std::optional<NumpyValues> numpyValues(const ObjectTree& tree, const NumpyArray& a) {
    if (a.data == kNoNode || a.dtype.size() < 3 || a.dtype[0] == '>')
        return std::nullopt;
    const std::string code = a.dtype.substr(1);
    const size_t size = itemSize(code);
    uint64_t count = 1;
    for (uint64_t d : a.shape)
        if (__builtin_mul_overflow(count, d, &count))
            return std::nullopt;
    if (size == 0 || count > a.nbytes / size || count * size != a.nbytes ||
        (size > 1 && a.dtype[0] == '|') || (code[0] == 'f' && size < 4))
        return std::nullopt;
    const std::string& bytes = tree.at(a.data).text;
    NumpyValues v;
    for (uint64_t i = 0; i < count; ++i) {
        const char* p = bytes.data() + i * size;
        uint64_t raw = 0;
        std::memcpy(&raw, p, size);
        if (code[0] == 'b') {
            v.integers.push_back(raw != 0);
        } else if (code[0] == 'u') {
            v.unsigned_.push_back(raw);
        } else if (code[0] == 'i') {
            const unsigned shift = unsigned(64 - 8 * size);
            v.integers.push_back(int64_t(raw << shift) >> shift);
        } else if (size == 4) {
            float f;
            std::memcpy(&f, p, 4);
            v.reals.push_back(f);
        } else {
            double d;
            std::memcpy(&d, p, 8);
            v.reals.push_back(d);
        }
    }
    return v;
}

} // namespace ckptscope
