#pragma once

#include "ckptscope/formats/formatindex.h"

#include <string>
#include <vector>

namespace ckptscope::pytorch {

// A model parameter an optimizer's state may belong to.
struct ModelParameter {
    std::string name;
    std::vector<uint64_t> shape;
};

// The parameters of a model's state dict, in its order: every tensor whose
// name starts with `prefix` (taken off), minus buffers (running_mean,
// running_var, num_batches_tracked, inv_freq, position_ids, masks…) and minus
// a tensor that views the very elements an earlier one views (a tied weight).
std::vector<ModelParameter> modelParameters(const FormatIndex& model, const std::string& prefix);

// Names the state tensors of the optimizer state dict at `optimizer` (a dict
// with "state" and "param_groups") by the parameters their ids stand for:
// param_groups' ids taken in one list in model order, else as the Hugging
// Face Trainer groups them (decayed parameters — all but biases and norm
// weights — then the rest, each in model order); the first whose group
// sizes match and whose every state tensor of more than one element has its
// parameter's shape is kept (TensorTraits::parameter). Returns "" or why no
// order fits (for a warning).
std::string nameOptimizerState(FormatIndex& index, uint32_t optimizer,
                               const std::vector<ModelParameter>& params);

// The optimizer state dicts of a checkpoint that holds its model too:
// Lightning's state_dict + optimizer_states, or {"model": …, "optimizer": …}.
// Warns when the names cannot be inferred.
void nameOptimizersInFile(FormatIndex& index);

// An optimizer state dict at the root (a Trainer folder's optimizer.pt):
// named from the model beside it (model.safetensors or its index, else
// pytorch_model.bin) when `path` is a local file and one lies there.
void nameOptimizerFromFolder(FormatIndex& index, const std::string& path);

} // namespace ckptscope::pytorch
