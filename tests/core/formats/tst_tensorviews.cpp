// Tensors as strided views over storages and as pieces: every layout read
// through the one reader against a plain gather written here, element by
// element, from the same bytes.
#include "countingsource.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/formatindex.h"
#include "ckptscope/formats/storagecache.h"
#include "ckptscope/formats/tensorvalues.h"
#include "ckptscope/io/bytesource.h"
#include "ckptscope/io/filesource.h"

#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>

using namespace ckptscope;

namespace {

// A file of `prefix` bytes of padding, then storages of float values.
struct Fixture {
    std::vector<uint8_t> bytes;
    FormatIndex index;

    // A storage of n floats (value i = base + i) at the end of the file.
    uint32_t addStorage(uint64_t n, float base, bool bigEndian = false) {
        TensorStorage s;
        s.key = "data/" + std::to_string(index.storages.size());
        s.offset = bytes.size();
        s.bytes = n * 4;
        s.bigEndian = bigEndian;
        for (uint64_t i = 0; i < n; ++i) {
            const float f = base + float(i);
            uint8_t b[4];
            std::memcpy(b, &f, 4);
            if (bigEndian)
                std::reverse(b, b + 4);
            bytes.insert(bytes.end(), b, b + 4);
        }
        bytes.insert(bytes.end(), 5, 0xEE); // storages need not be aligned
        index.storages.push_back(s);
        return uint32_t(index.storages.size() - 1);
    }

    size_t addView(const std::string& name, std::vector<uint64_t> shape, TensorView view) {
        TensorEntry t;
        t.name = name;
        t.shape = std::move(shape);
        t.elementCount = shapeElementCount(t.shape);
        t.dataLen = t.shape.empty() ? 1 : *t.elementCount;
        t.view = uint32_t(index.views.size());
        index.views.push_back(std::move(view));
        index.tensors.push_back(t);
        return index.tensors.size() - 1;
    }

    // Value i of storage s as stored (the reference reads the bytes itself).
    float stored(uint32_t s, uint64_t i) const {
        const TensorStorage& st = index.storages[s];
        uint8_t b[4];
        std::memcpy(b, bytes.data() + st.offset + i * 4, 4);
        if (st.bigEndian)
            std::reverse(b, b + 4);
        float f;
        std::memcpy(&f, b, 4);
        return f;
    }
};

// The plain gather: each element's storage position from its multi-index.
std::vector<float> referenceStrided(const Fixture& f, const TensorEntry& t) {
    const TensorView& v = f.index.views[t.view];
    std::vector<float> out(t.dataLen);
    for (uint64_t i = 0; i < t.dataLen; ++i) {
        uint64_t rest = i, at = v.elementOffset;
        for (size_t k = t.shape.size(); k-- > 0;) {
            const int64_t stride =
                v.strides.empty()
                    ? int64_t(std::accumulate(t.shape.begin() + ptrdiff_t(k) + 1, t.shape.end(),
                                              uint64_t(1), std::multiplies<>()))
                    : v.strides[k];
            at += (rest % t.shape[k]) * uint64_t(stride);
            rest /= t.shape[k];
        }
        out[size_t(i)] = f.stored(v.storage, at);
    }
    return out;
}

// The plain assembly of pieces: each element looked up in the piece whose
// box (or flat run) holds it.
std::vector<float> referencePieces(const Fixture& f, const TensorEntry& t) {
    const TensorView& v = f.index.views[t.view];
    std::vector<float> out(t.dataLen, std::nanf(""));
    for (uint64_t i = 0; i < t.dataLen; ++i) {
        std::vector<uint64_t> m(t.shape.size());
        uint64_t rest = i;
        for (size_t k = t.shape.size(); k-- > 0;) {
            m[k] = rest % t.shape[k];
            rest /= t.shape[k];
        }
        for (const TensorPiece& p : v.pieces) {
            if (p.offsets.size() == 1 && t.shape.size() != 1) {
                if (i >= p.offsets[0] && i < p.offsets[0] + p.sizes[0])
                    out[size_t(i)] = f.stored(p.storage, p.elementOffset + i - p.offsets[0]);
                continue;
            }
            bool inside = true;
            uint64_t at = 0;
            for (size_t k = 0; k < m.size(); ++k) {
                inside = inside && m[k] >= p.offsets[k] && m[k] < p.offsets[k] + p.sizes[k];
                at = at * p.sizes[k] + (m[k] - p.offsets[k]);
            }
            if (inside)
                out[size_t(i)] = f.stored(p.storage, p.elementOffset + at);
        }
    }
    return out;
}

std::vector<float> readAll(const Fixture& f, size_t tensor, const ByteSource& source) {
    const TensorEntry& t = f.index.tensors[tensor];
    std::vector<float> out(t.dataLen);
    readTensorValues(TensorSources{source, f.index}, t, 0, t.dataLen, out.data());
    return out;
}

// Reads [first, first + n) in double and as raw bytes too: all three agree.
void checkRange(const Fixture& f, size_t tensor, const ByteSource& source,
                const std::vector<float>& expected, uint64_t first, uint64_t n) {
    const TensorEntry& t = f.index.tensors[tensor];
    const TensorSources from{source, f.index};
    std::vector<float> got(n);
    std::vector<double> wide(n);
    std::vector<uint8_t> raw(n * 4);
    readTensorValues(from, t, first, n, got.data());
    readTensorValues(from, t, first, n, wide.data());
    readRawValues(from, t, first, n, raw.data());
    for (uint64_t i = 0; i < n; ++i) {
        float r;
        std::memcpy(&r, raw.data() + i * 4, 4);
        const float want = expected[size_t(first + i)];
        if (got[size_t(i)] != want || float(wide[size_t(i)]) != want || r != want)
            QFAIL(qPrintable(QStringLiteral("%1: element %2: %3 / %4 / %5, expected %6")
                                 .arg(QString::fromStdString(t.name))
                                 .arg(first + i)
                                 .arg(got[size_t(i)])
                                 .arg(wide[size_t(i)])
                                 .arg(r)
                                 .arg(want)));
    }
}

void checkWhole(const Fixture& f, size_t tensor, const std::vector<float>& expected) {
    const MemorySource source(f.bytes, "views.bin");
    QCOMPARE(readAll(f, tensor, source), expected);
    const uint64_t n = f.index.tensors[tensor].dataLen;
    checkRange(f, tensor, source, expected, 0, n);
    if (n > 3) { // ranges that start and end inside rows
        checkRange(f, tensor, source, expected, 1, n - 2);
        checkRange(f, tensor, source, expected, n / 3, n / 3);
    }
}

} // namespace

class TstTensorViews : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void contiguousWithOffset() {
        Fixture f;
        const uint32_t s = f.addStorage(100, 0);
        const size_t t = f.addView("slice", {3, 4}, {s, 17, {}, {}});
        checkWhole(f, t, referenceStrided(f, f.index.tensors[t]));
        QCOMPARE(readAll(f, t, MemorySource(f.bytes, "v"))[0], 17.0f);
    }

    void transposed() {
        Fixture f;
        const uint32_t s = f.addStorage(6 * 7, 1000);
        const size_t t = f.addView("w.T", {7, 6}, {s, 0, {1, 7}, {}});
        const std::vector<float> want = referenceStrided(f, f.index.tensors[t]);
        QCOMPARE(want[1], 1007.0f); // [0][1] is storage element 7
        checkWhole(f, t, want);
    }

    void largeTransposeAcrossChunks() {
        // More elements than one gather pass (65,536), rows longer than the
        // gap that is read through.
        Fixture f;
        const uint32_t s = f.addStorage(300 * 700, 0);
        const size_t t = f.addView("big.T", {700, 300}, {s, 0, {1, 700}, {}});
        checkWhole(f, t, referenceStrided(f, f.index.tensors[t]));
    }

    // A transposed 1024 × 1024 matrix read 65,536 values at a time, as the
    // statistics read it: each window wants 64 rows, a few elements of
    // every column, and its runs bridge the gaps between columns, so each
    // window read the whole storage. With the sources' cache the storage is
    // read once (and a byte to check the file is unchanged, per read).
    void transposedReadOnceThroughCache() {
        Fixture f;
        const uint64_t side = 1024, bytes = side * side * 4;
        const uint32_t s = f.addStorage(side * side, 0);
        const size_t t = f.addView("w.T", {side, side}, {s, 0, {1, int64_t(side)}, {}});
        const std::vector<float> want = referenceStrided(f, f.index.tensors[t]);
        const auto readInWindows = [&](StorageCache* cache, const ByteSource& source) {
            std::vector<float> got(side * side);
            for (uint64_t first = 0; first < got.size(); first += 65536)
                readTensorValues(TensorSources{source, f.index, cache}, f.index.tensors[t], first,
                                 65536, got.data() + first);
            return got;
        };
        const testsupport::CountingSource plain(f.bytes, "views.bin");
        QCOMPARE(readInWindows(nullptr, plain), want);
        QVERIFY2(plain.bytesRead > 8 * bytes, qPrintable(QString::number(plain.bytesRead)));
        StorageCache cache;
        const testsupport::CountingSource cached(f.bytes, "views.bin");
        QCOMPARE(readInWindows(&cache, cached), want);
        QCOMPARE(cached.bytesRead.load(), bytes + 16); // the storage, then a byte a window
        QCOMPARE(cache.heldBytes(), bytes);
        // A view that reads its storage in order never fills the cache.
        const size_t rows = f.addView("w", {side, side}, {s, 0, {int64_t(side), 1}, {}});
        StorageCache unused;
        std::vector<float> row(side);
        readTensorValues(TensorSources{plain, f.index, &unused}, f.index.tensors[rows], 0, side,
                         row.data());
        QCOMPARE(unused.heldBytes(), uint64_t(0));
    }

    // Values in storage order, for statistics: a transposed or permuted
    // view of one run of its storage gives that run, read in one pass;
    // any other view (a strided slice, an expanded one) its C order.
    void storageOrder() {
        Fixture f;
        const uint32_t s = f.addStorage(24 * 700, 0);
        const size_t transposed = f.addView("t", {700, 24}, {s, 0, {1, 700}, {}});
        const size_t permuted = f.addView("p", {4, 1, 6, 700}, {s, 0, {6, 99, 1, 24}, {}});
        const size_t slice = f.addView("x[::2]", {350, 24}, {s, 0, {48, 1}, {}});
        const size_t expanded = f.addView("e", {3, 5}, {s, 7, {0, 1}, {}});
        const testsupport::CountingSource source(f.bytes, "views.bin");
        const TensorSources from{source, f.index};
        for (const size_t t : {transposed, permuted}) {
            const TensorEntry& e = f.index.tensors[t];
            std::vector<float> got(e.dataLen);
            std::vector<double> wide(e.dataLen);
            const int before = source.reads;
            readTensorValuesInStorageOrder(from, e, 0, e.dataLen, got.data());
            QCOMPARE(source.reads - before, 1);
            readTensorValuesInStorageOrder(from, e, 5, e.dataLen - 5, wide.data() + 5);
            for (uint64_t i = 0; i < e.dataLen; ++i) {
                QCOMPARE(got[i], float(i));
                if (i >= 5)
                    QCOMPARE(wide[i], double(i));
            }
        }
        for (const size_t t : {slice, expanded}) {
            const TensorEntry& e = f.index.tensors[t];
            std::vector<float> got(e.dataLen);
            readTensorValuesInStorageOrder(from, e, 0, e.dataLen, got.data());
            QCOMPARE(got, referenceStrided(f, e));
        }
    }

    // The cache keeps at most its budget, the least recently used storage
    // dropped first; a storage is kept per element size; one past the
    // budget and a failed read keep nothing.
    void cacheKeepsItsBudget() {
        StorageCache cache(10);
        int reads = 0;
        const auto fill = [&reads](uint8_t* b) {
            ++reads;
            b[0] = 7;
        };
        QCOMPARE(int(cache.get(0, 4, 6, fill)->at(0)), 7);
        cache.get(0, 4, 6, fill);
        QCOMPARE(reads, 1);
        cache.get(0, 2, 6, fill); // another element size: another entry, storage 0 as 4s goes
        QCOMPARE(reads, 2);
        cache.get(1, 4, 6, fill); // 12 bytes: storage 0 as 2s goes
        QCOMPARE(cache.heldBytes(), uint64_t(6));
        cache.get(0, 4, 6, fill);
        QCOMPARE(reads, 4);
        QVERIFY(!cache.get(3, 4, 11, fill)); // past the budget: not read, not kept
        QCOMPARE(reads, 4);
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, cache.get(2, 4, 4, [](uint8_t*) {
            throw std::runtime_error("io");
        }));
        QVERIFY(cache.heldBytes() <= 10);
    }

    // A view of a small part of its storage (a column of a matrix) is read in
    // runs: reading the whole storage for it would cost more.
    void thinViewNotCached() {
        Fixture f;
        const uint64_t side = 1024;
        const uint32_t s = f.addStorage(side * side, 0);
        const size_t column = f.addView("w[:, 3]", {side}, {s, 3, {int64_t(side)}, {}});
        StorageCache cache;
        const testsupport::CountingSource source(f.bytes, "views.bin");
        std::vector<float> got(side);
        readTensorValues(TensorSources{source, f.index, &cache}, f.index.tensors[column], 0, side,
                         got.data());
        QCOMPARE(got, referenceStrided(f, f.index.tensors[column]));
        QCOMPARE(cache.heldBytes(), uint64_t(0));
    }

    // A storage kept from an earlier read is not given once the file has
    // changed: the read says so, as any read of a changed file does.
    void cachedStorageOfAChangedFile() {
        Fixture f;
        const uint64_t side = 1024;
        const uint32_t s = f.addStorage(side * side, 0);
        const size_t t = f.addView("w.T", {side, side}, {s, 0, {1, int64_t(side)}, {}});
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("views.bin")).toStdString();
        const auto write = [&path](const std::vector<uint8_t>& bytes) {
            FILE* out = std::fopen(path.c_str(), "wb");
            QVERIFY(out);
            QCOMPARE(std::fwrite(bytes.data(), 1, bytes.size(), out), bytes.size());
            std::fclose(out);
        };
        write(f.bytes);
        const FileSource source(path);
        StorageCache cache;
        std::vector<float> got(65536);
        const TensorSources from{source, f.index, &cache};
        readTensorValues(from, f.index.tensors[t], 0, got.size(), got.data());
        QCOMPARE(got[1], 1024.0f);
        QCOMPARE(cache.heldBytes(), side * side * 4);
        std::vector<uint8_t> changed = f.bytes;
        changed[f.index.storages[s].offset + 4] ^= 1;
        std::this_thread::sleep_for(std::chrono::milliseconds(20)); // a new modification time
        write(changed);
        QVERIFY_THROWS_EXCEPTION(SourceChangedError, readTensorValues(from, f.index.tensors[t], 0,
                                                                      got.size(), got.data()));
    }

    void expandedStrideZero() {
        Fixture f;
        const uint32_t s = f.addStorage(5, 10);
        // position_ids.expand(4, 5): every row is the same five values.
        const size_t t = f.addView("expanded", {4, 5}, {s, 0, {0, 1}, {}});
        const std::vector<float> want = referenceStrided(f, f.index.tensors[t]);
        QCOMPARE(want[15], 10.0f);
        checkWhole(f, t, want);
    }

    void sliceOfLargerStorageWithStrides() {
        Fixture f;
        const uint32_t s = f.addStorage(10 * 12, 0);
        // x[2:8:2, 3:9] of a 10×12 matrix: offset 27, strides (24, 1).
        const size_t t = f.addView("x[2:8:2,3:9]", {3, 6}, {s, 27, {24, 1}, {}});
        checkWhole(f, t, referenceStrided(f, f.index.tensors[t]));
    }

    void scalarView() {
        Fixture f;
        const uint32_t s = f.addStorage(4, 7);
        const size_t t = f.addView("step", {}, {s, 2, {}, {}});
        QCOMPARE(readAll(f, t, MemorySource(f.bytes, "v")), std::vector<float>{9.0f});
    }

    void bigEndianStorage() {
        Fixture f;
        const uint32_t s = f.addStorage(12, -3, true);
        const size_t flat = f.addView("be", {12}, {s, 0, {}, {}});
        const size_t transposed = f.addView("be.T", {4, 3}, {s, 0, {1, 4}, {}});
        checkWhole(f, flat, referenceStrided(f, f.index.tensors[flat]));
        QCOMPARE(readAll(f, flat, MemorySource(f.bytes, "v"))[3], 0.0f);
        checkWhole(f, transposed, referenceStrided(f, f.index.tensors[transposed]));
    }

    void twoTensorsOnOneStorage() {
        Fixture f;
        const uint32_t s = f.addStorage(64, 0);
        const uint32_t other = f.addStorage(8, 0);
        const size_t embed = f.addView("embed.weight", {8, 8}, {s, 0, {}, {}});
        const size_t head = f.addView("lm_head.weight", {8, 8}, {s, 0, {}, {}}); // tied
        const size_t half = f.addView("half", {4, 8}, {s, 32, {}, {}});
        f.addView("bias", {8}, {other, 0, {}, {}});
        QCOMPARE(readAll(f, embed, MemorySource(f.bytes, "v")),
                 readAll(f, head, MemorySource(f.bytes, "v")));
        checkWhole(f, half, referenceStrided(f, f.index.tensors[half]));
        // Parameters: the tied pair once, the slice and the bias: 64 + 32 + 8.
        QCOMPARE(indexParams(f.index), uint64_t(104));
        // Bytes: each storage once, whole.
        QCOMPARE(indexBytes(f.index), uint64_t(64 * 4 + 8 * 4));
        QCOMPARE(tensorsSharingStorage(f.index), size_t(3));
    }

    void viewPastItsStorageIsRefused() {
        Fixture f;
        const uint32_t s = f.addStorage(10, 0);
        const size_t t = f.addView("too.far", {4, 3}, {s, 0, {1, 4}, {}}); // reaches 11
        std::vector<float> out(12);
        try {
            readTensorValues(TensorSources{MemorySource(f.bytes, "bad.pt"), f.index},
                             f.index.tensors[t], 0, 12, out.data());
            QFAIL("read past the storage");
        } catch (const CheckpointError& e) {
            const QString m = QString::fromUtf8(e.what());
            QVERIFY2(m.contains(QStringLiteral("bad.pt")) &&
                         m.contains(QStringLiteral("too.far")) &&
                         m.contains(QStringLiteral("element 11")) &&
                         m.contains(QStringLiteral("data/0")),
                     qPrintable(m));
        }
    }

    void piecesAsBoxes() {
        // A 6×10 tensor in four boxes of unequal sizes, as DCP chunks lie.
        Fixture f;
        const uint32_t a = f.addStorage(4 * 3, 100), b = f.addStorage(4 * 7, 200);
        const uint32_t c = f.addStorage(2 * 3 + 9, 300), d = f.addStorage(2 * 7, 400);
        TensorView v;
        v.pieces = {{{0, 0}, {4, 3}, a, 0},
                    {{0, 3}, {4, 7}, b, 0},
                    {{4, 0}, {2, 3}, c, 9},
                    {{4, 3}, {2, 7}, d, 0}};
        const size_t t = f.addView("sharded", {6, 10}, v);
        const std::vector<float> want = referencePieces(f, f.index.tensors[t]);
        QCOMPARE(want[3], 200.0f);
        QCOMPARE(want[40], 309.0f);
        checkWhole(f, t, want);
        QCOMPARE(indexBytes(f.index), uint64_t((12 + 28 + 15 + 14) * 4));
    }

    void piecesAsFlatRuns() {
        // A ZeRO partition cuts the flattened parameter anywhere: 5×7 in
        // runs of 13, 13 and 9 from three ranks' storages.
        Fixture f;
        const uint32_t r0 = f.addStorage(20, 0), r1 = f.addStorage(20, 100),
                       r2 = f.addStorage(9, 200);
        TensorView v;
        v.pieces = {{{0}, {13}, r0, 7}, {{13}, {13}, r1, 0}, {{26}, {9}, r2, 0}};
        const size_t t = f.addView("zero", {5, 7}, v);
        const std::vector<float> want = referencePieces(f, f.index.tensors[t]);
        QCOMPARE(want[0], 7.0f);
        QCOMPARE(want[26], 200.0f);
        checkWhole(f, t, want);
    }

    void missingPieceIsNamed() {
        Fixture f;
        const uint32_t a = f.addStorage(12, 0);
        TensorView v;
        v.pieces = {{{0, 0}, {2, 6}, a, 0}}; // rows 2..3 of 4 missing
        const size_t t = f.addView("holey", {4, 6}, v);
        std::vector<float> out(24);
        try {
            readTensorValues(TensorSources{MemorySource(f.bytes, "dcp"), f.index},
                             f.index.tensors[t], 0, 24, out.data());
            QFAIL("a missing piece went unnoticed");
        } catch (const CheckpointError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("a piece is missing")),
                     e.what());
        }
    }

    void randomViews() {
        // Random shapes, strides (0 included), offsets and ranges against
        // the plain gather.
        std::mt19937 rng(12345);
        for (int round = 0; round < 200; ++round) {
            Fixture f;
            const size_t rank = 1 + rng() % 4;
            std::vector<uint64_t> shape(rank);
            std::vector<int64_t> strides(rank);
            uint64_t last = 0;
            for (size_t k = 0; k < rank; ++k) {
                shape[k] = 1 + rng() % 6;
                strides[k] = int64_t(rng() % 9);
                last += (shape[k] - 1) * uint64_t(strides[k]);
            }
            const uint64_t offset = rng() % 5;
            const uint32_t s = f.addStorage(offset + last + 1 + rng() % 3, float(round));
            const size_t t =
                f.addView("r" + std::to_string(round), shape, {s, offset, strides, {}});
            const std::vector<float> want = referenceStrided(f, f.index.tensors[t]);
            const MemorySource source(f.bytes, "random");
            const uint64_t n = f.index.tensors[t].dataLen;
            const uint64_t first = rng() % n;
            checkRange(f, t, source, want, first, n - first - (n - first > 1 ? rng() % 2 : 0));
        }
    }
};

QTEST_APPLESS_MAIN(TstTensorViews)
#include "tst_tensorviews.moc"
