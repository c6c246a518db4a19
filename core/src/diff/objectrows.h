#pragma once

#include "ckptscope/formats/formatindex.h"
#include "ckptscope/formats/objecttree.h"

#include <string>
#include <vector>

namespace ckptscope {

// A tree of values as rows to compare by path: one row per leaf (a scalar or
// an empty container; tensors are compared as tensors, so a state dict in a
// pickle has no rows that its safetensors twin lacks) keyed by the keys from the root joined by
// '.', its text as Python's repr and its type; a row per object naming its class
// ("module.name"); and, where an object is reached again (a pickle's memo)
// or leads back into itself, one row "→ PATH" instead of its contents, so
// a billion-laughs tree stays small. diff compares two trees by these rows,
// the way it compares flat metadata: added, removed, changed value or type.
std::vector<MetadataRow> objectRows(const ObjectTree& tree);

} // namespace ckptscope
