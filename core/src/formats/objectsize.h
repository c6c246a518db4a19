#pragma once

#include "ckptscope/formats/objecttree.h"

#include <cstdint>

namespace ckptscope {

// The nodes the tree below `root` has when every shared node is written out
// at each place (a cycle counted once), saturating just past `limit`: what
// writeObjectJson compares with its budget. Recursive: the caller bounds the
// tree's depth first (a pickle's object is refused past 1000 levels).
uint64_t objectExpandedSize(const ObjectTree& tree, uint32_t root, uint64_t limit);

} // namespace ckptscope
