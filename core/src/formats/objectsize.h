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

} // namespace ckptscope
