#include "ckptscope/diff/tensordiff.h"

#include "ckptscope/formats/dtype.h"

#include "stats/blockworkers.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace ckptscope {

const char* diffStatusName(DiffStatus status) {
    switch (status) {
    case DiffStatus::Same:
        return "same";
    case DiffStatus::Changed:
        return "changed";
    case DiffStatus::Added:
        return "added";
    case DiffStatus::Removed:
        return "removed";
    case DiffStatus::ShapeChanged:
        return "shape_changed";
    }
    return "?";
}

bool TensorDiff::differs() const {
    const TensorDiffSummary& s = summary;
    if (s.changed || s.added || s.removed || s.shapeChanged)
        return true;
    return std::any_of(metadata.begin(), metadata.end(),
                       [](const MetadataDiffEntry& m) { return m.status != DiffStatus::Same; });
}

UnknownTensorError::UnknownTensorError(std::string name)
    : m_name(std::move(name)), m_message("neither file has a tensor named '" + m_name + "'") {}

namespace {

std::vector<MetadataDiffEntry> diffMetadata(const Document& a, const Document& b) {
    std::map<std::string, std::optional<std::string>> inA, inB; // later entries win
    for (const auto& [k, v] : a.metadata())
        inA[k] = v;
    for (const auto& [k, v] : b.metadata())
        inB[k] = v;
    std::set<std::string> keys;
    for (const auto& kv : inA)
        keys.insert(kv.first);
    for (const auto& kv : inB)
        keys.insert(kv.first);
    std::vector<MetadataDiffEntry> out;
    for (const std::string& k : keys) {
        MetadataDiffEntry e;
        e.key = k;
        const auto ia = inA.find(k), ib = inB.find(k);
        if (ia != inA.end())
            e.a = ia->second;
        if (ib != inB.end())
            e.b = ib->second;
        e.status = !e.a           ? DiffStatus::Added
                   : !e.b         ? DiffStatus::Removed
                   : *e.a == *e.b ? DiffStatus::Same
                                  : DiffStatus::Changed;
        out.push_back(std::move(e));
    }
    return out;
}

// Pairs the k-th occurrence of a name in A with the k-th in B: A's order,
// then the B-only tensors in B's order.
std::vector<TensorDiffEntry> pairTensors(const Document& a, const Document& b) {
    std::map<std::string, std::vector<size_t>> byNameB;
    for (size_t j = 0; j < b.tensors().size(); ++j)
        byNameB[b.tensors()[j].name].push_back(j);
    std::map<std::string, size_t> seen;
    std::vector<bool> paired(b.tensors().size(), false);
    std::vector<TensorDiffEntry> out;
    for (size_t i = 0; i < a.tensors().size(); ++i) {
        TensorDiffEntry e;
        e.name = a.tensors()[i].name;
        e.indexA = i;
        const size_t k = seen[e.name]++;
        const auto it = byNameB.find(e.name);
        if (it != byNameB.end() && k < it->second.size()) {
            e.indexB = it->second[k];
            paired[*e.indexB] = true;
        }
        out.push_back(std::move(e));
    }
    for (size_t j = 0; j < b.tensors().size(); ++j)
        if (!paired[j]) {
            TensorDiffEntry e;
            e.name = b.tensors()[j].name;
            e.indexB = j;
            out.push_back(std::move(e));
        }
    return out;
}

} // namespace

ValueReader tensorReader(const Document& doc, size_t index) {
    return [&doc, index](uint64_t first, uint64_t n, float* out) {
        try {
            doc.readValues(index, first, n, out);
        } catch (const OpenError&) {
            throw;
        } catch (const std::exception& e) {
            throw OpenError(doc.path(), e.what());
        }
    };
}

TensorDiff diffTensors(const Document& a, const Document& b, const DiffOptions& options,
                       const std::vector<std::string>& only) {
    TensorDiff result;
    result.metadata = diffMetadata(a, b);
    std::vector<TensorDiffEntry> all = pairTensors(a, b);
    if (!only.empty()) {
        const std::set<std::string> wanted(only.begin(), only.end());
        for (const std::string& name : wanted)
            if (std::none_of(all.begin(), all.end(),
                             [&](const TensorDiffEntry& e) { return e.name == name; }))
                throw UnknownTensorError(name);
        std::erase_if(all, [&](const TensorDiffEntry& e) { return !wanted.count(e.name); });
    }

    // Shapes and statuses first, so progress can be weighted by values.
    uint64_t total = 0;
    for (TensorDiffEntry& e : all) {
        const TensorEntry* ta = e.indexA ? &a.tensors()[*e.indexA] : nullptr;
        const TensorEntry* tb = e.indexB ? &b.tensors()[*e.indexB] : nullptr;
        if (ta) {
            e.shapeA = ta->shape;
            e.dtypeA = dtypeName(ta->dtype);
        }
        if (tb) {
            e.shapeB = tb->shape;
            e.dtypeB = dtypeName(tb->dtype);
        }
        if (!tb)
            e.status = DiffStatus::Removed;
        else if (!ta)
            e.status = DiffStatus::Added;
        else if (ta->shape != tb->shape || ta->dataLen != tb->dataLen)
            e.status = DiffStatus::ShapeChanged;
        else
            total += ta->dataLen;
    }

    // Tensors up to kWholeTensorPairs pairs are compared whole, one per
    // thread at a time (each worker keeps its own buffers: at most 16 MiB of
    // differences); larger ones one after another on all threads.
    constexpr uint64_t kWholeTensorPairs = uint64_t(2) << 20;
    ValueComparer comparer(options);
    DiffOptions oneThread = options;
    oneThread.threads = 1;
    oneThread.progress = nullptr;
    std::vector<std::unique_ptr<ValueComparer>> workers(workerCount(options.threads, all.size()));
    uint64_t done = 0;
    std::mutex doneMutex; // progress never goes back
    auto compareEntry = [&](TensorDiffEntry& e, ValueComparer& with,
                            const std::function<void(double)>& progress) {
        const uint64_t n = a.tensors()[*e.indexA].dataLen;
        const auto mapA = a.mappedValues(*e.indexA, ScanUse::Comparison);
        const auto mapB = mapA ? b.mappedValues(*e.indexB, ScanUse::Comparison) : std::nullopt;
        if (mapA && mapB) {
            try {
                e.elements = with.compare(n, *mapA, *mapB, progress);
            } catch (const SourceChangedError& error) {
                throw OpenError(error.file() == b.path() ? b.path() : a.path(), error.what());
            }
        } else {
            e.elements =
                with.compare(n, tensorReader(a, *e.indexA), tensorReader(b, *e.indexB), progress);
        }
        std::lock_guard lock(doneMutex);
        done += n;
        if (options.progress && total > 0)
            options.progress(double(done) / double(total));
    };
    auto compared = [&](const TensorDiffEntry& e) {
        return e.indexA && e.indexB && e.status == DiffStatus::Same;
    };
    auto pairs = [&](const TensorDiffEntry& e) { return a.tensors()[*e.indexA].dataLen; };
    // Entries [from, to): those compared are small, one per worker.
    auto wholeTensors = [&](size_t from, size_t to) {
        std::vector<size_t> small;
        for (size_t k = from; k < to; ++k)
            if (compared(all[k]))
                small.push_back(k);
        forEachTask(small.size(), unsigned(workers.size()), [&](size_t w, unsigned worker) {
            if (!workers[worker])
                workers[worker] = std::make_unique<ValueComparer>(oneThread);
            compareEntry(all[small[w]], *workers[worker], nullptr);
        });
    };
    size_t from = 0;
    for (size_t k = 0; k < all.size(); ++k) {
        if (!compared(all[k]) || pairs(all[k]) <= kWholeTensorPairs)
            continue;
        wholeTensors(from, k);
        from = k + 1;
        const uint64_t n = pairs(all[k]), before = done;
        std::function<void(double)> progress;
        if (options.progress && total > 0)
            progress = [&options, before, n, total](double p) {
                options.progress((double(before) + p * double(n)) / double(total));
            };
        compareEntry(all[k], comparer, progress);
    }
    wholeTensors(from, all.size());

    for (TensorDiffEntry& e : all) {
        if (e.elements) {
            e.status = e.elements->differing == 0 && e.dtypeA == e.dtypeB ? DiffStatus::Same
                                                                          : DiffStatus::Changed;
            result.summary.differingElements += e.elements->differing;
        }
        TensorDiffSummary& s = result.summary;
        switch (e.status) {
        case DiffStatus::Same:
            ++s.same;
            break;
        case DiffStatus::Changed:
            ++s.changed;
            break;
        case DiffStatus::Added:
            ++s.added;
            break;
        case DiffStatus::Removed:
            ++s.removed;
            break;
        case DiffStatus::ShapeChanged:
            ++s.shapeChanged;
            break;
        }
    }
    result.tensors = std::move(all);
    if (options.progress)
        options.progress(1.0);
    return result;
}

} // namespace ckptscope
