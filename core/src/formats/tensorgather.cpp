#include "formats/tensorgather.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/storagecache.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace ckptscope {

namespace {

// Elements gathered per pass: their storage positions are computed and
// sorted in one go (1 MiB of bookkeeping).
constexpr uint64_t kChunk = uint64_t(1) << 16;
// Two wanted elements this close in a storage are read as one run, the
// bytes between them read and dropped; a run never exceeds kMaxRun.
constexpr uint64_t kGapBytes = 16 * 1024;
constexpr uint64_t kMaxRun = 4 * 1024 * 1024;

[[noreturn]] void fail(const TensorSources& from, const TensorEntry& t, const std::string& what) {
    throw CheckpointError(CheckpointError::Kind::Invalid,
                          from.main.name() + ": tensor " + quotedName(t.name) + ": " + what);
}

const TensorStorage& storageOf(const TensorSources& from, const TensorEntry& t, uint32_t index) {
    if (index >= from.index.storages.size())
        fail(from, t, "storage " + std::to_string(index) + " is not in the index");
    return storageAt(from.index, index);
}

// Reads elements [at, at + n) of a storage, little-endian, checked against
// its size.
void readStorage(const TensorSources& from, const TensorEntry& t, const TensorStorage& s,
                 uint64_t at, uint64_t n, size_t size, uint8_t* out) {
    const uint64_t held = s.bytes / size;
    if (at > held || n > held - at)
        fail(from, t,
             "elements " + std::to_string(at) + "+" + std::to_string(n) + " of storage " +
                 quotedName(s.key) + " are outside the " + std::to_string(held) + " it holds");
    from.shard(s.shard).readAhead(s.offset + at * size, out, size_t(n * size), s.offset + s.bytes);
    if (s.bigEndian) { // a complex value's parts each on their own
        const size_t part = dtypeSize(complexPart(t.dtype));
        swapElements(out, n * (size / part), part);
    }
}

// Storage positions of outputs [first, first + n) of a strided view, in
// output order, by a multi-index counter (strides are never negative).
void stridedPositions(const std::vector<uint64_t>& shape, const TensorView& view, uint64_t first,
                      uint64_t n, std::vector<uint64_t>& pos) {
    const size_t rank = shape.size();
    std::vector<uint64_t> m(rank, 0);
    uint64_t rest = first, at = view.elementOffset;
    for (size_t k = rank; k-- > 0;) {
        m[k] = rest % shape[k];
        rest /= shape[k];
        at += m[k] * uint64_t(view.strides[k]);
    }
    pos.resize(size_t(n));
    for (uint64_t i = 0; i < n; ++i) {
        pos[size_t(i)] = at;
        for (size_t k = rank; k-- > 0;) { // next index, carrying
            at += uint64_t(view.strides[k]);
            if (++m[k] < shape[k])
                break;
            at -= m[k] * uint64_t(view.strides[k]);
            m[k] = 0;
        }
    }
}

// Copies the elements at `pos` from one storage into out, element i to
// output position i (or to[i]): sorted, then read in runs that bridge small
// gaps, each element copied to its place. Repeated positions (stride 0) are
// read once.
void gatherPositions(const TensorSources& from, const TensorEntry& t, const TensorStorage& s,
                     const std::vector<uint64_t>& pos, size_t size, uint8_t* out,
                     std::vector<uint8_t>& run, const std::vector<uint64_t>* to = nullptr) {
    std::vector<std::pair<uint64_t, uint32_t>> order(pos.size());
    for (size_t i = 0; i < pos.size(); ++i)
        order[i] = {pos[i], uint32_t(i)};
    std::sort(order.begin(), order.end());
    const uint64_t gap = std::max<uint64_t>(1, kGapBytes / size);
    const uint64_t most = std::max<uint64_t>(1, kMaxRun / size);
    for (size_t a = 0; a < order.size();) {
        const uint64_t start = order[a].first;
        size_t b = a + 1;
        while (b < order.size() && order[b].first - order[b - 1].first <= gap &&
               order[b].first - start < most)
            ++b;
        const uint64_t n = order[b - 1].first - start + 1;
        run.resize(size_t(n * size));
        readStorage(from, t, s, start, n, size, run.data());
        for (size_t i = a; i < b; ++i)
            std::memcpy(out + size_t(to ? (*to)[order[i].second] : order[i].second) * size,
                        run.data() + (order[i].first - start) * size, size);
        a = b;
    }
}

// Whether a window's positions spread over much more of the storage than
// they take (a transposed view): then the storage is better read whole,
// once, into the sources' cache, where it fits, than its runs once per
// window. Spans under 1 MiB are read as runs, and so is a view of a small
// part of its storage (a column of a large matrix: reading all of it for
// that would cost more than the runs).
bool spreadsOut(const TensorSources& from, const TensorEntry& t, const TensorStorage& s,
                const std::vector<uint64_t>& pos, size_t size) {
    if (!from.cache || pos.empty() || s.bytes > StorageCache::kMaxStorage || s.bytes == 0 ||
        s.bytes < 4 * pos.size() * size || t.dataLen > s.bytes || 4 * t.dataLen * size < s.bytes)
        return false;
    const auto [lo, hi] = std::minmax_element(pos.begin(), pos.end());
    const uint64_t span = (*hi - *lo + 1) * size;
    return span >= (uint64_t(1) << 20) && span > 4 * pos.size() * size;
}

void gatherStrided(const TensorSources& from, const TensorEntry& t, const TensorView& given,
                   uint64_t first, uint64_t count, size_t size, uint8_t* out) {
    // A contiguous view gathered (a big-endian storage is swapped here):
    // C-order strides.
    TensorView view = given;
    if (view.strides.empty()) {
        view.strides.resize(t.shape.size());
        uint64_t stride = 1; // unsigned: a hostile shape wraps, never overflows (UB);
                             // each position is still checked against the storage
        for (size_t k = t.shape.size(); k-- > 0;) {
            view.strides[k] = int64_t(stride);
            stride *= std::max<uint64_t>(1, t.shape[k]);
        }
    }
    if (view.strides.size() != t.shape.size())
        fail(from, t,
             std::to_string(view.strides.size()) + " strides for " +
                 std::to_string(t.shape.size()) + " dimensions");
    const TensorStorage& s = storageOf(from, t, view.storage);
    const std::optional<uint64_t> last = lastStorageElement(t.shape, view);
    if (!last || *last >= s.bytes / size)
        fail(from, t,
             "its view reaches " + (last ? "element " + std::to_string(*last) : "past 2^64") +
                 " of storage " + quotedName(s.key) + ", which holds " +
                 std::to_string(s.bytes / size));
    std::vector<uint64_t> pos;
    std::vector<uint8_t> run;
    StorageCache::Bytes whole; // the storage read whole, where a window spreads over it
    for (uint64_t done = 0; done < count;) {
        const uint64_t n = std::min(kChunk, count - done);
        stridedPositions(t.shape, view, first + done, n, pos);
        if (done == 0 && spreadsOut(from, t, s, pos, size)) {
            const uint64_t held = s.bytes / size;
            whole = from.cache->get(view.storage, unsigned(size), held * size, [&](uint8_t* bytes) {
                readStorage(from, t, s, 0, held, size, bytes);
            });
            // Kept from an earlier read: a local file must still be the one
            // read (FileSource checks that on every read; a URL's source may
            // answer from its own cache, unchecked).
            uint8_t probe = 0;
            if (whole)
                from.shard(s.shard).read(s.offset, &probe, 1);
        }
        if (whole) {
            for (size_t i = 0; i < pos.size(); ++i)
                std::memcpy(out + (done + i) * size, whole->data() + pos[i] * size, size);
        } else {
            gatherPositions(from, t, s, pos, size, out + done * size, run);
        }
        done += n;
    }
}

// One run to copy: n elements of a piece's storage from element `at`, to
// output position `to`.
struct Segment {
    uint32_t storage;
    uint64_t at;
    uint64_t to;
    uint64_t n;
    const TensorPiece* piece;
};

// The segments of one piece whose storage holds its box as a strided view
// (TensorStorage::boxStrides), gathered together: a row of a transposed box
// spans its whole storage, so its rows are read in one sorted pass per
// call, never a pass per row.
void readStridedPiece(const TensorSources& from, const TensorEntry& t, const TensorStorage& s,
                      const TensorPiece& p, const std::vector<const Segment*>& segments,
                      size_t size, uint8_t* out, std::vector<uint8_t>& run) {
    if (s.boxStrides.size() != p.sizes.size())
        fail(from, t,
             "a piece of " + std::to_string(p.sizes.size()) + " dimensions whose storage " +
                 quotedName(s.key) + " gives " + std::to_string(s.boxStrides.size()) + " strides");
    const TensorView box{0, p.elementOffset, s.boxStrides, {}};
    std::vector<uint64_t> all, to, pos;
    for (const Segment* g : segments) { // (at counts from the piece's first element)
        stridedPositions(p.sizes, box, g->at - p.elementOffset, g->n, pos);
        all.insert(all.end(), pos.begin(), pos.end());
        for (uint64_t k = 0; k < g->n; ++k)
            to.push_back(g->to + k);
    }
    gatherPositions(from, t, s, all, size, out, run, &to);
}

void addSegment(std::vector<Segment>& segments, Segment s) {
    if (!segments.empty()) {
        Segment& b = segments.back();
        if (b.piece == s.piece && b.at + b.n == s.at && b.to + b.n == s.to) {
            b.n += s.n;
            return;
        }
    }
    segments.push_back(s);
}

// Index of element (prefix…, j) within a piece's box, C order; the prefix is
// the output row's index over every dimension but the last.
uint64_t boxPosition(const TensorPiece& p, const std::vector<uint64_t>& prefix, uint64_t j) {
    uint64_t at = 0;
    for (size_t k = 0; k < prefix.size(); ++k)
        at = at * p.sizes[k] + (prefix[k] - p.offsets[k]);
    return at * p.sizes.back() + (j - p.offsets.back());
}

// The segments that fill outputs [first, first + count) from pieces: flat
// runs by intersection, boxes row by row of the last dimension.
std::vector<Segment> pieceSegments(const TensorSources& from, const TensorEntry& t,
                                   const TensorView& view, uint64_t first, uint64_t count) {
    const std::vector<uint64_t>& shape = t.shape;
    const size_t rank = shape.size();
    std::vector<Segment> segments;
    std::vector<const TensorPiece*> boxes;
    for (const TensorPiece& p : view.pieces) {
        if (p.offsets.size() != p.sizes.size() || p.offsets.empty())
            fail(from, t,
                 "a piece has " + std::to_string(p.offsets.size()) + " offsets and " +
                     std::to_string(p.sizes.size()) + " sizes");
        // A run of the flattened tensor: [start, start + length).
        const auto run = [&](uint64_t start, uint64_t length) {
            const uint64_t lo = std::max(first, start);
            const uint64_t hi = std::min(first + count, start + length);
            if (lo < hi)
                segments.push_back(
                    {p.storage, p.elementOffset + (lo - start), lo - first, hi - lo, &p});
        };
        if (p.offsets.size() == 1 && rank != 1) {
            run(p.offsets[0], p.sizes[0]);
            continue;
        }
        if (p.offsets.size() != rank)
            fail(from, t,
                 "a piece has " + std::to_string(p.offsets.size()) + " dimensions, not " +
                     std::to_string(rank));
        bool rows = true; // whole in every dimension but the first: one run
        for (size_t k = 0; k < rank; ++k) {
            if (p.offsets[k] > shape[k] || p.sizes[k] > shape[k] - p.offsets[k])
                fail(from, t, "a piece reaches past dimension " + std::to_string(k));
            rows = rows && (k == 0 || (p.offsets[k] == 0 && p.sizes[k] == shape[k]));
        }
        if (rows) { // a row split (FSDP, DTensor Shard(0)): sizes checked above, no overflow
            uint64_t inner = 1;
            for (size_t k = 1; k < rank; ++k)
                inner *= shape[k];
            run(p.offsets[0] * inner, p.sizes[0] * inner);
            continue;
        }
        boxes.push_back(&p);
    }
    if (!boxes.empty()) {
        const uint64_t width = shape.back();
        std::vector<uint64_t> prefix(rank - 1);
        for (uint64_t pos = first; pos < first + count;) {
            const uint64_t j = pos % width, run = std::min(width - j, first + count - pos);
            uint64_t rest = pos / width;
            for (size_t k = rank - 1; k-- > 0;) {
                prefix[k] = rest % shape[k];
                rest /= shape[k];
            }
            for (const TensorPiece* p : boxes) {
                bool inside = true;
                for (size_t k = 0; k + 1 < rank && inside; ++k)
                    inside = prefix[k] >= p->offsets[k] && prefix[k] - p->offsets[k] < p->sizes[k];
                const uint64_t lo = std::max(j, p->offsets.back());
                const uint64_t hi = std::min(j + run, p->offsets.back() + p->sizes.back());
                if (inside && lo < hi)
                    addSegment(segments,
                               {p->storage, p->elementOffset + boxPosition(*p, prefix, lo),
                                pos + (lo - j) - first, hi - lo, p});
            }
            pos += run;
        }
    }
    uint64_t covered = 0;
    for (const Segment& s : segments)
        covered += s.n;
    if (covered != count)
        fail(from, t,
             "its pieces cover " + std::to_string(covered) + " of elements " +
                 std::to_string(first) + "+" + std::to_string(count) +
                 (covered < count ? " (a piece is missing)" : " (pieces overlap)"));
    return segments;
}

} // namespace

std::optional<uint64_t> lastStorageElement(const std::vector<uint64_t>& shape,
                                           const TensorView& view) {
    uint64_t last = view.elementOffset;
    for (size_t k = 0; k < shape.size(); ++k) {
        if (shape[k] == 0)
            return view.elementOffset; // no element: nothing reached
        const uint64_t stride = uint64_t(view.strides.at(k));
        if (stride != 0 && shape[k] - 1 > (UINT64_MAX - last) / stride)
            return std::nullopt;
        last += (shape[k] - 1) * stride;
    }
    return last;
}

void swapElements(uint8_t* bytes, uint64_t n, size_t size) {
    if (size < 2)
        return;
    for (uint64_t i = 0; i < n; ++i)
        std::reverse(bytes + i * size, bytes + (i + 1) * size);
}

void gatherRaw(const TensorSources& from, const TensorEntry& tensor, const TensorView& view,
               uint64_t first, uint64_t count, uint8_t* out) {
    const size_t size = dtypeSize(tensor.dtype);
    if (dtypeBlock(tensor.dtype).elements != 1)
        fail(from, tensor, std::string(dtypeName(tensor.dtype)) + " values cannot be a view");
    if (count == 0)
        return;
    if (view.pieces.empty()) {
        gatherStrided(from, tensor, view, first, count, size, out);
        return;
    }
    // In windows of kWindow outputs: a strided piece's positions are held
    // for a window at once (24 bytes each).
    constexpr uint64_t kWindow = uint64_t(1) << 18;
    std::vector<uint8_t> run;
    for (uint64_t w = 0; w < count; w += kWindow) {
        const uint64_t n = std::min(kWindow, count - w);
        const std::vector<Segment> segments = pieceSegments(from, tensor, view, first + w, n);
        std::vector<const TensorPiece*> strided; // pieces read through their strides
        for (const Segment& s : segments) {
            const TensorStorage& storage = storageOf(from, tensor, s.storage);
            if (storage.boxStrides.empty())
                readStorage(from, tensor, storage, s.at, s.n, size, out + (w + s.to) * size);
            else if (std::find(strided.begin(), strided.end(), s.piece) == strided.end())
                strided.push_back(s.piece);
        }
        for (const TensorPiece* p : strided) {
            std::vector<const Segment*> mine;
            for (const Segment& s : segments)
                if (s.piece == p)
                    mine.push_back(&s);
            readStridedPiece(from, tensor, storageOf(from, tensor, p->storage), *p, mine, size,
                             out + w * size, run);
        }
    }
}

} // namespace ckptscope
