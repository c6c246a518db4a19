#pragma once

#include "ckptscope/formats/formatmodule.h"

#include <string>

namespace ckptscope {

// A PyTorch distributed checkpoint (DCP, FORMATS.md "PyTorch DCP"): a folder
// holding `.metadata` (a pickle of the logical tensors, their chunks and
// where each chunk's bytes lie) and the ranks' files (`__0_0.distcp`, …),
// where each chunk and each non-tensor item is one torch.save archive.

// True when the folder holds a `.metadata` file.
bool isDcpFolder(const std::string& folder);

// One model: each logical tensor with its global shape and dtype, made of
// its chunks (TensorPiece boxes, read on demand from the ranks' files); the
// object tree is the state dict as saved (planner_data's key paths, the
// non-tensor items unpickled from their archives); an optimizer's state
// tensors carry the parameter they belong to (TensorTraits::parameter).
// Nothing is imported or called. Throws CheckpointError naming the file and
// the tensor: a rank file missing, a chunk outside its tensor, overlapping
// another or leaving a hole, a chunk past its file, a name leaving the
// folder, a stream transform (compression), a dtype that disagrees.
FormatIndex openDcp(const std::string& folder);

// The module a DCP folder is opened with (its files are torch.save
// archives: Format::Pytorch); its probe accepts no single file.
FormatModule dcpFormat();

} // namespace ckptscope
