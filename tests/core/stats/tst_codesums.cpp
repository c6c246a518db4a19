// Q4_K statistics whose pass 1 sums codes (stats/codesums) against the
// statistics of the decoded values (computeStats over f32), by every kernel
// (AVX-512 lanes, AVX2 code sums, plain loops): ggml's own decoding of the
// conformance corpus, the generator's model, random super-blocks with every
// kind of scale (zero, subnormal, infinite, NaN), levels not exact in f32,
// and sub-blocks made to hold zero values and extremes away from codes 0/15.
#include "codesumcheck.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/stats/documentstats.h"

#include "formats/gguf/ggmlquants.h"
#include "stats/codesums.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

using namespace ckptscope;
using testsupport::compareUpToRounding;
using testsupport::qstr;
using testsupport::str;

namespace {

constexpr uint32_t kQ4_K = 12; // ggml's type id
constexpr size_t kBytes = 144, kValues = 256;

constexpr testsupport::CodeBlockType kQ4KBlocks{Dtype::Q4_K, kQ4_K, kBytes, kValues};

// By 5, 33 and 64 bins (SlicedBins from the codes: one stream, part of a
// second, two), by 65, 96, 97, 100, 128, 129 and 1000 (each code's count
// per sub-block, into a Sliced counter of three or four streams or into
// tables), by 5000 (past the vector counters: decoded); every kernel.
void checkBlocks(const std::vector<uint8_t>& raw, const QString& what) {
    for (const int bins : {64, 5, 33, 65, 96, 97, 100, 128, 129, 1000, 5000}) {
        testsupport::checkCodeSums(
            kQ4KBlocks, raw, bins,
            {stats::Kernel::Auto, stats::Kernel::Avx2, stats::Kernel::Scalar},
            QStringLiteral("%1 bins, %2").arg(bins).arg(what));
        if (QTest::currentTestFailed())
            return;
    }
}

void putF16(std::vector<uint8_t>& raw, size_t at, uint16_t h) {
    std::memcpy(raw.data() + at, &h, 2);
}

// Random super-blocks whose f16 d and dmin have exponent fields in
// [lo, lo + span): values near a trained model's, as the generator's.
std::vector<uint8_t> randomBlocks(size_t blocks, std::mt19937_64& rng, unsigned lo, unsigned span) {
    std::vector<uint8_t> raw(blocks * kBytes);
    for (auto& b : raw)
        b = uint8_t(rng());
    for (size_t b = 0; b < blocks; ++b)
        for (size_t at : {size_t(0), size_t(2)})
            putF16(raw, b * kBytes + at, uint16_t(((lo + rng() % span) << 10) | (rng() & 0x3FF)));
    return raw;
}

// Gives every super-block of `raw` the f16 d and dmin given, and its eight
// sub-blocks the 6-bit scales and mins fill(b, block, sc, m) sets, each
// below 16 (ggml's get_scale_min_k4 layout: the top two bits are left 0).
template <class Fill>
void putScales(std::vector<uint8_t>& raw, uint16_t d, uint16_t dmin, Fill fill) {
    for (size_t b = 0; b < raw.size() / kBytes; ++b) {
        uint8_t* block = raw.data() + b * kBytes;
        putF16(raw, b * kBytes, d);
        putF16(raw, b * kBytes + 2, dmin);
        int sc[8], m[8];
        fill(b, block, sc, m);
        for (int j = 0; j < 4; ++j) {
            block[4 + j] = uint8_t(sc[j]);
            block[8 + j] = uint8_t(m[j]);
            block[12 + j] = uint8_t(sc[j + 4] | m[j + 4] << 4);
        }
    }
}

} // namespace

class TestCodeSums : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Every Q4_K tensor of the corpus, through the document as the CLI and
    // GUI ask, against ggml's decoded values.
    void conformance() {
        REQUIRE_CONFORMANCE();
        const int checked = testsupport::forEachCorpusTensor(
            Dtype::Q4_K, [](const Document& doc, size_t i, const std::vector<float>& values,
                            const QString& what) {
                StatsOptions options;
                options.bins = 64;
                compareUpToRounding(computeTensorStats(doc, i, options),
                                    computeStats(values.data(), values.size(), 64), what);
            });
        QVERIFY(checked >= 1);
    }

    // The generator's Q4_K model.
    void generated() {
        QTemporaryDir dir;
        const auto doc = testsupport::openSyntheticModel(dir, Dtype::Q4_K, 6 << 20);
        const std::vector<size_t> indices = testsupport::tensorsOfType(*doc, Dtype::Q4_K);
        for (const size_t i : indices) {
            const TensorEntry& t = doc->tensors()[i];
            std::vector<uint8_t> raw(size_t(t.dataLen / kValues * kBytes));
            doc->readRawValues(i, 0, t.dataLen, raw.data());
            checkBlocks(raw, qstr(t.name));
            if (QTest::currentTestFailed())
                return;
        }
        QVERIFY(indices.size() > 5);
    }

    // Scales of every kind, among random codes, scales and mins: zero,
    // negative zero, subnormal, the largest, infinite, NaN, and d and dmin
    // so far apart that d1 * q - m1 rounds in f32 (decoded, not summed).
    void hostileScales() {
        std::mt19937_64 rng(11);
        const uint16_t special[] = {0x0000, 0x8000, 0x0001, 0x83FF, 0x7BFF, 0xFBFF, 0x3C00,
                                    0xBC00, 0x0400, 0x7800, 0x7C00, 0xFC00, 0x7E00, 0xFE01};
        for (int round = 0; round < 3; ++round) {
            std::vector<uint8_t> raw = randomBlocks(1500, rng, 1, 8);
            for (size_t b = 0; b < 1500; ++b)
                for (size_t at : {size_t(0), size_t(2)})
                    if (rng() % 4 == 0) // non-finite only from round 1 on
                        putF16(raw, b * kBytes + at, special[rng() % (round == 0 ? 10 : 14)]);
            checkBlocks(raw, QStringLiteral("round %1").arg(round));
            if (QTest::currentTestFailed())
                return;
        }
    }

    // Tensors over several blocks of the passes (1 Mi values each), the
    // last one shorter.
    void severalBlocks() {
        std::mt19937_64 rng(9);
        checkBlocks(randomBlocks(12000, rng, 1, 8), QStringLiteral("12000 super-blocks"));
    }

    // computeTensorStats over a model's tensors at once, as `stats` and the
    // GUI's batch ask: tensors of up to 16 MiB run one per thread, each
    // thread with its own buffers, the larger ones over both threads.
    void manyTensorsAtOnce() {
        QTemporaryDir dir;
        // 120 MiB: the model 2048 wide, its 37 MB embeddings over both threads.
        const auto doc = testsupport::openSyntheticModel(dir, Dtype::Q4_K, 120 << 20);
        const std::vector<size_t> indices = testsupport::tensorsOfType(*doc, Dtype::Q4_K);
        const auto oneThread = std::count_if(indices.begin(), indices.end(), [&](size_t i) {
            return computedWhole(doc->tensors()[i]);
        });
        QVERIFY2(oneThread >= 4 && size_t(oneThread) < indices.size(),
                 qPrintable(QStringLiteral("%1 of %2").arg(oneThread).arg(indices.size())));
        for (const int bins : {64, 1000}) {
            StatsOptions options;
            options.bins = bins;
            options.threads = 2;
            const std::vector<StatsResult> got = computeTensorStats(*doc, indices, options);
            QCOMPARE(got.size(), indices.size());
            for (size_t k = 0; k < indices.size(); ++k) {
                const TensorEntry& t = doc->tensors()[indices[k]];
                std::vector<float> values(size_t(t.dataLen));
                doc->readValues(indices[k], 0, t.dataLen, values.data());
                compareUpToRounding(got[k], computeStats(values.data(), values.size(), bins),
                                    QStringLiteral("%1 bins, %2").arg(bins).arg(qstr(t.name)));
                if (QTest::currentTestFailed())
                    return;
            }
        }
    }

    // d and dmin 34 binary orders apart: d1 * q - m1 rounds in f32 (the
    // values are not d1 * q - m1), so these blocks must be decoded.
    void roundedLevels() {
        std::mt19937_64 rng(3);
        for (const auto& [d, dmin] : {std::pair<uint16_t, uint16_t>{0x0001, 0x3C00},
                                      std::pair<uint16_t, uint16_t>{0x3C00, 0x0001}}) {
            std::vector<uint8_t> raw = randomBlocks(300, rng, 10, 4);
            for (size_t b = 0; b < 300; ++b) {
                putF16(raw, b * kBytes, d);
                putF16(raw, b * kBytes + 2, dmin);
            }
            checkBlocks(raw, QStringLiteral("d %1, dmin %2").arg(d, 4, 16).arg(dmin, 4, 16));
            if (QTest::currentTestFailed())
                return;
        }
    }

    // Every value a whole number in [0, 40] (d = dmin = 1): with 5 and 64
    // bins many levels fall exactly on a bin edge, and the histogram pass
    // must hand those to binOf.
    void levelsOnBinEdges() {
        std::mt19937_64 rng(13);
        std::vector<uint8_t> raw = randomBlocks(400, rng, 15, 1);
        putScales(raw, 0x3C00, 0x3C00, [&rng](size_t b, uint8_t* block, int* sc, int* m) {
            for (int j = 0; j < 8; ++j) {
                sc[j] = 1 + int(rng() % 2); // levels 0..30
                m[j] = 0;
            }
            if (b == 0) { // 0 and 40 (3 × 15 − 5) among the values
                sc[1] = 3;
                m[1] = 5;
                for (int l = 0; l < 32; ++l) // sub-block 1: codes 2..15, one 15
                    block[16 + l] = uint8_t((block[16 + l] & 0x0F) | (2 + rng() % 14) << 4);
                block[16] = uint8_t(0xF0); // sub-block 0's code 0, sub-block 1's 15
            }
        });
        checkBlocks(raw, QStringLiteral("levels on edges"));
    }

    // Values near −982 560 over a span of 22 (d ≈ 0.1, dmin = 65504,
    // m = 15), where an f32 level is rounded to 1/16: a bin position
    // computed from d1 q − m1 in one step would miss the rounding by up to
    // a tenth of a bin, so the histogram pass must bin the level the
    // decoder computes.
    void valuesFarFromZero() {
        std::mt19937_64 rng(17);
        std::vector<uint8_t> raw = randomBlocks(400, rng, 15, 1);
        putScales(raw, 0x2E66, 0x7BFF, [&rng](size_t, uint8_t*, int* sc, int* m) {
            for (int j = 0; j < 8; ++j) {
                sc[j] = 1 + int(rng() % 15);
                m[j] = 15;
            }
        });
        checkBlocks(raw, QStringLiteral("far from zero"));
    }

    // Sub-blocks with a zero level (d == dmin, m = sc * q for a code q) and
    // codes kept off 0 and 15, so that zeros are counted by code and the
    // extremes looked up; one sub-block of d1 == 0 == m1 (all zero).
    void zerosAndExtremes() {
        std::mt19937_64 rng(5);
        std::vector<uint8_t> raw = randomBlocks(700, rng, 3, 4);
        for (size_t b = 0; b < 700; ++b) {
            uint8_t* block = raw.data() + b * kBytes;
            std::memcpy(block + 2, block, 2); // dmin = d
            for (int j = 0; j < 4; ++j) {
                const int sc = 1 + int(rng() % 7), q = int(rng() % 9);
                block[4 + j] = uint8_t((block[4 + j] & 0xC0) | sc);
                block[8 + j] = uint8_t((block[8 + j] & 0xC0) | (sc * q));
            }
            if (b % 3 == 0) // codes 2..13 only: the extremes lie inside
                for (int l = 0; l < 128; ++l)
                    block[16 + l] = uint8_t((2 + rng() % 12) | (2 + rng() % 12) << 4);
            if (b == 17) { // sub-block 0: d1 = m1 = 0
                block[4] = uint8_t(block[4] & 0xC0);
                block[8] = uint8_t(block[8] & 0xC0);
            }
        }
        checkBlocks(raw, QStringLiteral("made"));
    }
};

QTEST_GUILESS_MAIN(TestCodeSums)
#include "tst_codesums.moc"
