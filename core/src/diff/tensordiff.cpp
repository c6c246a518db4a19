#include "ckptscope/diff/tensordiff.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/dtype.h"
#include "ckptscope/formats/openerror.h"

#include "diff/integerdiff.h"
#include "diff/objectrows.h"
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
    case DiffStatus::DtypeChanged:
        return "dtype_changed";
    case DiffStatus::Tied:
        return "tied";
    }
    return "?";
}

uint64_t nonFiniteMismatches(const TensorDiffEntry& e) {
    return e.elements ? e.elements->nanMismatch + e.elements->infMismatch : 0;
}

bool changedMore(const TensorDiffEntry& x, const TensorDiffEntry& y) {
    const uint64_t nx = nonFiniteMismatches(x), ny = nonFiniteMismatches(y);
    if (nx != ny)
        return nx > ny;
    const auto rx = x.elements ? x.elements->relL2 : std::nullopt;
    const auto ry = y.elements ? y.elements->relL2 : std::nullopt;
    if (rx.has_value() != ry.has_value())
        return rx.has_value();
    const double vx = rx.value_or(0), vy = ry.value_or(0); // both present or both not
    if (vx != vy)
        return vx > vy;
    return x.name < y.name;
}

int mostChangedTensor(const TensorDiff& diff) {
    int most = -1;
    for (size_t i = 0; i < diff.tensors.size(); ++i) {
        const TensorDiffEntry& e = diff.tensors[i];
        if (e.status == DiffStatus::Changed &&
            (most < 0 || changedMore(e, diff.tensors[size_t(most)])))
            most = int(i);
    }
    if (most >= 0)
        return most;
    // Nothing changed in value: the first tensor stored in another dtype.
    for (size_t i = 0; i < diff.tensors.size(); ++i)
        if (diff.tensors[i].status == DiffStatus::DtypeChanged)
            return int(i);
    return -1;
}

bool TensorDiff::differs() const {
    const TensorDiffSummary& s = summary;
    if (s.changed || s.added || s.removed || s.shapeChanged || s.dtypeChanged)
        return true;
    return std::any_of(metadata.begin(), metadata.end(),
                       [](const MetadataDiffEntry& m) { return m.status != DiffStatus::Same; });
}

std::optional<std::string> MetadataDiffEntry::shown(bool sideB) const {
    std::optional<std::string> v = sideB ? b : a;
    const std::string& type = sideB ? typeB : typeA;
    const std::string& item = sideB ? itemB : itemA;
    if (v && !type.empty())
        *v += " (" + type + ")";
    if (v && !item.empty())
        *v += ", " + item;
    return v;
}

UnknownTensorError::UnknownTensorError(std::string name)
    : m_name(std::move(name)), m_message("neither file has a tensor named '" + m_name + "'") {}

namespace {

// Where two arrays of one summary ("[100 × str]") first differ, as
// "item 37 = …" on each side (nested arrays followed, ", item 3" appended
// per level); empty when their items are equal. Read a chunk at a time:
// a tokenizer's 150 000 strings are never held whole.
std::optional<std::pair<std::string, std::string>>
firstItemDifference(const Document& a, MetadataArray x, const Document& b, MetadataArray y,
                    int depth = 0) {
    constexpr uint64_t kChunk = 4096;
    for (uint64_t at = 0; x.count > 0 && y.count > 0;) {
        const uint64_t n = std::min({kChunk, x.count, y.count});
        const auto run = [n](const Document& d, const MetadataArray& array) {
            try {
                return d.arrayRun(array, n);
            } catch (const CheckpointError& e) { // a damaged array: the side named
                throw OpenError(d.path(), e.what());
            }
        };
        MetadataArrayRun rx = run(a, x), ry = run(b, y);
        const size_t got = std::min(rx.items.size(), ry.items.size());
        for (size_t i = 0; i < got; ++i) {
            const std::string where = "item " + std::to_string(at + i);
            const auto& nx = rx.nested.size() > i ? rx.nested[i] : std::nullopt;
            const auto& ny = ry.nested.size() > i ? ry.nested[i] : std::nullopt;
            if (rx.items[i] == ry.items[i] && nx && ny && depth < 8) {
                if (auto d = firstItemDifference(a, *nx, b, *ny, depth + 1))
                    return std::pair(where + ", " + d->first, where + ", " + d->second);
            } else if (rx.items[i] != ry.items[i]) {
                return std::pair(where + " = " + rx.items[i], where + " = " + ry.items[i]);
            }
        }
        if (got < n) // not read (another format): compared by summary alone
            return std::nullopt;
        at += n;
        x = rx.rest;
        y = ry.rest;
    }
    return std::nullopt;
}

// Entries are equal when their text, their type (where the format names
// one: u32 1 and i32 1 differ) and an array's items are. A changed entry
// shows what differs beside its text.
// A document's metadata as rows to compare: its rows, or the leaves of its
// tree of values by path (objectRows).
std::vector<MetadataRow> comparedRows(const Document& doc) {
    return doc.objects().empty() ? doc.metadataRows() : objectRows(doc.objects());
}

std::vector<MetadataDiffEntry> diffMetadata(const Document& a, const Document& b) {
    const std::vector<MetadataRow> rowsA = comparedRows(a), rowsB = comparedRows(b);
    std::map<std::string, const MetadataRow*> inA, inB; // later entries win
    for (const MetadataRow& r : rowsA)
        inA[r.key] = &r;
    for (const MetadataRow& r : rowsB)
        inB[r.key] = &r;
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
        const MetadataRow* ra = ia != inA.end() ? ia->second : nullptr;
        const MetadataRow* rb = ib != inB.end() ? ib->second : nullptr;
        if (ra)
            e.a = ra->value;
        if (rb)
            e.b = rb->value;
        e.status = !ra ? DiffStatus::Added : !rb ? DiffStatus::Removed : DiffStatus::Same;
        if (ra && rb) {
            if (ra->type != rb->type) {
                e.typeA = ra->type;
                e.typeB = rb->type;
            } else if (ra->value == rb->value && ra->array && rb->array) {
                if (auto d = firstItemDifference(a, *ra->array, b, *rb->array)) {
                    e.itemA = d->first;
                    e.itemB = d->second;
                }
            }
            if (*e.a != *e.b || e.typeA != e.typeB || e.itemA != e.itemB)
                e.status = DiffStatus::Changed;
        }
        out.push_back(std::move(e));
    }
    return out;
}

// Pairs the k-th occurrence of a key in A with the k-th in B: A's order,
// then the B-only tensors in B's order.
std::vector<TensorDiffEntry> pairTensors(const Document& a, const Document& b,
                                         const NamePairing& keys) {
    std::map<std::string, std::vector<size_t>> byNameB;
    for (size_t j = 0; j < b.tensors().size(); ++j)
        byNameB[keys.keysB[j]].push_back(j);
    std::map<std::string, size_t> seen;
    std::vector<bool> paired(b.tensors().size(), false);
    std::vector<TensorDiffEntry> out;
    for (size_t i = 0; i < a.tensors().size(); ++i) {
        TensorDiffEntry e;
        e.name = a.tensors()[i].name;
        e.indexA = i;
        const size_t k = seen[keys.keysA[i]]++;
        const auto it = byNameB.find(keys.keysA[i]);
        if (it != byNameB.end() && k < it->second.size()) {
            e.indexB = it->second[k];
            paired[*e.indexB] = true;
            if (b.tensors()[*e.indexB].name != e.name)
                e.nameB = b.tensors()[*e.indexB].name;
            e.rowOrderB = keys.rowOrderB[*e.indexB];
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

namespace {

// Runs a read of doc's values; a failure names the document's file.
template <typename Read> void namingFile(const Document& doc, const Read& read) {
    try {
        read();
    } catch (const OpenError&) {
        throw;
    } catch (const std::exception& e) {
        throw OpenError(doc.path(), e.what());
    }
}

template <typename T> auto readerOf(const Document& doc, size_t index) {
    return [&doc, index](uint64_t first, uint64_t n, T* out) {
        namingFile(doc, [&] { doc.readValues(index, first, n, out); });
    };
}

stats::RawReader rawReader(const Document& doc, size_t index) {
    return [&doc, index](uint64_t first, uint64_t n, void* out) {
        namingFile(doc, [&] { doc.readRawValues(index, first, n, out); });
    };
}

} // namespace

ValueReader tensorReader(const Document& doc, size_t index) {
    return readerOf<float>(doc, index);
}

ValueReaderF64 tensorReaderF64(const Document& doc, size_t index) {
    return readerOf<double>(doc, index);
}

ValueReaderF64 complexReader(const Document& doc, size_t index) {
    return [&doc, index](uint64_t first, uint64_t n, double* out) {
        namingFile(doc, [&] { doc.readComplexValues(index, first, n, out); });
    };
}

namespace {

// Keeps the pairs named in `only` (all when empty), by A's name or (a
// mapped pair) B's.
void keepOnly(std::vector<TensorDiffEntry>& all, const std::vector<std::string>& only) {
    if (only.empty())
        return;
    const std::set<std::string> wanted(only.begin(), only.end());
    const auto named = [](const TensorDiffEntry& e, const std::string& name) {
        return e.name == name || (!e.nameB.empty() && e.nameB == name);
    };
    for (const std::string& name : wanted)
        if (std::none_of(all.begin(), all.end(),
                         [&](const TensorDiffEntry& e) { return named(e, name); }))
            throw UnknownTensorError(name);
    std::erase_if(all, [&](const TensorDiffEntry& e) {
        return std::none_of(wanted.begin(), wanted.end(),
                            [&](const std::string& name) { return named(e, name); });
    });
}

// For each tensor of a document, another that views the very same elements
// (same storage, element offset, shape and strides), or nullopt.
std::vector<std::optional<size_t>> tiedPartners(const Document& doc) {
    std::vector<std::optional<size_t>> out(doc.tensors().size());
    std::map<std::tuple<uint32_t, uint64_t, std::vector<uint64_t>, std::vector<int64_t>>, size_t>
        first;
    for (size_t i = 0; i < doc.tensors().size(); ++i) {
        const TensorEntry& t = doc.tensors()[i];
        if (t.view == kNoView || !doc.views()[t.view].pieces.empty())
            continue;
        const TensorView& v = doc.views()[t.view];
        const auto [it, fresh] =
            first.emplace(std::make_tuple(v.storage, v.elementOffset, t.shape, v.strides), i);
        if (!fresh) {
            out[i] = it->second;
            out[it->second] = out[it->second].value_or(i);
        }
    }
    return out;
}

// A tensor only one side lists, whose elements another tensor of its side
// views and the other side has too: Tied.
void markTied(std::vector<TensorDiffEntry>& all, const Document& a, const Document& b) {
    const auto partnersA = tiedPartners(a), partnersB = tiedPartners(b);
    std::vector<bool> pairedA(a.tensors().size(), false), pairedB(b.tensors().size(), false);
    for (const TensorDiffEntry& e : all)
        if (e.indexA && e.indexB)
            pairedA[*e.indexA] = pairedB[*e.indexB] = true;
    for (TensorDiffEntry& e : all) {
        const bool onlyA = e.status == DiffStatus::Removed, onlyB = e.status == DiffStatus::Added;
        if (!onlyA && !onlyB)
            continue;
        const Document& side = onlyA ? a : b;
        const std::optional<size_t> partner = onlyA ? partnersA[*e.indexA] : partnersB[*e.indexB];
        if (partner && (onlyA ? pairedA : pairedB)[*partner]) {
            e.status = DiffStatus::Tied;
            e.tiedTo = side.tensors()[*partner].name;
        }
    }
}

// Shapes, dtypes and the statuses known without values; returns the pairs
// to compare, so progress can be weighted by values.
uint64_t describeEntries(std::vector<TensorDiffEntry>& all, const Document& a, const Document& b) {
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
        else if (ta->shape != tb->shape || ta->dataLen != tb->dataLen ||
                 (!e.rowOrderB.same() &&
                  (ta->shape.empty() || !e.rowOrderB.fits(ta->shape.front()))))
            e.status = DiffStatus::ShapeChanged;
        else if (isComplex(ta->dtype) != isComplex(tb->dtype) ||   // pairs against numbers
                 isQuantized(ta->dtype) != isQuantized(tb->dtype)) // codes against values
            e.status = DiffStatus::DtypeChanged;
        else
            total += ta->dataLen;
    }
    markTied(all, a, b);
    return total;
}

// The values of every entry with values on both sides. Tensors up to
// kWholeTensorPairs pairs are compared whole, one per thread at a time (each
// worker keeps its own buffers: at most 16 MiB of differences); larger ones
// one after another on all threads.
class EntryComparer {
public:
    EntryComparer(const Document& a, const Document& b, const DiffOptions& options, uint64_t total,
                  size_t entries)
        : m_a(a), m_b(b), m_options(options), m_total(total), m_comparer(options),
          m_oneThread(options), m_workers(workerCount(options.threads, entries)) {
        m_oneThread.threads = 1;
        m_oneThread.progress = nullptr;
    }

    void compareAll(std::vector<TensorDiffEntry>& all);

private:
    static constexpr uint64_t kWholeTensorPairs = uint64_t(2) << 20;
    static bool compared(const TensorDiffEntry& e) {
        return e.indexA && e.indexB && e.status == DiffStatus::Same;
    }
    uint64_t pairs(const TensorDiffEntry& e) const { return m_a.tensors()[*e.indexA].dataLen; }
    void compareEntry(TensorDiffEntry& e, ValueComparer& with,
                      const std::function<void(double)>& progress);
    void compareF32(TensorDiffEntry& e, ValueComparer& with,
                    const std::function<void(double)>& progress);
    void wholeTensors(std::vector<TensorDiffEntry>& all, size_t from, size_t to);

    const Document &m_a, &m_b;
    const DiffOptions& m_options;
    const uint64_t m_total;
    ValueComparer m_comparer;
    DiffOptions m_oneThread;
    std::vector<std::unique_ptr<ValueComparer>> m_workers;
    uint64_t m_done = 0;
    std::mutex m_doneMutex; // progress never goes back
};

void EntryComparer::compareEntry(TensorDiffEntry& e, ValueComparer& with,
                                 const std::function<void(double)>& progress) {
    const uint64_t n = pairs(e);
    if (isComplex(m_a.tensors()[*e.indexA].dtype)) { // B too: else DtypeChanged, not compared
        DiffOptions o = with.options();
        o.progress = progress;
        e.elements =
            compareComplex(n, complexReader(m_a, *e.indexA), complexReader(m_b, *e.indexB), o);
    } else if (isQuantized(m_a.tensors()[*e.indexA].dtype)) { // B too, as for complex
        // The stored integers, exactly: the scales and zero points are in
        // the object trees, compared as metadata.
        DiffOptions o = with.options();
        o.progress = progress;
        e.elements = compareIntegers(storedInteger(m_a.tensors()[*e.indexA].dtype),
                                     storedInteger(m_b.tensors()[*e.indexB].dtype), n,
                                     rawReader(m_a, *e.indexA), rawReader(m_b, *e.indexB), o);
    } else if (!e.rowOrderB.same()) {
        // B's rows in A's order (a Llama GGUF's q/k against the original).
        const uint64_t rows = m_a.tensors()[*e.indexA].shape.front();
        const uint64_t rowLength = rows ? n / rows : 0;
        const Document& b = m_b;
        const size_t j = *e.indexB;
        const RowOrder order = e.rowOrderB;
        e.elements = with.compare(
            n, tensorReader(m_a, *e.indexA),
            [&b, j, order, rows, rowLength](uint64_t first, uint64_t count, float* out) {
                namingFile(
                    b, [&] { readValuesInOrder(b, j, order, rows, rowLength, first, count, out); });
            },
            progress);
    } else if (const Dtype da = m_a.tensors()[*e.indexA].dtype, db = m_b.tensors()[*e.indexB].dtype;
               isInteger(da) && isInteger(db)) {
        DiffOptions o = with.options();
        o.progress = progress;
        e.elements =
            compareIntegers(da, db, n, rawReader(m_a, *e.indexA), rawReader(m_b, *e.indexB), o);
    } else if (da == Dtype::F64 || db == Dtype::F64) {
        // In double: f32 would make values beyond its range infinite.
        DiffOptions o = with.options();
        o.progress = progress;
        e.elements = compareValuesF64(n, tensorReaderF64(m_a, *e.indexA),
                                      tensorReaderF64(m_b, *e.indexB), o);
    } else {
        compareF32(e, with, progress);
    }
    std::lock_guard lock(m_doneMutex);
    m_done += n;
    if (m_total > 0)
        m_options.report(m_done, m_total);
}

void EntryComparer::compareF32(TensorDiffEntry& e, ValueComparer& with,
                               const std::function<void(double)>& progress) {
    const uint64_t n = pairs(e);
    const auto mapA = m_a.mappedValues(*e.indexA, ScanUse::Comparison);
    const auto mapB = mapA ? m_b.mappedValues(*e.indexB, ScanUse::Comparison) : std::nullopt;
    if (mapA && mapB) {
        try {
            e.elements = with.compare(n, *mapA, *mapB, progress);
        } catch (const SourceChangedError& error) {
            throw OpenError(error.file() == m_b.path() ? m_b.path() : m_a.path(), error.what());
        }
    } else {
        e.elements =
            with.compare(n, tensorReader(m_a, *e.indexA), tensorReader(m_b, *e.indexB), progress);
    }
}

// Entries [from, to): those compared are small, one per worker.
void EntryComparer::wholeTensors(std::vector<TensorDiffEntry>& all, size_t from, size_t to) {
    std::vector<size_t> small;
    for (size_t k = from; k < to; ++k)
        if (compared(all[k]))
            small.push_back(k);
    forEachTask(small.size(), unsigned(m_workers.size()), [&](size_t w, unsigned worker) {
        if (!m_workers[worker])
            m_workers[worker] = std::make_unique<ValueComparer>(m_oneThread);
        compareEntry(all[small[w]], *m_workers[worker], nullptr);
    });
}

void EntryComparer::compareAll(std::vector<TensorDiffEntry>& all) {
    size_t from = 0;
    for (size_t k = 0; k < all.size(); ++k) {
        if (!compared(all[k]) || pairs(all[k]) <= kWholeTensorPairs)
            continue;
        wholeTensors(all, from, k);
        from = k + 1;
        const uint64_t n = pairs(all[k]), before = m_done, total = m_total;
        std::function<void(double)> progress;
        if (m_options.progress && total > 0)
            progress = [this, before, n, total](double p) {
                m_options.report((double(before) + p * double(n)) / double(total));
            };
        compareEntry(all[k], m_comparer, progress);
    }
    wholeTensors(all, from, all.size());
}

// The statuses of the compared entries, and the counts of each status.
void summarize(std::vector<TensorDiffEntry>& all, TensorDiffSummary& s) {
    for (TensorDiffEntry& e : all) {
        if (e.elements) {
            e.status = e.elements->differing > 0 ? DiffStatus::Changed
                       : e.dtypeA == e.dtypeB    ? DiffStatus::Same
                                                 : DiffStatus::DtypeChanged;
            s.differingElements += e.elements->differing;
            s.nonFiniteMismatch += nonFiniteMismatches(e) > 0;
        }
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
        case DiffStatus::DtypeChanged:
            ++s.dtypeChanged;
            break;
        case DiffStatus::Tied:
            ++s.tied;
            break;
        }
    }
}

} // namespace

TensorDiff diffTensors(const Document& a, const Document& b, const DiffOptions& options,
                       const std::vector<std::string>& only, const NameMapOptions& names) {
    TensorDiff result;
    result.metadata = diffMetadata(a, b);
    const NamePairing keys = pairTensorNames(a, b, names);
    result.nameMap = keys.builtInMap;
    std::vector<TensorDiffEntry> all = pairTensors(a, b, keys);
    keepOnly(all, only);
    const uint64_t total = describeEntries(all, a, b);
    EntryComparer(a, b, options, total, all.size()).compareAll(all);
    summarize(all, result.summary);
    result.tensors = std::move(all);
    options.report(1.0);
    return result;
}

} // namespace ckptscope
