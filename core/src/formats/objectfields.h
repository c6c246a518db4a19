#pragma once

#include "ckptscope/formats/objecttree.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckptscope {

// The fields of pickled values, read the same way from any tree whose nodes
// have `kind`, `text`, `integer`, `items` and `state`: an ObjectTree, or the
// compact tree a DCP plan is read into (dcp::PlanTree).
template <class Tree> struct ObjectFields {
    const Tree& t;

    const auto& at(uint32_t n) const { return t.at(n); }
    // An object of a class whose name ends with `cls` (".Metadata").
    bool isObject(uint32_t n, std::string_view cls) const {
        return n != kNoNode && at(n).kind == ObjectKind::Object && at(n).text.ends_with(cls);
    }
    // Dict only: the value under the string key, else kNoNode.
    uint32_t find(uint32_t dict, std::string_view key) const {
        const auto& n = at(dict);
        if (n.kind != ObjectKind::Dict)
            return kNoNode;
        for (size_t i = 0; i + 1 < n.items.size(); i += 2) {
            const auto& k = at(n.items[i]);
            if (k.kind == ObjectKind::String && k.text == key)
                return n.items[i + 1];
        }
        return kNoNode;
    }
    // A dataclass's field: the key of its BUILD state dict (or of a dict).
    uint32_t field(uint32_t obj, std::string_view name) const {
        if (obj == kNoNode)
            return kNoNode;
        const uint32_t state = at(obj).kind == ObjectKind::Dict ? obj : at(obj).state;
        return state == kNoNode ? kNoNode : find(state, name);
    }
    std::optional<std::string> text(uint32_t n) const {
        if (n == kNoNode || at(n).kind != ObjectKind::String)
            return std::nullopt;
        return std::string(at(n).text);
    }
    // The text itself, valid while the tree is.
    std::optional<std::string_view> view(uint32_t n) const {
        if (n == kNoNode || at(n).kind != ObjectKind::String)
            return std::nullopt;
        return std::string_view(at(n).text);
    }
    std::optional<uint64_t> count(uint32_t n) const {
        if (n == kNoNode || at(n).kind != ObjectKind::Int || at(n).integer < 0)
            return std::nullopt;
        return uint64_t(at(n).integer);
    }
    bool none(uint32_t n) const { return n == kNoNode || at(n).kind == ObjectKind::None; }
    // The sizes a torch.Size((…)), a tuple or a list of ints holds; nullopt
    // for anything else (a negative size too).
    std::optional<std::vector<uint64_t>> sizes(uint32_t node) const {
        if (node == kNoNode)
            return std::nullopt;
        const auto* s = &at(node);
        if (s->kind == ObjectKind::Object && s->text == "torch.Size" && s->items.size() == 1)
            s = &at(s->items[0]);
        if (s->kind != ObjectKind::Tuple && s->kind != ObjectKind::List)
            return std::nullopt;
        std::vector<uint64_t> out;
        out.reserve(s->items.size());
        for (uint32_t d : s->items) {
            const auto& v = at(d);
            if (v.kind != ObjectKind::Int || v.integer < 0)
                return std::nullopt;
            out.push_back(uint64_t(v.integer));
        }
        return out;
    }
};

} // namespace ckptscope
