#pragma once

#include "ckptscope/formats/objecttree.h"

#include <cstdint>

namespace ckptscope {

// How deep a pickle's object may nest: deeper is refused at open ("too
// deep"). A value can still lie deeper on some walk when the tree has a
// cycle (the open's count cannot see every path through one), so every
// recursive walk of a tree stops at this depth as well.
inline constexpr uint32_t kMaxObjectDepth = 1000;

// The nodes the tree below `root` has when every shared node is written out
// at each place (a cycle counted once), saturating just past `limit`: what
// writeObjectJson compares with its budget. Past kMaxObjectDepth levels it
// counts `limit + 1` (not written out).
uint64_t objectExpandedSize(const ObjectTree& tree, uint32_t root, uint64_t limit);

// The paths to the first place of each value with children (the keys from
// `root` joined by '.', as the JSON's references and the Metadata tab name
// them), their bytes summed, stopping just past `limit`. Without a walk's
// recursion. One long key shared by nested dicts makes this quadratic in
// the nesting: a file is refused past kMaxPathBytes rather than a front end
// holding gigabytes of paths.
uint64_t objectPathBytes(const ObjectTree& tree, uint32_t root, uint64_t limit);
inline constexpr uint64_t kMaxPathBytes = uint64_t(256) << 20;

} // namespace ckptscope
