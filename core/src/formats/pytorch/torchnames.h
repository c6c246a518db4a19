#pragma once

#include "ckptscope/formats/formatindex.h"
#include "formats/pytorch/torchunpickler.h"

#include <vector>

namespace ckptscope::pytorch {

// Lists the tensors of a pickled object under their names: the path of keys
// from the root joined by '.' (dict keys as str(key), list and tuple items by
// index; a tensor at the root is "tensor"), and inside a pickled nn.Module
// the names its state_dict() gives, under the module's path. A tensor object
// reached by several paths is listed once per path, each after the first
// with TensorTraits::sameAs (its node is copied so each place names its own
// entry). Fills index.tensors, views and traits; `storageOf` maps the
// unpickler's storages to index.storages. A sparse tensor is listed by its
// parts, as torch names them (NAME.indices and NAME.values for COO;
// NAME.crow_indices, NAME.col_indices, NAME.values for CSR…). Tensors held
// inside other objects are not named. Throws CheckpointError for a tensor whose element count
// passes 64 bits.
void nameTensors(FormatIndex& index, const TorchUnpickler& u,
                 const std::vector<uint32_t>& storageOf);

} // namespace ckptscope::pytorch
