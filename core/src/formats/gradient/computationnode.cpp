#include "ckptscope/formats/gradient/computationnode.h"

#include <utility>

namespace ckptscope {

ComputationNode::ComputationNode(std::string id_, std::string op_,
                                 std::vector<std::string> inputCids_)
    : id(std::move(id_)), op(std::move(op_)), inputCids(std::move(inputCids_)) {}

ComputationNode ComputationNode::withMeta(std::string key, std::string value) && {
    metadata.insert_or_assign(std::move(key), std::move(value));
    return std::move(*this);
}

ComputationNode ComputationNode::withMeta(std::string key, std::string value) const& {
    ComputationNode copy = *this;
    return std::move(copy).withMeta(std::move(key), std::move(value));
}

} // namespace ckptscope
