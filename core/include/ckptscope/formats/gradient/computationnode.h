#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// One op of the recorded computation: inputs and outputs are content IDs.
struct ComputationNode {
    std::string id;
    std::string op;
    std::vector<std::string> inputCids;
    std::optional<std::string> outputCid;   // null until the forward pass ran
    std::optional<std::string> gradientCid; // null until the backward pass ran
    std::map<std::string, std::string> metadata;

    ComputationNode() = default;
    ComputationNode(std::string id, std::string op, std::vector<std::string> inputCids);
    // Builder as in the reference: node.withMeta("shape", "[32,64]").
    ComputationNode withMeta(std::string key, std::string value) &&;
    ComputationNode withMeta(std::string key, std::string value) const&;

    bool operator==(const ComputationNode&) const = default;
};

} // namespace ckptscope
