// Q8_0, Q4_0, Q6_K, Q3_K, Q2_K (stats/blocksums, stats/lowbitsums) and Q5_K
// (stats/codesums) statistics
// whose pass 1 sums codes against the statistics of the decoded values
// (computeStats over f32), by
// every kernel (AVX2 sums, plain loops): ggml's own files of the
// conformance corpus, the generator's models, random blocks with every code
// (Q8_0's −128 included) and every kind of scale (zero, negative zero,
// subnormal, negative, the largest, infinite, NaN), blocks of zeros, and
// tensors over several blocks of the passes.
#include "codesumcheck.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/stats/documentstats.h"

#include "common/simd.h"
#include "formats/gguf/ggmlquants.h"
#include "stats/blocksums.h"
#include "stats/codesums.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

using namespace ckptscope;
using testsupport::compareUpToRounding;
using testsupport::qstr;

namespace {

struct Type {
    Dtype dtype;
    uint32_t ggmlId;
    size_t bytes, values; // per block
    size_t scaleAt;       // the f16 d's offset in a block
    const char* name;
    size_t minAt = 0; // Q5_K's and Q2_K's f16 dmin (0: none)
};
const Type kTypes[] = {
    {Dtype::Q8_0, 8, 34, 32, 0, "Q8_0"},      {Dtype::Q4_0, 2, 18, 32, 0, "Q4_0"},
    {Dtype::Q6_K, 14, 210, 256, 208, "Q6_K"}, {Dtype::Q5_K, 13, 176, 256, 0, "Q5_K", 2},
    {Dtype::Q3_K, 11, 110, 256, 108, "Q3_K"}, {Dtype::Q2_K, 10, 84, 256, 80, "Q2_K", 82}};

// Gives the block at b codes that are all 0 (`zeros`), or all the greatest.
void fillCodes(const Type& type, uint8_t* b, bool zeros) {
    switch (type.dtype) {
    case Dtype::Q8_0:
        std::memset(b + 2, zeros ? 0 : 0x7F, 32);
        break;
    case Dtype::Q4_0:
        std::memset(b + 2, zeros ? 0x88 : 0xFF, 16);
        break;
    case Dtype::Q5_K: // codes 0 (values −m1) or 31
        std::memset(b + 16, zeros ? 0x00 : 0xFF, 160);
        break;
    case Dtype::Q2_K: // codes 0 (values −m1) or 3
        std::memset(b + 16, zeros ? 0x00 : 0xFF, 64);
        break;
    case Dtype::Q3_K: // hmask set, then two bits of 0 (code 0) or 3
        std::memset(b, 0xFF, 32);
        std::memset(b + 32, zeros ? 0x00 : 0xFF, 64);
        break;
    default: // Q6_K: low nibbles, then the high two bits (32: 0b10 each)
        std::memset(b, zeros ? 0x00 : 0xFF, 128);
        std::memset(b + 128, zeros ? 0xAA : 0xFF, 64);
    }
}

// codeSumStats of raw blocks by every kernel (AVX2 and the plain loops),
// thread count and some bin counts against computeStats of their decoding.
void checkBlocks(const Type& type, const std::vector<uint8_t>& raw, const QString& what) {
    const testsupport::CodeBlockType blocks{type.dtype, type.ggmlId, type.bytes, type.values};
    for (const int bins : {64, 0, 1000}) {
        testsupport::checkCodeSums(
            blocks, raw, bins, {stats::Kernel::Auto, stats::Kernel::Scalar},
            QStringLiteral("%1, %2 bins, %3").arg(QLatin1String(type.name)).arg(bins).arg(what));
        if (QTest::currentTestFailed())
            return;
    }
}

void putF16(uint8_t* at, uint16_t h) {
    std::memcpy(at, &h, 2);
}
void putF16(std::vector<uint8_t>& raw, size_t at, uint16_t h) {
    putF16(raw.data() + at, h);
}

// Random blocks whose f16 d has an exponent field in [lo, lo + span).
std::vector<uint8_t> randomBlocks(const Type& type, size_t blocks, std::mt19937_64& rng,
                                  unsigned lo, unsigned span) {
    std::vector<uint8_t> raw(blocks * type.bytes);
    for (auto& b : raw)
        b = uint8_t(rng());
    for (size_t b = 0; b < blocks; ++b) {
        putF16(raw, b * type.bytes + type.scaleAt,
               uint16_t((rng() & 0x8000) | ((lo + rng() % span) << 10) | (rng() & 0x3FF)));
        if (type.minAt) // dmin near d: levels mostly exact in f32, summed
            putF16(raw, b * type.bytes + type.minAt,
                   uint16_t((rng() & 0x8000) | ((lo + rng() % span) << 10) | (rng() & 0x3FF)));
    }
    return raw;
}

const Type& typeOf(Dtype dtype) {
    return *std::find_if(std::begin(kTypes), std::end(kTypes),
                         [dtype](const Type& t) { return t.dtype == dtype; });
}

// checkBlocks of `blocks` random blocks of `dtype` (d near 1), each then
// edited by edit(its bytes, its index, the random generator).
template <class Edit>
void checkEdited(Dtype dtype, size_t blocks, uint64_t seed, const char* what, Edit edit) {
    const Type& type = typeOf(dtype);
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> raw = randomBlocks(type, blocks, rng, 15, 1);
    for (size_t b = 0; b < blocks; ++b)
        edit(raw.data() + b * type.bytes, b, rng);
    checkBlocks(type, raw, QLatin1String(what));
}

} // namespace

class TestBlockSums : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        qInfo("block code sums: %s", simd::useAvx2() ? "AVX2 and plain loops" : "plain loops");
    }

    // Where the CPU has AVX2, Q8_0, Q4_0, Q6_K, Q5_K, Q3_K, Q2_K and Q4_K statistics
    // take the code sums (what `stats` and the GUI ask: computeTensorStats).
    void chosenWithAvx2() {
        for (const Type& type : kTypes)
            QCOMPARE(stats::sumsCodes(type.dtype), simd::useAvx2());
        // Q4_K too (codesums.h), with AVX-512 or AVX2 alone.
        QCOMPARE(stats::sumsCodes(Dtype::Q4_K), simd::useAvx2());
        QVERIFY(!stats::sumsBlockCodes(Dtype::Q4_1));
        QVERIFY(!stats::sumsBlockCodes(Dtype::F32));
    }

    // Every Q8_0, Q4_0, Q6_K, Q5_K, Q3_K and Q2_K tensor of the corpus, through
    // the document as the CLI and GUI ask, against ggml's decoded values.
    void conformance() {
        REQUIRE_CONFORMANCE();
        for (const Type& type : kTypes) {
            const int checked = testsupport::forEachCorpusTensor(
                type.dtype, [](const Document& doc, size_t i, const std::vector<float>& values,
                               const QString& what) {
                    StatsOptions options;
                    options.bins = 64;
                    compareUpToRounding(computeTensorStats(doc, i, options),
                                        computeStats(values.data(), values.size(), 64), what);
                });
            QVERIFY2(checked >= 1, type.name);
        }
    }

    // The generator's Q8_0, Q4_0, Q6_K, Q5_K, Q3_K and Q2_K models, through the
    // document.
    void generated() {
        for (const Type& type : kTypes) {
            QTemporaryDir dir;
            const auto doc = testsupport::openSyntheticModel(dir, type.dtype, 4 << 20);
            const std::vector<size_t> indices = testsupport::tensorsOfType(*doc, type.dtype);
            QVERIFY(indices.size() > 5);
            for (const size_t i : indices) {
                const TensorEntry& t = doc->tensors()[i];
                std::vector<float> values(size_t(t.dataLen));
                doc->readValues(i, 0, t.dataLen, values.data());
                StatsOptions options;
                options.bins = 32;
                compareUpToRounding(
                    computeTensorStats(*doc, i, options),
                    computeStats(values.data(), values.size(), 32),
                    QStringLiteral("%1 %2").arg(QLatin1String(type.name), qstr(t.name)));
                if (QTest::currentTestFailed())
                    return;
            }
        }
    }

    // Random codes (every byte: Q8_0's −128 and 127, every nibble) under
    // scales of every kind: zero, negative zero, subnormal, negative, the
    // largest, and (from round 1) infinite and NaN, whose blocks are decoded.
    void hostileScales() {
        std::mt19937_64 rng(5);
        const uint16_t special[] = {0x0000, 0x8000, 0x0001, 0x83FF, 0x7BFF, 0xFBFF, 0x3C00,
                                    0xBC00, 0x0400, 0x7800, 0x7C00, 0xFC00, 0x7E00, 0xFE01};
        for (const Type& type : kTypes)
            for (int round = 0; round < 3; ++round) {
                std::vector<uint8_t> raw = randomBlocks(type, 3000, rng, 1, 29);
                for (size_t b = 0; b < 3000; ++b) {
                    if (rng() % 4 == 0)
                        putF16(raw, b * type.bytes + type.scaleAt,
                               special[rng() % (round == 0 ? 10 : 14)]);
                    if (type.minAt && rng() % 4 == 0) // Q5_K's and Q2_K's dmin too
                        putF16(raw, b * type.bytes + type.minAt,
                               special[rng() % (round == 0 ? 10 : 14)]);
                }
                checkBlocks(type, raw, QStringLiteral("round %1").arg(round));
                if (QTest::currentTestFailed())
                    return;
            }
    }

    // Q5_K sub-blocks whose level is zero at a code past 15 (d = dmin = 1,
    // scale 1, min 20: value q − 20) or below (min 4, sub-blocks 4-7): the
    // zeros are the codes equal to the min, found from the levels.
    void q5kZeroLevels() {
        checkEdited(Dtype::Q5_K, 600, 19, "zero levels", [](uint8_t* block, size_t, auto&) {
            putF16(block, 0x3C00);     // d = 1
            putF16(block + 2, 0x3C00); // dmin = 1
            // get_scale_min_k4: sub-blocks 0-3 scale bytes 4-7, mins 8-11;
            // 4-7 from the nibbles of bytes 12-15 (the high bits 0).
            std::memset(block + 4, 1, 4);
            std::memset(block + 8, 20, 4);
            std::memset(block + 12, 0x41, 4); // scale 1, min 4
        });
    }

    // Q2_K sub-blocks whose zero level is a code (d = dmin = 1; scale 1,
    // min 2: value u − 2), is code 0 (min 0), lies past code 3 (min 4), or
    // under a zero scale is every value (min 0) or none (min 5).
    void q2kZeroLevels() {
        checkEdited(Dtype::Q2_K, 600, 23, "zero levels", [](uint8_t* block, size_t, auto& rng) {
            const uint8_t scaleMins[] = {0x21, 0x42, 0x63, 0x03, 0x31, 0x41, 0x00, 0x50, 0xF5};
            putF16(block + 80, 0x3C00); // d = 1
            putF16(block + 82, 0x3C00); // dmin = 1
            for (size_t j = 0; j < 16; ++j)
                block[j] = scaleMins[rng() % std::size(scaleMins)];
        });
    }

    // Q2_K super-blocks at the edge of exact levels: d's exponent 7 to 10
    // above dmin's (full mantissa, scale 15; dmin with its lowest bit, min
    // 15), in pairs of d and −d so that the mean is small beside the
    // values. Levels past 24 bits round when decoded; summed as exact, the
    // mean would differ (the code must decode such blocks).
    void q2kLevelsAtTheEdgeOfExact() {
        checkEdited(Dtype::Q2_K, 800, 29, "levels at the edge of exact",
                    [](uint8_t* block, size_t b, auto&) {
                        const unsigned em = 3 + unsigned(b % 5), ed = em + 7 + unsigned(b / 2 % 4);
                        putF16(block + 80, uint16_t((b % 2) << 15 | ed << 10 | 0x3FF));
                        putF16(block + 82, uint16_t(em << 10 | 1));
                        std::memset(block, 0xFF, 16); // scale 15, min 15
                    });
    }

    // Blocks whose values are all zero (code 0) and blocks of the greatest
    // code, among ordinary ones: zeros counted, the extremes found where
    // every block's bound is the same.
    void zerosAndFlatBlocks() {
        std::mt19937_64 rng(7);
        for (const Type& type : kTypes) {
            std::vector<uint8_t> raw = randomBlocks(type, 500, rng, 12, 4);
            for (size_t b = 0; b < 500; b += 3)
                fillCodes(type, raw.data() + b * type.bytes, true);
            for (size_t b = 1; b < 500; b += 7)
                fillCodes(type, raw.data() + b * type.bytes, false);
            checkBlocks(type, raw, QStringLiteral("zeros and flat blocks"));
            if (QTest::currentTestFailed())
                return;
        }
    }

    // Block counts that are not a multiple of four (the AVX2 loops take
    // four blocks, or four super-blocks' sums, at a time; the rest alone).
    void oddBlockCounts() {
        std::mt19937_64 rng(31);
        for (const Type& type : kTypes)
            for (const size_t blocks : {1, 2, 3, 5, 7, 4097}) {
                checkBlocks(type, randomBlocks(type, blocks, rng, 12, 4),
                            QStringLiteral("%1 blocks").arg(blocks));
                if (QTest::currentTestFailed())
                    return;
            }
    }

    // Tensors over several blocks of the passes (1 Mi values each), the
    // last one shorter.
    void severalBlocks() {
        std::mt19937_64 rng(9);
        for (const Type& type : kTypes) {
            checkBlocks(type, randomBlocks(type, 80000 * 32 / type.values, rng, 8, 6),
                        QStringLiteral("several pass blocks"));
            if (QTest::currentTestFailed())
                return;
        }
    }
};

QTEST_GUILESS_MAIN(TestBlockSums)
#include "tst_blocksums.moc"
