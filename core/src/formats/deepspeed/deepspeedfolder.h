#pragma once

#include "ckptscope/formats/formatmodule.h"

#include <string>

namespace ckptscope {

// A DeepSpeed ZeRO checkpoint (FORMATS.md §5, "DeepSpeed"): a folder holding
// `latest` (the tag of the step folder beside it) or a step folder holding
// mp_rank_00_model_states.pt (stages 1–2; one zero_pp_rank_R_mp_rank_00_
// model_states.pt per rank at stage 3) and one
// (bf16_)zero_pp_rank_R_mp_rank_00_optim_states.pt per data-parallel rank.

// The step folder of a DeepSpeed checkpoint in `folder` (the folder itself,
// or the one `latest` names), "" when it holds none. Throws CheckpointError
// when `latest` names no folder beside it, or a name leaving it.
std::string deepSpeedStepFolder(const std::string& folder);

// One model: the module's tensors as saved, and cut from the ranks'
// partitions (read on demand, as pieces of each rank's file) the fp32
// master weights `fp32.NAME` and Adam's moments `exp_avg.NAME`,
// `exp_avg_sq.NAME` (TensorTraits::parameter NAME); the object tree holds
// what the optimizer's figures need (zero_stage, world_size, param_groups
// with their parameters' names, step). Throws CheckpointError naming the file
// and the tensor: a rank file missing, a partition count that disagrees, a
// partition too short for its parameters, tensor or pipeline parallelism.
FormatIndex openDeepSpeed(const std::string& stepFolder);

// The module a DeepSpeed folder is opened with (Format::Pytorch: its files
// are torch.save files); its probe accepts no single file.
FormatModule deepSpeedFormat();

} // namespace ckptscope
