#pragma once

#include "ckptscope/run/runseries.h"

#include <string>
#include <vector>

namespace ckptscope {

// Tensors whose names differ only by one number: `layers.{N}.attn.q.weight`,
// `h.{N}.mlp.c_fc.weight`, `blocks/{N}/norm`. A number is a maximal run of
// ASCII digits. A name with several numbers belongs to one family per number
// (`layers.3.experts.7.w` to `layers.{N}.experts.7.w` and to
// `layers.3.experts.{N}.w`): each family varies one position and holds the
// others fixed, so both "which layer" and "which expert" can be looked at.
// Only a name's first occurrence in a file takes part (a repeated name has no
// layer of its own).
struct LayerFamily {
    std::string prefix, suffix; // the name is prefix + number + suffix
    struct Member {
        std::string number; // as written ("03" stays "03")
        size_t series = 0;  // index into the series given
    };
    std::vector<Member> members; // numeric order (then as written: "3" before "03")

    // prefix + "{N}" + suffix.
    std::string pattern() const;
};

// Families with at least two members, in order of their first member's first
// appearance in `series` (checkpoint order, then file order).
std::vector<LayerFamily> layerFamilies(const std::vector<TensorSeries>& series);

// True when digit strings a < b as numbers (any length, no overflow), ties
// broken by the text so the order is total.
bool numberTextLess(const std::string& a, const std::string& b);

} // namespace ckptscope
