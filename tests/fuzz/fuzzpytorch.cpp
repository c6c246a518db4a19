// Checks of the PyTorch reader for fuzz_pickle, fuzz_pytorch and the replay
// in tst_fuzzregressions: nothing read from a pickle is run, a refused input
// fails with a CheckpointError naming the file, and an accepted one keeps
// its views inside their storages, reads every value it lists and renders
// its object tree.
#include "fuzzchecks.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/pytorch/picklescan.h"
#include "ckptscope/formats/tensorvalues.h"
#include "ckptscope/io/bytesource.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace ckptscope;

namespace fuzzchecks {

namespace {

constexpr uint64_t kMaxValues = 1 << 16; // per tensor, to keep runs fast

// The legacy layout's first three pickles (magic number, protocol 1001, an
// empty sys_info): what follows is read as the object's pickle.
const std::string kLegacyHead(
    "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.\x80\x02M\xe9\x03.\x80\x02}.", 23);

std::shared_ptr<MemorySource> sourceOf(const std::string& bytes, const std::string& name) {
    return std::make_shared<MemorySource>(std::vector<uint8_t>(bytes.begin(), bytes.end()), name);
}

void requireNamed(const std::exception& e, const std::string& name) {
    require(std::string(e.what()).rfind(name, 0) == 0,
            std::string("error without the file name: ") + e.what());
}

// The elements a view reaches lie inside its storage.
void checkViews(const FormatIndex& index) {
    for (const TensorEntry& t : index.tensors) {
        require(t.view < index.views.size(), "a pickled tensor without a view");
        const TensorView& v = index.views[t.view];
        require(v.storage < index.storages.size(), "a view of no storage");
        if (t.dataLen == 0)
            continue;
        const TensorStorage& s = index.storages[v.storage];
        const uint64_t numel = s.bytes / dtypeSize(s.dtype);
        uint64_t last = v.elementOffset;
        for (size_t d = 0; d < t.shape.size(); ++d) {
            const uint64_t stride = v.strides.empty() ? 0 : uint64_t(v.strides[d]);
            if (!v.strides.empty())
                last += (t.shape[d] - 1) * stride;
        }
        if (v.strides.empty())
            last += t.dataLen - 1;
        require(last < numel, "tensor \"" + t.name + "\": a view past its storage was accepted");
    }
}

} // namespace

void checkPickle(std::string_view bytes) {
    const std::string name = "fuzz.pkl";
    const auto source = sourceOf(kLegacyHead + std::string(bytes), name);
    const PickleScan scan = scanPickle(*source);
    require(scan.holdsPickle, "a legacy head not taken for a pickle");
    if (!scan.error.empty())
        require(scan.error.rfind(name, 0) == 0, "scan error without the file name: " + scan.error);
    for (const PickleImport& imp : scan.imports) {
        require(imp.count > 0, "an import named no times");
        for (uint32_t c : imp.calls)
            require(c < scan.objects.nodes.size(), "a call outside the tree");
        if (imp.risk == ImportRisk::Unsafe)
            require(std::any_of(scan.warnings.begin(), scan.warnings.end(),
                                [&](const std::string& w) {
                                    return w.find("unsafe import " + imp.name) == 0;
                                }),
                    "an unsafe import without its warning: " + imp.name);
    }
    // The object as a whole file: opens or is refused naming the file.
    try {
        const FormatIndex index = formatModule(Format::Pytorch).open(*source);
        checkViews(index);
        std::string json;
        JsonStreamWriter w(json);
        writeObjectJson(w, index.objects, {}, 10000);
        w.flush();
    } catch (const CheckpointError& e) {
        requireNamed(e, name);
    }
}

void checkPytorch(std::string_view bytes) {
    const std::string name = "fuzz.pt";
    const auto source = sourceOf(std::string(bytes), name);
    FormatIndex index;
    try {
        const FormatModule& m = detectFormat(*source);
        if (m.format != Format::Pytorch)
            return;
        index = m.open(*source);
    } catch (const CheckpointError& e) {
        requireNamed(e, name);
        return;
    } catch (const std::exception& e) {
        requireNamed(e, name); // OpenError from detectFormat
        return;
    }
    require(index.traits.size() == index.tensors.size(), "traits not one per tensor");
    checkViews(index);
    const TensorSources from{*source, index};
    for (const TensorEntry& t : index.tensors) {
        const uint64_t n = std::min(t.dataLen, kMaxValues);
        if (n == 0 || !dtypeDecodable(t.dtype))
            continue;
        std::vector<float> all(n), parts(n);
        readTensorValues(from, t, 0, n, all.data());
        // The same values read in two pieces.
        const uint64_t half = n / 2;
        readTensorValues(from, t, 0, half, parts.data());
        readTensorValues(from, t, half, n - half, parts.data() + half);
        require(std::memcmp(all.data(), parts.data(), n * sizeof(float)) == 0,
                "tensor \"" + t.name + "\": values read in pieces differ");
    }
    const PickleScan scan = scanPickle(*source);
    require(scan.holdsPickle && scan.error.empty(), "an opened file's pickle does not scan");
    require(scan.imports.size() == index.imports.size(), "scan and open see other imports");
}

} // namespace fuzzchecks
