// The element comparison and the comparison of two OXCK documents: every
// figure against a direct computation in this file, every status, the
// tolerance boundary, the NaN and infinity rules, pairing and order.
#include "ggufbuilder.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "ckptscope/diff/tensordiff.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

using namespace ckptscope;
using testsupport::str;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::nanf("");

// The contract's figures computed the plain way: one loop, double.
struct Expected {
    uint64_t differing = 0, nanMismatch = 0, finite = 0;
    double maxAbs = 0, sumAbs = 0, sumSq = 0, aa = 0, bb = 0, ab = 0;
    double lo = 0, hi = 0;
    std::vector<uint64_t> counts;
};

Expected expected(const std::vector<float>& a, const std::vector<float>& b, double atol,
                  double rtol, int bins) {
    Expected e;
    std::vector<double> diffs;
    for (size_t i = 0; i < a.size(); ++i) {
        const double x = a[i], y = b[i];
        if (std::isnan(x) || std::isnan(y)) {
            if (std::isnan(x) != std::isnan(y)) {
                ++e.differing;
                ++e.nanMismatch;
            }
            continue;
        }
        if (std::isinf(x) || std::isinf(y)) {
            if (x != y)
                ++e.differing;
            continue;
        }
        const double d = y - x;
        if (std::fabs(d) > atol + rtol * std::fabs(x))
            ++e.differing;
        ++e.finite;
        e.maxAbs = std::max(e.maxAbs, std::fabs(d));
        e.sumAbs += std::fabs(d);
        e.sumSq += d * d;
        e.aa += x * x;
        e.bb += y * y;
        e.ab += x * y;
        diffs.push_back(d);
    }
    if (diffs.empty())
        return e;
    e.lo = *std::min_element(diffs.begin(), diffs.end());
    e.hi = *std::max_element(diffs.begin(), diffs.end());
    e.counts.assign(size_t(bins), 0);
    for (double d : diffs) {
        size_t k = 0;
        if (e.hi > e.lo) {
            const double pos = std::floor((d - e.lo) / (e.hi - e.lo) * bins);
            k = size_t(std::clamp(pos, 0.0, double(bins - 1)));
        }
        ++e.counts[k];
    }
    return e;
}

bool close(double x, double y) {
    return std::fabs(x - y) <= 1e-12 * std::max({1.0, std::fabs(x), std::fabs(y)});
}

void checkAgainst(const ElementDiff& r, const Expected& e, uint64_t count) {
    QCOMPARE(r.count, count);
    QCOMPARE(r.differing, e.differing);
    QCOMPARE(r.nanMismatch, e.nanMismatch);
    QCOMPARE(r.finitePairs, e.finite);
    if (e.finite == 0) {
        QVERIFY(!r.maxAbsDiff && !r.meanAbsDiff && !r.relL2 && !r.cosine);
        QVERIFY(r.histogram.counts.empty());
        return;
    }
    QCOMPARE(*r.maxAbsDiff, e.maxAbs);
    QVERIFY(close(*r.meanAbsDiff, e.sumAbs / double(e.finite)));
    QCOMPARE(r.relL2.has_value(), e.aa > 0);
    if (r.relL2)
        QVERIFY2(close(*r.relL2, std::sqrt(e.sumSq) / std::sqrt(e.aa)),
                 qPrintable(QString::number(*r.relL2, 'g', 17)));
    QCOMPARE(r.cosine.has_value(), e.aa > 0 && e.bb > 0);
    if (r.cosine)
        QVERIFY(close(*r.cosine, e.ab / (std::sqrt(e.aa) * std::sqrt(e.bb))));
    QCOMPARE(r.histogram.lo, e.lo);
    QCOMPARE(r.histogram.hi, e.hi);
    QCOMPARE(r.histogram.counts, e.counts);
}

ElementDiff compare(const std::vector<float>& a, const std::vector<float>& b, double atol = 0,
                    double rtol = 0, int bins = 8, unsigned threads = 0) {
    DiffOptions o;
    o.atol = atol;
    o.rtol = rtol;
    o.bins = bins;
    o.threads = threads;
    return compareValues(a.data(), b.data(), a.size(), o);
}

std::vector<float> randomValues(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.5f, 2.0f);
    std::vector<float> v(n);
    for (float& f : v)
        f = d(rng);
    return v;
}

} // namespace

class TestTensorDiff : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void elementRules_data() {
        QTest::addColumn<float>("a");
        QTest::addColumn<float>("b");
        QTest::addColumn<bool>("differs");
        QTest::addColumn<bool>("nanMismatch");
        QTest::addColumn<bool>("infMismatch");
        QTest::newRow("equal") << 1.5f << 1.5f << false << false << false;
        QTest::newRow("-0 == +0") << -0.0f << 0.0f << false << false << false;
        QTest::newRow("NaN == NaN") << kNaN << -kNaN << false << false << false;
        QTest::newRow("NaN vs number") << kNaN << 1.0f << true << true << false;
        QTest::newRow("number vs NaN") << 1.0f << kNaN << true << true << false;
        QTest::newRow("NaN vs inf") << kNaN << kInf << true << true << false;
        QTest::newRow("inf == inf") << kInf << kInf << false << false << false;
        QTest::newRow("-inf == -inf") << -kInf << -kInf << false << false << false;
        QTest::newRow("inf vs -inf") << kInf << -kInf << true << false << true;
        QTest::newRow("inf vs max")
            << kInf << std::numeric_limits<float>::max() << true << false << true;
        QTest::newRow("max vs inf")
            << std::numeric_limits<float>::max() << kInf << true << false << true;
        QTest::newRow("one ulp") << 1.0f << std::nextafter(1.0f, 2.0f) << true << false << false;
        QTest::newRow("tiny") << 0.0f << std::numeric_limits<float>::denorm_min() << true << false
                              << false;
    }
    void elementRules() {
        QFETCH(float, a);
        QFETCH(float, b);
        QFETCH(bool, differs);
        QFETCH(bool, nanMismatch);
        QFETCH(bool, infMismatch);
        // Alone, and amid finite equal values (the vector path and the per-value path).
        for (size_t n : {size_t(1), size_t(37)}) {
            std::vector<float> va(n, 3.0f), vb(n, 3.0f);
            va[n / 2] = a;
            vb[n / 2] = b;
            const ElementDiff r = compare(va, vb);
            QCOMPARE(r.differing, uint64_t(differs));
            QCOMPARE(r.nanMismatch, uint64_t(nanMismatch));
            QCOMPARE(r.infMismatch, uint64_t(infMismatch));
            checkAgainst(r, expected(va, vb, 0, 0, 8), n);
        }
    }
    void toleranceBoundary() {
        // |b - a| = 0.5 exactly; atol + rtol |a| = 0.5 is inside, one ulp less is outside.
        const std::vector<float> a = {1.0f, 2.0f}, b = {1.5f, 2.0f};
        QCOMPARE(compare(a, b, 0.5).differing, uint64_t(0));
        QCOMPARE(compare(a, b, std::nextafter(0.5, 0.0)).differing, uint64_t(1));
        QCOMPARE(compare(a, b, 0, 0.5).differing, uint64_t(0)); // rtol * |a| = 0.5
        QCOMPARE(compare(a, b, 0, std::nextafter(0.5, 0.0)).differing, uint64_t(1));
        QCOMPARE(compare(a, b, 0.125, 0.375).differing, uint64_t(0));
        QCOMPARE(compare(a, b, 0.125, std::nextafter(0.375, 0.0)).differing, uint64_t(1));
        // The same in blocks long enough for the vector loop.
        const std::vector<float> a8(8, 1.0f), b8(8, 1.5f);
        QCOMPARE(compare(a8, b8, 0.5).differing, uint64_t(0));
        QCOMPARE(compare(a8, b8, std::nextafter(0.5, 0.0)).differing, uint64_t(8));
        QCOMPARE(compare(a8, b8, 0.125, 0.375).differing, uint64_t(0));
        QCOMPARE(compare(a8, b8, 0.125, std::nextafter(0.375, 0.0)).differing, uint64_t(8));
        // Relative to a, not b: a = 2, b = 1, rtol 0.5 allows 1.
        QCOMPARE(compare({2.0f}, {1.0f}, 0, 0.5).differing, uint64_t(0));
        QCOMPARE(compare({1.0f}, {2.0f}, 0, 0.5).differing, uint64_t(1));
        // Tolerances never excuse a NaN or infinity mismatch.
        QCOMPARE(compare({kNaN, kInf}, {1.0f, 1.0f}, 1e30, 1e30).differing, uint64_t(2));
    }
    void figuresMatchDirectComputation() {
        // Several blocks with specials scattered, compared on 1 and 2
        // threads: identical results, equal to the plain loop.
        const size_t n = 300'001;
        std::vector<float> a = randomValues(n, 1), b = a;
        const std::vector<float> noise = randomValues(n, 2);
        for (size_t i = 0; i < n; i += 3)
            b[i] += 1e-3f * noise[i];
        a[5] = kNaN;
        b[6] = kNaN;
        a[70'000] = kInf;
        b[70'000] = kInf;
        b[140'000] = -kInf;
        a[299'999] = kNaN;
        b[299'999] = kNaN;
        for (auto [atol, rtol] : {std::pair{0.0, 0.0}, {1e-4, 0.0}, {0.0, 1e-3}, {1e-5, 1e-4}}) {
            const ElementDiff one = compare(a, b, atol, rtol, 64, 1);
            const ElementDiff two = compare(a, b, atol, rtol, 64, 2);
            checkAgainst(one, expected(a, b, atol, rtol, 64), n);
            QCOMPARE(two.differing, one.differing);
            QCOMPARE(*two.meanAbsDiff, *one.meanAbsDiff); // bit for bit
            QCOMPARE(*two.relL2, *one.relL2);
            QCOMPARE(*two.cosine, *one.cosine);
            QCOMPARE(two.histogram.counts, one.histogram.counts);
        }
        QCOMPARE(compare(a, b).nanMismatch, uint64_t(2));
    }
    void histogramsExactOnBinEdges() {
        // Differences on bin edges (integers 0..64 and eighths), at lengths
        // around the vector and batch sizes: the vector binning hands them
        // to binOf, so the counts equal the plain loop's for any bin count.
        std::mt19937 rng(11);
        for (size_t n :
             {size_t(15), size_t(255), size_t(256), size_t(257), size_t(4097), size_t(70'003)}) {
            std::vector<float> a(n), b(n);
            for (size_t i = 0; i < n; ++i) {
                a[i] = float(rng() % 1000) / 4.0f;
                b[i] = a[i] + (i % 2 ? float(rng() % 65) : float(rng() % 513) / 8.0f);
            }
            b[n / 2] = a[n / 2];         // the lowest difference, 0
            b[n / 3] = a[n / 3] + 64.0f; // the highest
            if (n > 200)
                a[100] = kNaN; // one NaN among them
            for (int bins : {1, 3, 7, 8, 32, 33, 64, 65}) {
                for (unsigned threads : {1u, 2u}) {
                    checkAgainst(compare(a, b, 0, 0, bins, threads), expected(a, b, 0, 0, bins), n);
                    if (QTest::currentTestFailed()) {
                        qWarning("%zu values, %d bins, %u threads", n, bins, threads);
                        return;
                    }
                }
            }
        }
    }
    void largeTensorOnTwoThreads() {
        // Many blocks over two threads, the histogram pass reading each again.
        const size_t n = (size_t(1) << 21) + 70'000;
        const std::vector<float> a = randomValues(n, 3), b = randomValues(n, 4);
        checkAgainst(compare(a, b, 0, 0, 16, 2), expected(a, b, 0, 0, 16), n);
    }
    void degenerateNorms() {
        // ||a|| = 0: no rel_l2 and no cosine; ||b|| = 0: no cosine.
        const ElementDiff zeroA = compare({0.0f, -0.0f}, {1.0f, 2.0f});
        QVERIFY(!zeroA.relL2 && !zeroA.cosine);
        QCOMPARE(*zeroA.maxAbsDiff, 2.0);
        const ElementDiff zeroB = compare({1.0f, 2.0f}, {0.0f, 0.0f});
        QCOMPARE(*zeroB.relL2, 1.0);
        QVERIFY(!zeroB.cosine);
        // Equal values: one full bin at 0.
        const ElementDiff same = compare({1.0f, 2.0f, 3.0f}, {1.0f, 2.0f, 3.0f}, 0, 0, 4);
        QCOMPARE(same.histogram.counts, (std::vector<uint64_t>{3, 0, 0, 0}));
        QCOMPARE(*same.cosine, 1.0);
        // No finite pair at all.
        checkAgainst(compare({kNaN, kInf}, {kNaN, kInf}),
                     expected({kNaN, kInf}, {kNaN, kInf}, 0, 0, 8), 2);
        checkAgainst(compare({}, {}), Expected{}, 0);
    }
    void cancelAndProgress() {
        const std::vector<float> a = randomValues(500'000, 5), b = randomValues(500'000, 6);
        std::atomic<bool> cancel{true};
        DiffOptions o;
        o.cancel = &cancel;
        QVERIFY_THROWS_EXCEPTION(Cancelled, compareValues(a.data(), b.data(), a.size(), o));
        cancel = false;
        std::mutex mutex;
        std::vector<double> seen;
        o.progress = [&](double p) {
            std::lock_guard lock(mutex);
            seen.push_back(p);
        };
        compareValues(a.data(), b.data(), a.size(), o);
        QVERIFY(seen.size() > 2);
        QCOMPARE(seen.back(), 1.0);
        for (double p : seen)
            QVERIFY(p >= 0 && p <= 1);
    }

    void documents() {
        testsupport::guarded([] { documentsImpl(); });
    }
    void ggufMetadataByValueAndType() {
        testsupport::guarded([] { ggufMetadataByValueAndTypeImpl(); });
    }
    void onlyTheNamedTensors() {
        testsupport::guarded([] { onlyTheNamedTensorsImpl(); });
    }
    void damagedSideIsNamed() {
        testsupport::guarded([] { damagedSideIsNamedImpl(); });
    }
    // Each side's dtype is the file's own, and equal values in another dtype
    // are still a change (OXCK F32 against safetensors F16).
    void dtypesComeFromTheFiles() {
        testsupport::guarded([] { dtypesComeFromTheFilesImpl(); });
    }
    // A tensor gaining NaN or Inf ranks above any finite change, however
    // small its finite figures (issue 22, defect 2).
    void nonFiniteMismatchesRankFirst() {
        testsupport::guarded([] { nonFiniteMismatchesRankFirstImpl(); });
    }
    // F64 in double: [max, max] against itself differs by 0 (through f32
    // both were infinities: max_abs_diff was null), and 1e300 is not Inf.
    void f64AtTheTopOfTheRange() {
        testsupport::guarded([] { f64AtTheTopOfTheRangeImpl(); });
    }

    // A figure that truly passes the double range is named, never a bare
    // null: [max, -max] against [-max, max] differ by ±2 max.
    void f64OverflowIsNamed() {
        testsupport::guarded([] { f64OverflowIsNamedImpl(); });
    }
    // Complex values element by element, as torch.isclose: a value is NaN
    // when a part is, the tolerance applies to the modulus |b − a|, the
    // figures and the histogram are of |b − a|, the norms over both parts;
    // complex against real values is a dtype change, not compared.
    void complexElementByElement() {
        testsupport::guarded([] { complexElementByElementImpl(); });
    }
    // Integers compared as integers: through f32, I32 values above 2^24
    // (and through double I64 above 2^53) that differ by one compared equal.
    void integersComparedExactly() {
        testsupport::guarded([] { integersComparedExactlyImpl(); });
    }

private:
    // A GGUF of metadata only: `k` as a u32 or an i32 of 1, `tokens` an
    // array of strings and `nested` an array of arrays of i32.
    static std::string metadataGguf(uint32_t kType, const std::vector<std::string>& tokens,
                                    const std::vector<std::vector<int32_t>>& nested) {
        constexpr uint32_t kI32 = 5, kStr = 8, kArr = 9; // gguf_type
        testsupport::GgufBytes g;
        g.bytes = {'G', 'G', 'U', 'F'};
        g.u32(3);
        g.u64(0);
        g.u64(3);
        g.str("k");
        g.u32(kType);
        g.u32(1);
        g.str("tokens");
        g.u32(kArr);
        g.u32(kStr);
        g.u64(tokens.size());
        for (const std::string& t : tokens)
            g.str(t);
        g.str("nested");
        g.u32(kArr);
        g.u32(kArr);
        g.u64(nested.size());
        for (const auto& inner : nested) {
            g.u32(kI32);
            g.u64(inner.size());
            for (int32_t v : inner)
                g.u32(uint32_t(v));
        }
        g.pad32();
        return std::string(g.bytes.begin(), g.bytes.end());
    }

    // Metadata differs by value, not by its text: arrays of one summary
    // ("[5000 × str]") by their items, one past the first chunk read, and
    // nested ones; a u32 1 and an i32 1 by their types.
    static void ggufMetadataByValueAndTypeImpl() {
        constexpr uint32_t kU32 = 4, kI32 = 5;
        QTemporaryDir dir;
        std::vector<std::string> tokens(5000);
        for (size_t i = 0; i < tokens.size(); ++i)
            tokens[i] = "t" + std::to_string(i);
        const std::vector<std::vector<int32_t>> nested = {{1, 2}, {3, 4, 5}};
        const auto open = [&](const char* name, uint32_t kType, const std::vector<std::string>& t,
                              const std::vector<std::vector<int32_t>>& n) {
            const QString path = dir.filePath(QString::fromLatin1(name));
            testsupport::writeFile(path, metadataGguf(kType, t, n));
            return Document::open(str(path));
        };
        const auto base = open("a.gguf", kU32, tokens, nested);
        std::vector<std::string> later = tokens;
        later[4500] = "changed";
        auto deeper = nested;
        deeper[1][2] = -5;
        const auto other = open("b.gguf", kI32, later, deeper);
        DiffOptions o;
        const auto entry = [](const TensorDiff& d, const std::string& key) {
            for (const MetadataDiffEntry& m : d.metadata)
                if (m.key == key)
                    return m;
            throw std::runtime_error("no entry " + key);
        };
        QVERIFY(!diffTensors(*base, *base, o).differs());
        const TensorDiff d = diffTensors(*base, *other, o);
        const MetadataDiffEntry k = entry(d, "k"), t = entry(d, "tokens"), n = entry(d, "nested");
        QCOMPARE(k.status, DiffStatus::Changed);
        QCOMPARE(*k.a, std::string("1")); // as stored; the types beside
        QCOMPARE(k.typeA + k.typeB, std::string("u32i32"));
        QCOMPARE(*k.shown(false), std::string("1 (u32)"));
        QCOMPARE(*k.shown(true), std::string("1 (i32)"));
        QCOMPARE(t.status, DiffStatus::Changed);
        QCOMPARE(*t.a, *t.b);
        QCOMPARE(t.itemA, std::string("item 4500 = t4500"));
        QCOMPARE(t.itemB, std::string("item 4500 = changed"));
        QCOMPARE(*t.shown(true), *t.b + ", item 4500 = changed");
        QCOMPARE(n.status, DiffStatus::Changed);
        QCOMPARE(n.itemA, std::string("item 1, item 2 = 5"));
        QCOMPARE(n.itemB, std::string("item 1, item 2 = -5"));
        QVERIFY(d.differs());
    }

    // diffTensors of two safetensors files holding `a` and `b`.
    static TensorDiff diffOfFiles(const std::vector<testsupport::StTensor>& a,
                                  const std::vector<testsupport::StTensor>& b,
                                  const DiffOptions& o) {
        QTemporaryDir dir;
        const QString pa = dir.filePath(QStringLiteral("a.safetensors")),
                      pb = dir.filePath(QStringLiteral("b.safetensors"));
        testsupport::writeFile(pa, testsupport::stFile(a));
        testsupport::writeFile(pb, testsupport::stFile(b));
        return diffTensors(*Document::open(str(pa)), *Document::open(str(pb)), o);
    }

    static void complexElementByElementImpl() {
        using testsupport::leBytes;
        const float nan = kNaN;
        DiffOptions o;
        o.bins = 2;
        // (3+4j, 1, nan, inf+1j, nan, 1+infj) against (0, 1+0.5j, nan+1j,
        // inf+1j, 1+1j, 1-infj): |b − a| 5 and 0.5, NaN = NaN, inf = inf, a
        // NaN mismatch and an infinity mismatch.
        const std::vector<testsupport::StTensor> a = {
            {"z", "C64", {6}, leBytes<float>({3, 4, 1, 0, nan, 0, kInf, 1, nan, 0, 1, kInf})},
            {"reshaped", "C64", {1}, leBytes<float>({1, 0})},
            {"wide", "C64", {1}, leBytes<float>({1, 2})}};
        const std::vector<testsupport::StTensor> b = {
            {"z", "C64", {6}, leBytes<float>({0, 0, 1, 0.5f, nan, 1, kInf, 1, 1, 1, 1, -kInf})},
            {"reshaped", "F64", {2}, leBytes<double>({1, 0})},
            {"wide", "C128", {1}, leBytes<double>({1, 2})}};
        const TensorDiff d = diffOfFiles(a, b, o);
        QCOMPARE(d.tensors.size(), size_t(3));
        const ElementDiff& z = *d.tensors[0].elements;
        QCOMPARE(d.tensors[0].status, DiffStatus::Changed);
        QCOMPARE(z.count, uint64_t(6));
        QCOMPARE(z.finitePairs, uint64_t(2));
        QCOMPARE(z.differing, uint64_t(4));
        QCOMPARE(z.nanMismatch, uint64_t(1));
        QCOMPARE(z.infMismatch, uint64_t(1));
        QCOMPARE(*z.maxAbsDiff, 5.0);
        QCOMPARE(*z.meanAbsDiff, 2.75);
        QCOMPARE(z.normA, std::sqrt(26.0));
        QCOMPARE(z.normB, std::sqrt(1.25));
        QVERIFY(std::fabs(*z.relL2 - std::sqrt(25.25) / std::sqrt(26.0)) <= 1e-15);
        QVERIFY(std::fabs(*z.cosine - 1.0 / (std::sqrt(26.0) * std::sqrt(1.25))) <= 1e-15);
        QCOMPARE(z.histogram.lo, 0.5);
        QCOMPARE(z.histogram.hi, 5.0);
        QCOMPARE(z.histogram.counts, (std::vector<uint64_t>{1, 1}));
        QCOMPARE(d.tensors[1].status, DiffStatus::ShapeChanged); // [1] against [2]
        QCOMPARE(d.tensors[2].status, DiffStatus::DtypeChanged); // equal pairs, C64 vs C128
        QCOMPARE(d.tensors[2].elements->differing, uint64_t(0));
        // The tolerance on the modulus: 0.5 passes atol 0.5, and rtol 0.5 of
        // |3+4j| = 5 lets 2.5 pass, not 5.
        o.atol = 0.5;
        QCOMPARE(diffOfFiles(a, b, o).tensors[0].elements->differing, uint64_t(3));
        o.atol = 0;
        o.rtol = 0.5;
        QCOMPARE(diffOfFiles(a, b, o).tensors[0].elements->differing, uint64_t(3));
        // Pairs against numbers of the same shape: a dtype change, not compared.
        const TensorDiff m = diffOfFiles({{"m", "C64", {2}, leBytes<float>({1, 0, 2, 0})}},
                                         {{"m", "F32", {2}, leBytes<float>({1, 2})}}, o);
        QCOMPARE(m.tensors.at(0).status, DiffStatus::DtypeChanged);
        QVERIFY(!m.tensors.at(0).elements);
        // The view's tint follows the same rule.
        QVERIFY(!elementsDiffer(std::complex<double>(NAN, 0), std::complex<double>(1, NAN), 0, 0));
        QVERIFY(elementsDiffer(std::complex<double>(1, 0), std::complex<double>(1, NAN), 1, 1));
        QVERIFY(!elementsDiffer(std::complex<double>(3, 4), std::complex<double>(0, 0), 5, 0));
        QVERIFY(elementsDiffer(std::complex<double>(3, 4), std::complex<double>(0, 0),
                               std::nextafter(5.0, 0.0), 0));
    }

    static void f64OverflowIsNamedImpl() {
        using testsupport::leBytes;
        constexpr double mx = std::numeric_limits<double>::max();
        DiffOptions o;
        o.bins = 4;
        const TensorDiff d = diffOfFiles({{"x", "F64", {4}, leBytes<double>({mx, -mx, 0, 1})}},
                                         {{"x", "F64", {4}, leBytes<double>({-mx, mx, 0, 1})}}, o);
        const ElementDiff& x = *d.tensors.at(0).elements;
        QCOMPARE(x.differing, uint64_t(2));
        QVERIFY(std::isinf(*x.maxAbsDiff));
        const std::vector<std::string> expected = {
            "max_abs_diff: overflows double",
            "histogram: 2 of 4 differences overflow double (not binned)"};
        QCOMPARE(overflowedFigures(x), expected);
        // Nothing to name when every figure is finite.
        ElementDiff fine = x;
        fine.maxAbsDiff = 1.0;
        fine.histogram.counts = {4, 0, 0, 0};
        QVERIFY(overflowedFigures(fine).empty());
    }

    static void integersComparedExactlyImpl() {
        using testsupport::leBytes;
        constexpr int64_t lo = std::numeric_limits<int64_t>::min();
        constexpr int64_t hi = std::numeric_limits<int64_t>::max();
        const std::vector<int32_t> i32a = {16777217, 2147483647, 5, -7};
        const std::vector<int32_t> i32b = {16777216, 2147483646, 5, -7};
        const std::vector<int64_t> i64a = {(int64_t(1) << 62) + 1, lo, 3};
        const std::vector<int64_t> i64b = {int64_t(1) << 62, hi, 3};
        const std::vector<uint64_t> u64 = {~uint64_t(0), 0, 9};
        QTemporaryDir dir;
        const QString pa = dir.filePath(QStringLiteral("a.safetensors")),
                      pb = dir.filePath(QStringLiteral("b.safetensors"));
        testsupport::writeFile(pa, testsupport::stFile({{"i32", "I32", {4}, leBytes(i32a)},
                                                        {"i64", "I64", {3}, leBytes(i64a)},
                                                        {"mixed", "I64", {3}, leBytes(i64a)}}));
        testsupport::writeFile(pb, testsupport::stFile({{"i32", "I32", {4}, leBytes(i32b)},
                                                        {"i64", "I64", {3}, leBytes(i64b)},
                                                        {"mixed", "U64", {3}, leBytes(u64)}}));
        DiffOptions o;
        o.bins = 4;
        const auto a = Document::open(str(pa)), b = Document::open(str(pb));
        const TensorDiff d = diffTensors(*a, *b, o);
        QCOMPARE(d.tensors.size(), size_t(3));
        // Expected figures from the values, in long double (64-bit mantissa:
        // every difference here is exact in it).
        const auto check = [](const ElementDiff& e, const auto& va, const auto& vb) {
            long double maxAbs = 0, sumAbs = 0, sumSq = 0, aa = 0;
            uint64_t differing = 0;
            for (size_t i = 0; i < va.size(); ++i) {
                const auto x = static_cast<long double>(va[i]);
                const long double diff = static_cast<long double>(vb[i]) - x;
                differing += diff != 0;
                maxAbs = std::max(maxAbs, std::fabs(diff));
                sumAbs += std::fabs(diff);
                sumSq += diff * diff;
                aa += x * x;
            }
            QCOMPARE(e.count, uint64_t(va.size()));
            QCOMPARE(e.differing, differing);
            QCOMPARE(*e.maxAbsDiff, double(maxAbs));
            QCOMPARE(*e.meanAbsDiff, double(sumAbs / va.size()));
            const double rel = double(std::sqrt(sumSq) / std::sqrt(aa));
            QVERIFY2(std::fabs(*e.relL2 - rel) <= 1e-15 * rel,
                     qPrintable(QString::number(*e.relL2)));
            uint64_t binned = 0;
            for (uint64_t c : e.histogram.counts)
                binned += c;
            QCOMPARE(binned, uint64_t(va.size()));
        };
        check(*d.tensors[0].elements, i32a, i32b);
        QCOMPARE(d.tensors[0].elements->differing, uint64_t(2));
        check(*d.tensors[1].elements, i64a, i64b);
        QCOMPARE(d.tensors[1].elements->differing, uint64_t(2));
        QCOMPARE(d.tensors[2].status, DiffStatus::Changed); // I64 against U64 values
        check(*d.tensors[2].elements, i64a, u64);
        // A tolerance applies to the exact difference: 1 passes atol 1.
        o.atol = 1;
        const TensorDiff tolerant = diffTensors(*a, *b, o, {"i32"});
        QCOMPARE(tolerant.tensors.at(0).elements->differing, uint64_t(0));
    }

    static void f64AtTheTopOfTheRangeImpl() {
        using testsupport::leBytes;
        constexpr double mx = std::numeric_limits<double>::max();
        DiffOptions o;
        o.bins = 4;
        const TensorDiff d =
            diffOfFiles({{"top", "F64", {2}, leBytes<double>({mx, mx})},
                         {"wide", "F64", {4}, leBytes<double>({1e300, -1e300, 1, 2})}},
                        {{"top", "F64", {2}, leBytes<double>({mx, mx})},
                         {"wide", "F64", {4}, leBytes<double>({1e300, -1e300, 1, 3})}},
                        o);
        QCOMPARE(d.tensors.size(), size_t(2));
        const ElementDiff& top = *d.tensors[0].elements;
        QCOMPARE(top.finitePairs, uint64_t(2));
        QCOMPARE(top.differing, uint64_t(0));
        QCOMPARE(*top.maxAbsDiff, 0.0);
        QCOMPARE(*top.relL2, 0.0);
        QCOMPARE(*top.cosine, 1.0);
        QVERIFY(std::isinf(top.normA)); // sqrt(2) max: truly beyond double
        QCOMPARE(top.histogram.counts, (std::vector<uint64_t>{2, 0, 0, 0}));
        const ElementDiff& wide = *d.tensors[1].elements;
        QCOMPARE(wide.finitePairs, uint64_t(4));
        QCOMPARE(wide.differing, uint64_t(1));
        QCOMPARE(*wide.maxAbsDiff, 1.0);
        QCOMPARE(*wide.meanAbsDiff, 0.25);
        const double normA = std::sqrt(2.0) * 1e300; // 1 and 2 are below its ulp
        QVERIFY(std::fabs(wide.normA - normA) <= 1e-15 * normA);
        const double rel = 1.0 / normA;
        QVERIFY2(std::fabs(*wide.relL2 - rel) <= 1e-15 * rel,
                 qPrintable(QString::number(*wide.relL2)));
        QCOMPARE(*wide.cosine, 1.0);
    }

    static void documentsImpl() {
        QTemporaryDir dir;
        const std::vector<float> w = randomValues(100, 7);
        std::vector<float> x = randomValues(12, 8), x2 = x;
        x2[3] += 0.25f;
        x2[7] = kNaN;
        Checkpoint a, b;
        a.setMetadata("same", "1");
        a.setMetadata("changed", "old");
        a.setMetadata("gone", "g");
        b.setMetadata("same", "1");
        b.setMetadata("changed", "new\nline");
        b.setMetadata("new", "n");
        a.addTensor({"w", {10, 10}, w});
        a.addTensor({"x", {3, 4}, x});
        a.addTensor({"dup", {2}, {1.0f, 2.0f}});
        a.addTensor({"gone", {1}, {5.0f}});
        a.addTensor({"s", {2, 3}, {1, 2, 3, 4, 5, 6}});
        a.addTensor({"count", {2}, {1.0f, 2.0f}});
        a.addTensor({"dup", {2}, {3.0f, 4.0f}});
        a.addTensor({"dup", {1}, {9.0f}}); // a third x with no partner
        b.addTensor({"new2", {1}, {0.0f}});
        b.addTensor({"dup", {2}, {1.0f, 2.0f}});
        b.addTensor({"x", {3, 4}, x2});
        b.addTensor({"s", {3, 2}, {1, 2, 3, 4, 5, 6}});
        b.addTensor({"count", {2}, {1.0f, 2.0f, 3.0f}}); // stored count differs
        b.addTensor({"dup", {2}, {3.0f, -4.0f}});
        b.addTensor({"w", {10, 10}, w});
        b.addTensor({"new1", {}, {7.0f}});
        const QString pa = dir.filePath(QStringLiteral("a.oxck")),
                      pb = dir.filePath(QStringLiteral("b.oxck"));
        a.save(str(pa));
        b.save(str(pb));
        const auto da = Document::open(str(pa)), db = Document::open(str(pb));
        DiffOptions o;
        o.bins = 4;
        const TensorDiff d = diffTensors(*da, *db, o);

        // Metadata: sorted keys, all four statuses.
        QCOMPARE(d.metadata.size(), size_t(4));
        const std::vector<std::tuple<std::string, DiffStatus, std::optional<std::string>,
                                     std::optional<std::string>>>
            meta = {{"changed", DiffStatus::Changed, "old", "new\nline"},
                    {"gone", DiffStatus::Removed, "g", std::nullopt},
                    {"new", DiffStatus::Added, std::nullopt, "n"},
                    {"same", DiffStatus::Same, "1", "1"}};
        for (size_t i = 0; i < meta.size(); ++i) {
            QCOMPARE(d.metadata[i].key, std::get<0>(meta[i]));
            QCOMPARE(d.metadata[i].status, std::get<1>(meta[i]));
            QCOMPARE(d.metadata[i].a, std::get<2>(meta[i]));
            QCOMPARE(d.metadata[i].b, std::get<3>(meta[i]));
        }

        // A's order, then B-only tensors in B's order; repeated names by occurrence.
        std::vector<std::pair<std::string, DiffStatus>> want = {
            {"w", DiffStatus::Same},         {"x", DiffStatus::Changed},
            {"dup", DiffStatus::Same},       {"gone", DiffStatus::Removed},
            {"s", DiffStatus::ShapeChanged}, {"count", DiffStatus::ShapeChanged},
            {"dup", DiffStatus::Changed},    {"dup", DiffStatus::Removed},
            {"new2", DiffStatus::Added},     {"new1", DiffStatus::Added}};
        QCOMPARE(d.tensors.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) {
            QCOMPARE(d.tensors[i].name, want[i].first);
            QCOMPARE(diffStatusName(d.tensors[i].status), diffStatusName(want[i].second));
            const bool compared =
                want[i].second == DiffStatus::Same || want[i].second == DiffStatus::Changed;
            QCOMPARE(d.tensors[i].elements.has_value(), compared);
        }
        QCOMPARE(*d.tensors[6].indexB, size_t(5)); // second dup of A with second dup of B
        QCOMPARE(*d.tensors[2].indexB, size_t(1));
        QCOMPARE(d.tensors[3].shapeB, std::nullopt);
        QCOMPARE(d.tensors[3].dtypeB, std::nullopt);
        QCOMPARE(*d.tensors[3].dtypeA, std::string("F32"));
        QCOMPARE(*d.tensors[4].shapeB, (std::vector<uint64_t>{3, 2}));
        QCOMPARE(d.tensors[8].shapeA, std::nullopt);
        QCOMPARE(*d.tensors[9].shapeB, std::vector<uint64_t>{});
        checkAgainst(*d.tensors[1].elements, expected(x, x2, 0, 0, 4), 12);
        checkAgainst(*d.tensors[0].elements, expected(w, w, 0, 0, 4), 100);
        QCOMPARE(d.tensors[6].elements->differing, uint64_t(1));

        QCOMPARE(d.summary.same, uint64_t(2));
        QCOMPARE(d.summary.changed, uint64_t(2));
        QCOMPARE(d.summary.added, uint64_t(2));
        QCOMPARE(d.summary.removed, uint64_t(2));
        QCOMPARE(d.summary.shapeChanged, uint64_t(2));
        QCOMPARE(d.summary.differingElements, uint64_t(3)); // x: 2, dup: 1
        QVERIFY(d.differs());

        // A file against itself: nothing differs.
        const TensorDiff self = diffTensors(*da, *da, o);
        QVERIFY(!self.differs());
        QCOMPARE(self.summary.same, uint64_t(da->tensors().size()));
        // Only metadata differs: still a difference.
        Checkpoint c = a;
        c.setMetadata("same", "2");
        const QString pc = dir.filePath(QStringLiteral("c.oxck"));
        c.save(str(pc));
        const TensorDiff meta2 = diffTensors(*da, *Document::open(str(pc)), o);
        QCOMPARE(meta2.summary.same, uint64_t(da->tensors().size()));
        QVERIFY(meta2.differs());
    }

    static void onlyTheNamedTensorsImpl() {
        QTemporaryDir dir;
        Checkpoint a, b;
        a.addTensor({"p", {1}, {1.0f}});
        a.addTensor({"q", {1}, {1.0f}});
        b.addTensor({"p", {1}, {2.0f}});
        b.addTensor({"q", {1}, {1.0f}});
        b.addTensor({"r", {1}, {1.0f}});
        a.save(str(dir.filePath(QStringLiteral("a"))));
        b.save(str(dir.filePath(QStringLiteral("b"))));
        const auto da = Document::open(str(dir.filePath(QStringLiteral("a"))));
        const auto db = Document::open(str(dir.filePath(QStringLiteral("b"))));
        const TensorDiff d = diffTensors(*da, *db, DiffOptions{}, {"q", "r"});
        QCOMPARE(d.tensors.size(), size_t(2));
        QCOMPARE(d.tensors[0].status, DiffStatus::Same);
        QCOMPARE(d.tensors[1].status, DiffStatus::Added);
        QVERIFY(d.differs());
        QVERIFY(!diffTensors(*da, *db, DiffOptions{}, {"q"}).differs());
        try {
            diffTensors(*da, *db, DiffOptions{}, {"q", "nope"});
            QFAIL("an unknown name was accepted");
        } catch (const UnknownTensorError& e) {
            QCOMPARE(e.name(), std::string("nope"));
        }
    }

    static void nonFiniteMismatchesRankFirstImpl() {
        QTemporaryDir dir;
        Checkpoint a, b;
        const std::vector<float> base = {1.0f, 2.0f, 3.0f, 4.0f};
        std::vector<float> big = base, nan = base, inf = base;
        big[0] = 100.0f; // large finite change
        nan[1] = kNaN;   // otherwise equal
        nan[2] = kNaN;
        inf[3] = kInf;
        for (const char* name : {"big", "inf", "nan", "same"})
            a.addTensor({name, {4}, base});
        b.addTensor({"big", {4}, big});
        b.addTensor({"inf", {4}, inf});
        b.addTensor({"nan", {4}, nan});
        b.addTensor({"same", {4}, base});
        const QString pa = dir.filePath(QStringLiteral("a.oxck")),
                      pb = dir.filePath(QStringLiteral("b.oxck"));
        a.save(str(pa));
        b.save(str(pb));
        const TensorDiff d =
            diffTensors(*Document::open(str(pa)), *Document::open(str(pb)), DiffOptions{});
        QCOMPARE(d.tensors[2].elements->nanMismatch, uint64_t(2));
        QCOMPARE(d.tensors[1].elements->infMismatch, uint64_t(1));
        QCOMPARE(nonFiniteMismatches(d.tensors[2]), uint64_t(2));
        QCOMPARE(nonFiniteMismatches(d.tensors[0]), uint64_t(0));
        QCOMPARE(d.summary.nonFiniteMismatch, uint64_t(2));
        // Finite figures alone would put "big" first.
        QVERIFY(*d.tensors[0].elements->relL2 > *d.tensors[2].elements->relL2);
        QVERIFY(changedMore(d.tensors[2], d.tensors[1])); // 2 mismatches before 1
        QVERIFY(changedMore(d.tensors[1], d.tensors[0]));
        QVERIFY(!changedMore(d.tensors[0], d.tensors[1]));
        QVERIFY(changedMore(d.tensors[0], d.tensors[3]));
        QCOMPARE(mostChangedTensor(d), 2);
    }

    static void dtypesComeFromTheFilesImpl() {
        QTemporaryDir dir;
        Checkpoint a;
        a.addTensor({"t", {2}, {1.0f, 2.0f}});
        const QString pa = dir.filePath(QStringLiteral("a.oxck"));
        a.save(str(pa));
        auto writeSt = [&](const char* file, const char* dtype, std::string bytes) {
            const QString path = dir.filePath(QString::fromLatin1(file));
            QFile f(path);
            if (!f.open(QIODevice::WriteOnly))
                throw std::runtime_error("cannot write " + str(path));
            const std::string data = testsupport::stFile({{"t", dtype, {2}, std::move(bytes)}});
            f.write(data.data(), qint64(data.size()));
            return str(path);
        };
        const std::string f16 =
            writeSt("b16.safetensors", "F16", testsupport::leBytes<uint16_t>({0x3C00, 0x4000}));
        const std::string f32 =
            writeSt("b32.safetensors", "F32", testsupport::leBytes<float>({1.0f, 2.0f}));
        const auto da = Document::open(str(pa));
        const TensorDiff half = diffTensors(*da, *Document::open(f16), DiffOptions{});
        QCOMPARE(half.tensors.size(), size_t(1));
        QCOMPARE(half.tensors[0].dtypeA, std::optional<std::string>("F32"));
        QCOMPARE(half.tensors[0].dtypeB, std::optional<std::string>("F16"));
        QCOMPARE(half.tensors[0].elements->differing, uint64_t(0));
        // Same values in another dtype: never "changed", yet a difference.
        QCOMPARE(half.tensors[0].status, DiffStatus::DtypeChanged);
        QCOMPARE(half.summary.dtypeChanged, uint64_t(1));
        QCOMPARE(half.summary.changed, uint64_t(0));
        QCOMPARE(half.summary.same, uint64_t(0));
        QVERIFY(half.differs());
        QCOMPARE(std::string(diffStatusName(half.tensors[0].status)), std::string("dtype_changed"));
        // With nothing changed in value, the compare view opens on it.
        QCOMPARE(mostChangedTensor(half), 0);
        const TensorDiff single = diffTensors(*da, *Document::open(f32), DiffOptions{});
        QCOMPARE(single.tensors[0].dtypeB, std::optional<std::string>("F32"));
        QCOMPARE(single.tensors[0].status, DiffStatus::Same);
        QVERIFY(!single.differs());
        QCOMPARE(mostChangedTensor(single), -1);
        // Values that differ in another dtype are changed (the dtypes still shown).
        const std::string other =
            writeSt("c16.safetensors", "F16", testsupport::leBytes<uint16_t>({0x3C00, 0x4200}));
        const TensorDiff changed = diffTensors(*da, *Document::open(other), DiffOptions{});
        QCOMPARE(changed.tensors[0].status, DiffStatus::Changed);
        QCOMPARE(changed.summary.dtypeChanged, uint64_t(0));
    }

    static void damagedSideIsNamedImpl() {
        QTemporaryDir dir;
        Checkpoint a;
        a.addTensor({"t", {4096}, randomValues(4096, 9)});
        const QString pa = dir.filePath(QStringLiteral("a.oxck")),
                      pb = dir.filePath(QStringLiteral("b.oxck"));
        a.save(str(pa));
        a.save(str(pb));
        const auto da = Document::open(str(pa)), db = Document::open(str(pb));
        QVERIFY(QFile::resize(pb, 200)); // rewritten in place while compared
        try {
            diffTensors(*da, *db, DiffOptions{});
            QFAIL("a truncated side was compared");
        } catch (const OpenError& e) {
            QCOMPARE(e.file(), str(pb));
        }
    }
};

QTEST_GUILESS_MAIN(TestTensorDiff)
#include "tst_tensordiff.moc"
