#pragma once

#include "ckptscope/formats/formatmodule.h"

namespace ckptscope {

// PyTorch's torch.save files (FORMATS.md §5): a stored zip archive holding
// data.pkl and one record per storage (torch ≥ 1.6), or the legacy layout of
// five pickles and the storages after them. The pickle is evaluated by a
// machine that imports and calls nothing.
FormatModule pytorchFormat();

// One torch.save file's index as a part of a model (a shard): without the
// module's look beside the file (the model for an optimizer.pt, the rest of
// a shard set).
FormatIndex openPytorchFile(const ByteSource& source);

// The torch.save archive that lies in bytes [begin, end) of a source (a DCP
// chunk or bytes item inside a .distcp file); its storages' offsets are the
// source's. Throws CheckpointError naming the source and the byte.
FormatIndex openPytorchArchive(const ByteSource& source, uint64_t begin, uint64_t end);

} // namespace ckptscope
