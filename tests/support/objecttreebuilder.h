#pragma once

// Object trees written by hand for the tests of structured metadata (the
// JSON rendering, diff's rows, the Metadata tab's model): one node a call.
#include "ckptscope/formats/objecttree.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace testsupport {

struct ObjectTreeBuilder {
    ckptscope::ObjectTree tree;

    uint32_t none() { return tree.add({}); }
    uint32_t boolean(bool b) { return scalar(ckptscope::ObjectKind::Bool, b, 0); }
    uint32_t integer(int64_t v) { return scalar(ckptscope::ObjectKind::Int, v, 0); }
    uint32_t real(double v) { return scalar(ckptscope::ObjectKind::Float, 0, v); }
    uint32_t text(ckptscope::ObjectKind kind, std::string s) {
        ckptscope::ObjectNode n;
        n.kind = kind;
        n.text = std::move(s);
        return tree.add(n);
    }
    uint32_t str(std::string s) { return text(ckptscope::ObjectKind::String, std::move(s)); }
    uint32_t container(ckptscope::ObjectKind kind, std::vector<uint32_t> items = {}) {
        ckptscope::ObjectNode n;
        n.kind = kind;
        n.items = std::move(items);
        return tree.add(n);
    }
    uint32_t tensor(uint32_t index) {
        ckptscope::ObjectNode n;
        n.kind = ckptscope::ObjectKind::Tensor;
        n.tensor = index;
        return tree.add(n);
    }

private:
    uint32_t scalar(ckptscope::ObjectKind kind, int64_t i, double r) {
        ckptscope::ObjectNode n;
        n.kind = kind;
        n.integer = i;
        n.real = r;
        return tree.add(n);
    }
};

} // namespace testsupport
