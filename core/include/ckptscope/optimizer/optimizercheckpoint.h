#pragma once

#include "ckptscope/document/document.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// How an optimizer turns its state into an update, as far as its state dict
// tells: Adam and AdamW (torch, apex and DeepSpeed FusedAdam, Hugging Face's
// AdamW) keep exp_avg and exp_avg_sq, SGD with momentum a momentum_buffer.
// Any other optimizer's state is listed without a derived figure.
enum class UpdateRule { Adam, Sgd, Other };
const char* updateRuleName(UpdateRule rule); // "adam", "sgd", "other"

// The hyperparameters of a parameter group that the update depends on.
struct OptimizerGroup {
    double lr = 0;
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    double weightDecay = 0, momentum = 0;
    bool amsgrad = false, nesterov = false;
    bool biasCorrection = true; // FusedAdam's bias_correction, HF AdamW's correct_bias
    // Whether weight decay is decoupled (AdamW): from the group's
    // decoupled_weight_decay (torch ≥ 2.6) or correct_bias (HF AdamW);
    // unknown for torch's Adam and AdamW before that, whose groups are alike.
    std::optional<bool> decoupledDecay;
    std::optional<double> step; // FusedAdam keeps the step in its group
};

// One parameter's optimizer state: where its tensors are, its group's
// hyperparameters and its step.
struct ParameterState {
    std::string parameter;        // its name in the model, else "state.<id>"
    std::optional<size_t> weight; // the model's tensor of that name
    UpdateRule rule = UpdateRule::Other;
    OptimizerGroup group;
    std::optional<double> step; // the state's step, else the group's
    // Tensors of the optimizer's document.
    std::optional<size_t> expAvg, expAvgSq, maxExpAvgSq, momentumBuffer;
    std::vector<size_t> stateTensors; // all of them, in file order
};

// A checkpoint's model and optimizer state, paired: one document (a
// Lightning .ckpt, {"model", "optimizer"}) or two (a Trainer folder's
// model beside its optimizer.pt).
struct OptimizerCheckpoint {
    std::shared_ptr<const Document> model, optimizer;
    std::vector<ParameterState> parameters; // in the state dict's id order
    std::vector<std::string> warnings;      // what could not be paired, and why
};

// The optimizer state of `optimizer` (a whole optimizer.pt, a Lightning
// checkpoint's optimizer_states, a {"optimizer": …} entry), its parameters
// paired with `model`'s tensors by the names the PyTorch reader gave them
// (TensorTraits::parameter). `model` may be the same document. Nothing when
// the file holds no optimizer state dict.
std::optional<OptimizerCheckpoint>
findOptimizerCheckpoint(std::shared_ptr<const Document> model,
                        std::shared_ptr<const Document> optimizer);

// Opens what `path` names as a model with its optimizer: a Trainer
// checkpoint folder (optimizer.pt beside model.safetensors, its index, or
// pytorch_model.bin), an optimizer.pt (the model beside it), or one file
// holding both. Throws OpenError naming the path when no optimizer state is
// found there.
OptimizerCheckpoint openOptimizerCheckpoint(const std::string& path);

// The optimizer state that goes with a document already open: its own
// (Lightning), the optimizer.pt beside it when it is its Trainer folder's
// model file, or for an optimizer.pt the model beside it (opened here).
// Nothing when there is none; throws OpenError when the file beside cannot
// be read.
std::optional<OptimizerCheckpoint> optimizerCheckpointFor(std::shared_ptr<const Document> doc);

// For each tensor of `doc` (the checkpoint's model or optimizer document),
// the parameter (into `parameters`) whose weight or state tensor it is.
std::vector<std::optional<size_t>> parameterOfTensors(const OptimizerCheckpoint& checkpoint,
                                                      const Document& doc);

} // namespace ckptscope
