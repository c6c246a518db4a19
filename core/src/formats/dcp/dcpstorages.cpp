#include "formats/dcp/dcpstorages.h"

#include "formats/pytorch/pytorchformat.h"
#include "formats/tensorgather.h"

namespace ckptscope::dcp {

TensorStorage DcpStorages::find(uint32_t storage) const {
    const TensorStorage& p = planned.at(storage);
    const Chunk& c = chunks.at(storage);
    const ByteSource& file = *files.at(p.shard);
    const std::string where = file.name() + ": tensor " + quotedName(tensors.at(c.tensor)) +
                              " chunk at " + sizesText(c.offsets) + ", saved at byte " +
                              std::to_string(p.offset);
    FormatIndex part;
    try {
        part = openPytorchArchive(file, p.offset, p.offset + p.containerBytes);
    } catch (const CheckpointError& e) {
        failInvalid(where, after(e.what(), file.name()));
    }
    if (part.tensors.size() != 1 || part.objects.empty() ||
        part.objects.at(part.objects.root).kind != ObjectKind::Tensor)
        failInvalid(where, "not a torch.save of one tensor");
    const TensorEntry& t = part.tensors[0];
    if (t.dtype != p.dtype)
        failInvalid(where, std::string("it holds ") + dtypeName(t.dtype) + ", the plan says " +
                               dtypeName(p.dtype));
    if (t.shape != c.sizes)
        failInvalid(where, "it holds a tensor of sizes " + sizesText(t.shape) + ", the plan says " +
                               sizesText(c.sizes));
    if (t.view == kNoView) // a meta tensor: a dtype and a shape, no bytes
        failInvalid(where, "it holds a meta tensor, which has no values");
    const TensorView& saved = part.views.at(t.view);
    TensorStorage s = part.storages.at(saved.storage);
    const size_t size = dtypeSize(p.dtype);
    // torch clones a chunk that views part of a larger storage, but not a
    // permuted view of a whole one (a transposed weight): that chunk keeps
    // its strides, and is read through them.
    bool contiguous = true;
    uint64_t stride = 1;
    for (size_t k = t.shape.size(); k-- > 0 && !saved.strides.empty();) {
        contiguous = contiguous && (t.shape[k] <= 1 || uint64_t(saved.strides[k]) == stride);
        stride *= t.shape[k];
    }
    uint64_t reach = p.bytes / size; // elements from the view's first one
    if (!contiguous && reach > 0) {
        const std::optional<uint64_t> last =
            lastStorageElement(t.shape, TensorView{0, 0, saved.strides, {}});
        if (!last)
            failInvalid(where, "its strides reach past 2^64 elements");
        reach = *last + 1;
        s.boxStrides = saved.strides;
    }
    if (saved.elementOffset > s.bytes / size || reach > s.bytes / size - saved.elementOffset)
        failInvalid(where, "its storage holds fewer elements than the chunk" +
                               std::string(s.boxStrides.empty() ? "" : "'s strides reach"));
    s.offset += saved.elementOffset * size;
    s.bytes = reach * size;
    s.key = fileNames.at(p.shard) + " @" + std::to_string(p.offset); // as the index names it
    s.shard = p.shard;
    return s;
}

} // namespace ckptscope::dcp
