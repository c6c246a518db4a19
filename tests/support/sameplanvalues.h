#pragma once

// Whether the compact machine a DCP plan is read with (dcp::PlanTree) saw
// the values the general pickle machine saw: kinds, texts, ints, items and
// BUILD states, node by node from the two roots (a pair of shared nodes
// compared once). For tst_plantree and fuzz_dcp.
#include "formats/dcp/plantree.h"

#include "ckptscope/formats/objecttree.h"

#include <set>
#include <string>
#include <utility>

namespace testsupport {

struct SamePlanValues {
    const ckptscope::ObjectTree& general;
    const ckptscope::dcp::PlanTree& plan;
    std::set<std::pair<uint32_t, uint32_t>> seen = {};
    std::string why = {}; // the first difference

    bool operator()(uint32_t a, uint32_t b) {
        using ckptscope::kNoNode;
        if (a == kNoNode || b == kNoNode)
            return a == b || (why = "one state missing", false);
        if (!seen.insert({a, b}).second)
            return true;
        const ckptscope::ObjectNode& x = general.at(a);
        const ckptscope::dcp::PlanNode& y = plan.at(b);
        if (x.kind != y.kind)
            return why = "kinds differ at " + x.text, false;
        if (x.integer != y.integer || x.text != y.text)
            return why = "values differ: " + x.text + " " + std::to_string(x.integer) + " / " +
                         std::string(y.text) + " " + std::to_string(y.integer),
                   false;
        if (x.items.size() != y.items.size())
            return why = "item counts differ under " + x.text, false;
        for (size_t i = 0; i < x.items.size(); ++i)
            if (!(*this)(x.items[i], y.items[i]))
                return false;
        return (x.state == kNoNode && y.state == kNoNode) || (*this)(x.state, y.state);
    }
};

} // namespace testsupport
