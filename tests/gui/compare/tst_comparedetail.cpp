#include "compare/comparedetail.h"

#include "ckptscope/diff/tensordiff.h"
#include "ckptscope/document/document.h"
#include "ckptscope/formats/dtype.h"
#include "ckptscope/stats/documentstats.h"
#include "countingsource.h"
#include "testsupport.h"

#include <QTest>

using namespace ckptscope;
using testsupport::CountingSource;

namespace {

// A file of the corpus opened from memory through a source that counts
// the bytes read.
struct Counted {
    std::shared_ptr<CountingSource> source;
    std::shared_ptr<const Document> doc;
};

Counted openCounted(const QString& path) {
    const std::string bytes = testsupport::readFile(path);
    auto source = std::make_shared<CountingSource>(std::vector<uint8_t>(bytes.begin(), bytes.end()),
                                                   path.toStdString());
    return {source, Document::open(source)};
}

// The first tensor of `doc` of the dtype `name` (fails the test without one).
std::optional<size_t> tensorOfDtype(const Document& doc, const std::string& name) {
    for (size_t i = 0; i < doc.tensors().size(); ++i)
        if (dtypeName(doc.tensors()[i].dtype) == name)
            return i;
    return std::nullopt;
}

void sameStats(const TensorStats& got, const TensorStats& want) {
    QCOMPARE(got.count, want.count);
    QCOMPARE(got.finite, want.finite);
    QCOMPARE(got.nan, want.nan);
    QCOMPARE(got.posInf, want.posInf);
    QCOMPARE(got.negInf, want.negInf);
    QCOMPARE(got.zeros, want.zeros);
    QCOMPARE(got.min, want.min);
    QCOMPARE(got.max, want.max);
    QCOMPARE(got.mean, want.mean);
    QCOMPARE(got.std, want.std);
    QCOMPARE(got.l2, want.l2);
}

} // namespace

class TestCompareDetail : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // A tensor selected in the compare view is read once per side: the
    // statistics' pass keeps its decoded values for the overlay's bins, or,
    // where the statistics read the stored bytes (codes summed: Q6_K, Q4_K
    // with AVX2), those bytes, which the bins decode. Above the kept-bytes
    // limit it is read twice, with the same results; the figures are those
    // of the main window's Statistics page and of histogramOver the tensor.
    void quantizedSideDecodedOnce_data() {
        QTest::addColumn<QString>("dtype");
        QTest::newRow("Q6_K") << QStringLiteral("Q6_K");
        QTest::newRow("Q4_K") << QStringLiteral("Q4_K");
        QTest::newRow("F32") << QStringLiteral("F32"); // from memory: not mapped, decoded
    }
    void quantizedSideDecodedOnce() {
        REQUIRE_CONFORMANCE();
        QFETCH(QString, dtype);
        const QString path =
            testsupport::corpus(QStringLiteral("gguf/valid/tiny-llama-Q4_K_M.gguf"));
        const Counted a = openCounted(path), b = openCounted(path);
        const std::optional<size_t> i = tensorOfDtype(*a.doc, dtype.toStdString());
        QVERIFY2(i, qPrintable(dtype));
        // Decoded, or (with AVX2: code sums) read as stored; never both.
        QVERIFY(statsDecodeF32(*a.doc, *i) != statsReadStored(*a.doc, *i));
        const uint64_t stored = *tensorSizeBytes(a.doc->tensors()[*i]);
        TensorDiffEntry entry;
        entry.indexA = entry.indexB = *i;
        constexpr int kBins = 48;

        const uint64_t beforeA = a.source->bytesRead, beforeB = b.source->bytesRead;
        const CompareDetail once = computeCompareDetail(*a.doc, *b.doc, entry, kBins, nullptr, {});
        QCOMPARE(a.source->bytesRead - beforeA, stored);
        QCOMPARE(b.source->bytesRead - beforeB, stored);

        const uint64_t midA = a.source->bytesRead;
        const CompareDetail twice =
            computeCompareDetail(*a.doc, *b.doc, entry, kBins, nullptr, {}, /*keptBytes=*/0);
        QCOMPARE(a.source->bytesRead - midA, 2 * stored);

        const StatsResult want = computeTensorStats(*a.doc, *i, StatsOptions{});
        const Histogram bins = histogramOver(a.doc->tensors()[*i].dataLen, tensorReader(*a.doc, *i),
                                             *want.stats.min, *want.stats.max, kBins);
        for (const CompareDetail* d : {&once, &twice}) {
            QVERIFY(d->a && d->b);
            sameStats(d->a->stats, want.stats);
            sameStats(d->b->stats, want.stats);
            for (const Histogram* h : {&d->overlayA, &d->overlayB}) {
                QCOMPARE(h->lo, bins.lo);
                QCOMPARE(h->hi, bins.hi);
                QCOMPARE(h->counts, bins.counts);
            }
        }
    }

    // A side without the tensor has no statistics and no overlay, and
    // nothing of its file is read.
    void missingSideReadsNothing() {
        REQUIRE_CONFORMANCE();
        const QString path =
            testsupport::corpus(QStringLiteral("gguf/valid/tiny-llama-Q4_K_M.gguf"));
        const Counted a = openCounted(path), b = openCounted(path);
        const std::optional<size_t> i = tensorOfDtype(*a.doc, "Q6_K");
        QVERIFY(i);
        TensorDiffEntry entry;
        entry.indexA = *i;
        const uint64_t beforeB = b.source->bytesRead;
        const CompareDetail d = computeCompareDetail(*a.doc, *b.doc, entry, 16, nullptr, {});
        QVERIFY(d.a && !d.b);
        QVERIFY(d.overlayB.counts.empty());
        QCOMPARE(d.overlayA.counts.size(), size_t(16));
        QCOMPARE(b.source->bytesRead, beforeB);
    }

    // Cancelled while the kept values are read: Cancelled, no result.
    void cancelledWhileKeeping() {
        REQUIRE_CONFORMANCE();
        const QString path =
            testsupport::corpus(QStringLiteral("gguf/valid/tiny-llama-Q4_K_M.gguf"));
        const Counted a = openCounted(path);
        const std::optional<size_t> i = tensorOfDtype(*a.doc, "Q6_K");
        QVERIFY(i);
        TensorDiffEntry entry;
        entry.indexA = entry.indexB = *i;
        const std::atomic<bool> cancel{true};
        QVERIFY_THROWS_EXCEPTION(Cancelled,
                                 computeCompareDetail(*a.doc, *a.doc, entry, 16, &cancel, {}));
    }
};

QTEST_GUILESS_MAIN(TestCompareDetail)
#include "tst_comparedetail.moc"
