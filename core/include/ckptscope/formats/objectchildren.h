#pragma once

#include "ckptscope/formats/objecttree.h"

#include <functional>
#include <string>
#include <vector>

namespace ckptscope {

// True when a node holds others (items, state, list or dict items, a callee).
bool objectHasChildren(const ObjectNode& node);

// One child of a node and the part of the path it adds.
struct ObjectChild {
    std::string part;
    uint32_t node;
};

// A node's children in file order, each with its path part: a dict's values
// by str(key), a list's, tuple's or set's items by index, an object's "call",
// "args.N", "state", "listitems", "dictitems". The one walk the Metadata
// tree, diff's rows and the paths of {"ref"} share.
std::vector<ObjectChild> objectChildren(const ObjectTree& tree, uint32_t node);

// Each value with children once, at its first place in depth-first file
// order (where the Metadata tree draws it and {"ref"} points), without
// recursion: `visit(node, parent, part)`, the root's parent kNoNode and its
// part empty. The walk stops when `visit` returns false.
void forEachFirstPlace(
    const ObjectTree& tree, uint32_t root,
    const std::function<bool(uint32_t node, uint32_t parent, const std::string& part)>& visit);

// path + "." + part, or part at the root.
std::string objectPath(const std::string& path, const std::string& part);

} // namespace ckptscope
