#pragma once

// The pieces of a DeepSpeed ZeRO step folder the builder (deepspeedfolder.cpp)
// reads: each file indexed by the PyTorch module, the ZeRO stage, the
// parameters' names and shapes, and the tree the optimizer's figures read.

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/formatindex.h"
#include "ckptscope/io/bytesource.h"
#include "formats/invalidfile.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ckptscope::deepspeed {

// One of the checkpoint's files, indexed by the PyTorch module.
struct Part {
    std::string name; // in the step folder
    std::shared_ptr<const ByteSource> source;
    FormatIndex index;
    std::unordered_map<std::string, size_t> tensorOf; // name → index

    // The node at a path of dict keys from the root, kNoNode when absent.
    uint32_t at(std::initializer_list<const char*> path) const {
        const ObjectTree& t = index.objects;
        uint32_t n = t.root;
        for (const char* key : path) {
            if (n == kNoNode || t.at(n).kind != ObjectKind::Dict)
                return kNoNode;
            n = t.find(n, key);
        }
        return n;
    }
    std::optional<int64_t> integer(uint32_t n) const {
        if (n == kNoNode || index.objects.at(n).kind != ObjectKind::Int)
            return std::nullopt;
        return index.objects.at(n).integer;
    }
};

Part readPart(const std::string& folder, const std::string& name);

// ZeroStageEnum pickled as getattr(ZeroStageEnum, 'gradients') (Python
// 3.11), or a plain int.
std::optional<int64_t> zeroStage(const Part& p);

// A parameter as param_shapes lists it: name, shape, group.
struct Param {
    std::string name;
    std::vector<uint64_t> shape;
    uint64_t numel = 1;
    size_t group = 0;
};

std::vector<Param> paramShapes(const Part& model);

// What the optimizer's figures need, as a tree in `out` (its root set):
// zero_stage, world_size and rank 0's parameter groups, each with its
// parameters' names and, where `stepOf(group)` gives one, its step tensor's
// node.
void addOptimizerTree(ObjectTree& out, const Part& model, const Part& rank0, int64_t stage,
                      size_t worldSize, const std::vector<Param>& params, const std::string& base,
                      const std::function<uint32_t(size_t group)>& stepOf);

} // namespace ckptscope::deepspeed
