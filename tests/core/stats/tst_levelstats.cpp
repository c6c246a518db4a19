// Statistics by counting levels (stats/levelstats: Q1_0) against the
// statistics of the decoded values (computeStats over f32): ggml's own
// decoding of the conformance corpus, the generator's files, and hand-made
// blocks with zero, subnormal, infinite and NaN scales (statscompare.h).
#include "statscompare.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/stats/documentstats.h"

#include "formats/gguf/ggmlquants.h"
#include "stats/levelstats.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace ckptscope;
using testsupport::compareUpToRounding;
using testsupport::qstr;
using testsupport::str;

namespace {

// Level statistics of a document's tensor against computeStats over `values`.
void compareTensor(const Document& doc, size_t i, const std::vector<float>& values,
                   const QString& what) {
    StatsOptions options;
    options.bins = 64;
    const TensorEntry& t = doc.tensors()[i];
    QVERIFY(stats::countsLevels(t.dtype));
    const StatsResult viaDoc = computeTensorStats(doc, i, options);
    const StatsResult expected = computeStats(values.data(), values.size(), 64);
    compareUpToRounding(viaDoc, expected, what);
    // The plain loop, and one thread, give the same counts and moments.
    options.threads = 1;
    const StatsResult scalar = stats::levelStats(
        t.dtype, t.dataLen,
        [&doc, i](uint64_t first, uint64_t n, void* out) { doc.readRawValues(i, first, n, out); },
        options, stats::Kernel::Scalar);
    QCOMPARE(scalar.stats.finiteSum, viaDoc.stats.finiteSum);
    QCOMPARE(*scalar.stats.std, *viaDoc.stats.std);
    QCOMPARE(scalar.histogram.counts, viaDoc.histogram.counts);
}

} // namespace

class TestLevelStats : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Every Q1_0 tensor of the corpus against ggml's decoded values.
    void conformance() {
        REQUIRE_CONFORMANCE();
        const int checked = testsupport::forEachCorpusTensor(Dtype::Q1_0, compareTensor);
        QVERIFY(checked >= 2); // type-q1_0 and the tiny Llama's
    }

    // The generator's Q1_0 model against the reader's decoded values.
    void generated() {
        QTemporaryDir dir;
        const auto doc = testsupport::openSyntheticModel(dir, Dtype::Q1_0, 6 << 20);
        int checked = 0;
        for (const size_t i : testsupport::tensorsOfType(*doc, Dtype::Q1_0)) {
            const TensorEntry& t = doc->tensors()[i];
            std::vector<float> values(size_t(t.dataLen));
            doc->readValues(i, 0, t.dataLen, values.data());
            compareTensor(*doc, i, values, qstr(t.name));
            ++checked;
        }
        QVERIFY(checked > 5);
    }

    // Scales of every kind: zero, negative zero, subnormal, the largest,
    // infinite, NaN, and random ones; the values decoded by ggml's decoder.
    void hostileScales() {
        std::mt19937_64 rng(7);
        const uint16_t special[] = {0x0000, 0x8000, 0x0001, 0x83FF, 0x7BFF, 0xFBFF,
                                    0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x3C00, 0xBC00};
        for (int round = 0; round < 3; ++round) {
            const size_t blocks = 3000;
            std::vector<uint8_t> raw(blocks * 18);
            for (auto& b : raw)
                b = uint8_t(rng());
            for (size_t b = 0; b < blocks; ++b) {
                uint16_t d = uint16_t(rng());
                if (round < 2 && rng() % 3 == 0) // finite only in round 0
                    d = special[rng() % (round == 0 ? 6 : 12)];
                else if (round == 0 && (d & 0x7C00) == 0x7C00)
                    d = uint16_t(d & ~0x4000);
                std::memcpy(raw.data() + 18 * b, &d, 2);
            }
            std::vector<float> values(blocks * 128);
            gguf::dequantizeBlocks(41, raw.data(), blocks, values.data());
            StatsOptions options;
            options.bins = 100;
            const stats::RawReader read = [&raw](uint64_t first, uint64_t n, void* out) {
                std::memcpy(out, raw.data() + first / 128 * 18, n / 128 * 18);
            };
            for (auto kernel : {stats::Kernel::Auto, stats::Kernel::Scalar}) {
                const StatsResult r =
                    stats::levelStats(Dtype::Q1_0, values.size(), read, options, kernel);
                compareUpToRounding(r, computeStats(values.data(), values.size(), 100),
                                    QStringLiteral("round %1").arg(round));
            }
        }
    }

    // 200 000 blocks over two threads, each worker adding its tally to the
    // tensor's every 65 536 blocks (a tensor of 2^31 values would, at every
    // 2^24).
    void talliesFoldedOnTheWay() {
        std::mt19937_64 rng(19);
        const size_t blocks = 200000;
        std::vector<uint8_t> raw(blocks * 18);
        for (auto& b : raw)
            b = uint8_t(rng());
        for (size_t b = 0; b < blocks; ++b) {
            const uint16_t d = uint16_t(0x2000 + rng() % 0x1000);
            std::memcpy(raw.data() + 18 * b, &d, 2);
        }
        std::vector<float> values(blocks * 128);
        gguf::dequantizeBlocks(41, raw.data(), blocks, values.data());
        StatsOptions options;
        options.bins = 64;
        options.threads = 2;
        const stats::RawReader read = [&raw](uint64_t first, uint64_t n, void* out) {
            std::memcpy(out, raw.data() + first / 128 * 18, n / 128 * 18);
        };
        const StatsResult r = stats::levelStats(Dtype::Q1_0, values.size(), read, options,
                                                stats::Kernel::Auto, 65536);
        compareUpToRounding(r, computeStats(values.data(), values.size(), 64),
                            QStringLiteral("folded"));
    }
};

QTEST_GUILESS_MAIN(TestLevelStats)
#include "tst_levelstats.moc"
