#include "ckptscope/common/saturating.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/formatindex.h"

#include <algorithm>

namespace ckptscope {

#if defined(__x86_64__) && defined(__GLIBCXX__)
// Views cost an entry nothing: `view` sits where padding was (a 200,000-tensor
// header is as large as before views existed).
static_assert(sizeof(TensorEntry) == 104, "TensorEntry grew");
#endif

namespace {

// Two entries that view the same elements (tied weights saved twice): the
// same storage, offset, strides, shape and dtype, and no pieces.
bool sameView(const FormatIndex& index, const TensorEntry& a, const TensorEntry& b) {
    if (a.view == kNoView || b.view == kNoView || a.shape != b.shape || a.dtype != b.dtype)
        return false;
    const TensorView& x = index.views.at(a.view);
    const TensorView& y = index.views.at(b.view);
    return x.pieces.empty() && y.pieces.empty() && x.storage == y.storage &&
           x.elementOffset == y.elementOffset && x.strides == y.strides;
}

} // namespace

uint64_t indexParams(const FormatIndex& index) {
    // A tensor viewing the very elements another one views counts once.
    std::vector<size_t> viewers; // tensors with a view, ordered by storage
    uint64_t sum = 0;
    for (size_t i = 0; i < index.tensors.size(); ++i) {
        const TensorEntry& t = index.tensors[i];
        if (isMetaTensor(index, i) && index.traits[i].sameAs != UINT32_MAX)
            continue; // a meta tensor reached twice (tied weights): counted once
        if (t.view == kNoView || !index.views.at(t.view).pieces.empty())
            sum = saturatingAdd(sum, t.elementCount.value_or(UINT64_MAX));
        else
            viewers.push_back(i);
    }
    const auto storageOf = [&](size_t i) { return index.views[index.tensors[i].view].storage; };
    std::stable_sort(viewers.begin(), viewers.end(),
                     [&](size_t a, size_t b) { return storageOf(a) < storageOf(b); });
    for (size_t k = 0; k < viewers.size(); ++k) {
        const TensorEntry& t = index.tensors[viewers[k]];
        bool counted = false;
        for (size_t j = k; j-- > 0 && storageOf(viewers[j]) == storageOf(viewers[k]) && !counted;)
            counted = sameView(index, index.tensors[viewers[j]], t);
        if (!counted)
            sum = saturatingAdd(sum, t.elementCount.value_or(UINT64_MAX));
    }
    return sum;
}

uint64_t indexBytes(const FormatIndex& index) {
    // Tensors that own their bytes count them; views count each storage they
    // view once, whole (a slice saved alone keeps its whole storage).
    uint64_t sum = 0;
    std::vector<bool> storageCounted(index.storages.size(), false);
    const auto countStorage = [&](uint32_t s) {
        if (s < storageCounted.size() && !storageCounted[s]) {
            storageCounted[s] = true;
            sum = saturatingAdd(sum, index.storages[s].bytes);
        }
    };
    for (size_t i = 0; i < index.tensors.size(); ++i) {
        const TensorEntry& t = index.tensors[i];
        if (isMetaTensor(index, i))
            continue; // no bytes
        if (t.view == kNoView) {
            sum = saturatingAdd(sum, tensorSizeBytes(t).value_or(UINT64_MAX));
            continue;
        }
        const TensorView& v = index.views.at(t.view);
        if (v.pieces.empty())
            countStorage(v.storage);
        for (const TensorPiece& p : v.pieces)
            countStorage(p.storage);
    }
    return sum;
}

size_t tensorsSharingStorage(const FormatIndex& index) {
    std::vector<uint32_t> viewers(index.storages.size(), 0);
    for (const auto& t : index.tensors)
        if (t.view != kNoView && index.views.at(t.view).pieces.empty()) {
            const uint32_t s = index.views[t.view].storage;
            if (s < viewers.size())
                ++viewers[s];
        }
    size_t shared = 0;
    for (uint32_t n : viewers)
        shared += n > 1 ? n : 0;
    return shared;
}

const TensorStorage& storageAt(const FormatIndex& index, uint32_t storage) {
    if (storage >= index.storages.size())
        throw CheckpointError(CheckpointError::Kind::Invalid,
                              "storage " + std::to_string(storage) + " is not in the index");
    const TensorStorage& s = index.storages[storage];
    if (!s.deferred)
        return s;
    if (!index.resolver)
        throw CheckpointError(CheckpointError::Kind::Invalid,
                              "storage " + quotedName(s.key) + " has no resolver");
    return index.resolver->resolve(storage);
}

} // namespace ckptscope
