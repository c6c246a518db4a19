// The statistics' fast paths against their plain forms, on the same data:
// the AVX-512 and AVX2 block scans against the scalar loop, the vectorised histograms
// (AVX2 tables, AVX-512 bit-sliced counters) against Histogram::binOf, and the parallel passes
// (more helpers asked for than there are cores, and several callers at once) against one thread.
#include "testsupport.h"

#include "common/simd.h"
#include "stats/bincounter.h"
#include "stats/slicedbins.h"
#include "stats/statskernels.h"

#include "ckptscope/stats/tensorstats.h"

#include <QTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

using namespace ckptscope;
using namespace ckptscope::stats;
using namespace ckptscope::simd;

namespace {

using F = std::numeric_limits<float>;

// Values that take the unusual branches: NaN (quiet, negative, with a
// payload), ±Inf, ±0, subnormals, the extremes of f32.
const std::vector<float>& specials() {
    static const std::vector<float> v = {F::quiet_NaN(),
                                         -F::quiet_NaN(),
                                         std::bit_cast<float>(0x7f800001u),
                                         F::infinity(),
                                         -F::infinity(),
                                         0.0f,
                                         -0.0f,
                                         F::denorm_min(),
                                         -F::denorm_min(),
                                         std::bit_cast<float>(0x007fffffu), // largest subnormal
                                         F::min(),
                                         -F::min(),
                                         F::max(),
                                         F::lowest(),
                                         1.0f,
                                         -1.0f};
    return v;
}

// Lengths around every vector width (8 floats per AVX2 register, 16 per
// histogram turn) and around the block size.
std::vector<uint64_t> lengths() {
    std::vector<uint64_t> out;
    for (uint64_t n = 0; n <= 40; ++n)
        out.push_back(n);
    for (uint64_t w : {48, 64, 128, 256, 1024, int(kBlock)})
        for (uint64_t d : {w - 1, w, w + 1})
            out.push_back(d);
    return out;
}

// Data of length n: `kind` 0 normal values, 1 specials sprinkled among them,
// 2 only specials, 3 tiny (subnormal) range, 4 huge range.
std::vector<float> data(uint64_t n, int kind, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.5f, 2.0f);
    std::vector<float> v(n);
    for (uint64_t i = 0; i < n; ++i) {
        const float s = specials()[rng() % specials().size()];
        switch (kind) {
        case 0:
            v[i] = normal(rng);
            break;
        case 1:
            v[i] = rng() % 5 == 0 ? s : normal(rng);
            break;
        case 2:
            v[i] = s;
            break;
        case 3:
            v[i] = float(rng() % 50) * F::denorm_min() * (rng() % 2 ? 1.0f : -1.0f);
            break;
        default:
            v[i] = std::ldexp(normal(rng), int(rng() % 250) - 125);
            break;
        }
    }
    return v;
}

// Sums are added in another order by the vector loop: equal within a few
// roundings of the sum of their terms' magnitudes.
bool close(double a, double b, double magnitude, uint64_t n) {
    return std::fabs(a - b) <= 8.0 * double(n + 1) * 0x1p-52 * magnitude;
}

// The scan by `kernel` (Auto: AVX-512 where the CPU has it; Avx2) against the
// scalar loop.
void comparePartials(const std::vector<float>& v, const QString& where, Kernel kernel) {
    const Partial s = scanBlock(v.data(), v.size(), Kernel::Scalar);
    const Partial a = scanBlock(v.data(), v.size(), kernel);
    const QByteArray whereText = where.toUtf8();
    const char* w = whereText.constData();
    QVERIFY2(s.n == a.n && s.finite == a.finite && s.nan == a.nan && s.posInf == a.posInf &&
                 s.negInf == a.negInf && s.zeros == a.zeros,
             w);
    // ±0 compare equal: which zero a min of both keeps is not specified.
    QVERIFY2(s.min == a.min && s.max == a.max, w);
    QVERIFY2(std::bit_cast<uint64_t>(s.shift) == std::bit_cast<uint64_t>(a.shift), w);
    double absShifted = 0, absSq = 0, absSum = 0;
    for (float f : v)
        if (std::isfinite(f)) {
            absShifted += (double(f) - s.shift) * (double(f) - s.shift);
            absSq += double(f) * double(f);
            absSum += std::fabs(double(f));
        }
    QVERIFY2(close(s.sumShifted, a.sumShifted, std::sqrt(absShifted) * std::sqrt(double(v.size())),
                   v.size()),
             w);
    QVERIFY2(close(s.sumSqShifted, a.sumSqShifted, absShifted, v.size()), w);
    QVERIFY2(close(s.sumSq, a.sumSq, absSq, v.size()), w);
    QVERIFY2(close(s.sum, a.sum, absSum + double(s.finite) * std::fabs(s.shift), v.size()), w);
}

template <typename T>
std::vector<uint64_t> countBins(const Histogram& h, const std::vector<T>& v, Kernel kernel,
                                Spread spread = Spread::InRange, uint64_t expected = UINT64_MAX) {
    BinCounter<T> counter(h, kernel, spread, expected);
    // In uneven pieces, as blocks arrive.
    for (size_t at = 0; at < v.size();) {
        const size_t n = std::min<size_t>(v.size() - at, 1 + at % 37 * 100);
        counter.add(v.data() + at, n);
        at += n;
    }
    std::vector<uint64_t> out(h.counts.size(), 0);
    counter.mergeInto(out);
    return out;
}

StatsResult statsOf(const std::vector<float>& v, unsigned threads, int bins) {
    StatsOptions o;
    o.threads = threads;
    o.bins = bins;
    return computeStats(
        v.size(),
        [&](uint64_t first, uint64_t n, float* out) {
            std::memcpy(out, v.data() + first, size_t(n) * 4);
        },
        o);
}

} // namespace

class TestStatsKernels : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // One line that CI shows (.ci/run): which kernels the comparisons below
    // run against the scalar loop on this machine.
    void initTestCase() {
        qInfo("statistics kernels exercised: %s",
              useAvx512() ? "AVX-512, AVX2 + FMA, scalar"
              : useAvx2() ? "AVX2 + FMA, scalar (no AVX-512: not on this CPU, or "
                            "CKPTSCOPE_SIMD=avx2)"
                          : "scalar only (no AVX2 + FMA: not on this CPU, not x86-64, "
                            "or CKPTSCOPE_SIMD=0)");
    }

    void autoTakesTheWidestHistogram() {
        Histogram h;
        h.lo = -1;
        h.hi = 1;
        h.counts.assign(64, 0);
        const BinCounter<float> wide(h), narrow(h, Kernel::Avx2), scalar(h, Kernel::Scalar);
        using Mode = BinCounter<float>::Mode;
        // Bit-sliced by AVX-512 where the CPU has it, else by AVX2.
        QVERIFY(wide.mode == (useAvx2() ? Mode::Sliced : Mode::Scalar));
        QVERIFY(narrow.mode == wide.mode);
        QVERIFY(scalar.mode == Mode::Scalar);
        if (useAvx2()) {
            QCOMPARE(wide.sliced->wide, useAvx512());
            QVERIFY(!narrow.sliced->wide);
        }
        // Bit-sliced counting stops at 128 bins with AVX-512, 96 with AVX2.
        h.counts.assign(96, 0);
        QVERIFY((BinCounter<float>(h, Kernel::Avx2).mode == Mode::Sliced) == useAvx2());
        h.counts.assign(97, 0);
        QVERIFY(BinCounter<float>(h, Kernel::Avx2).mode != Mode::Sliced);
        QVERIFY((BinCounter<float>(h).mode == Mode::Sliced) == useAvx512());
        h.counts.assign(128, 0);
        QVERIFY((BinCounter<float>(h).mode == Mode::Sliced) == useAvx512());
        if (useAvx512())
            QCOMPARE(BinCounter<float>(h).sliced->streams, 4u);
        h.counts.assign(129, 0);
        QVERIFY(BinCounter<float>(h).mode != Mode::Sliced);
        // Doubles: bit-sliced as floats, else four at a time.
        h.counts.assign(64, 0);
        QVERIFY(BinCounter<double>(h).mode == (useAvx512() ? Mode::Sliced
                                               : useAvx2() ? Mode::Direct
                                                           : Mode::Scalar));
        QVERIFY(BinCounter<double>(h, Kernel::Avx2).mode ==
                (useAvx2() ? Mode::Direct : Mode::Scalar));
        // Values outside the range: never bit-sliced (it bins inside only).
        QVERIFY(BinCounter<float>(h, Kernel::Auto, Spread::Anywhere).mode != Mode::Sliced);
        QVERIFY(BinCounter<double>(h, Kernel::Auto, Spread::Anywhere).mode != Mode::Sliced);
    }

    // The one counter for float and for double, every kernel, against binOf:
    // values on every bin edge (as double and as the nearest floats), their
    // neighbours one ulp away, the ends of the range, and non-finite values.
    void floatAndDoubleCountLikeBinOfOnEdges() {
        std::mt19937 rng(41);
        const double F64Inf = std::numeric_limits<double>::infinity();
        for (const auto& [lo, hi] : {std::pair{-1.0, 1.0}, std::pair{0.0, 100.0},
                                     std::pair{-3.7, 12.9}, std::pair{1e-3, 1.1e-3}})
            for (size_t bins : {1, 2, 7, 32, 33, 64, 65, 96, 97, 100, 128, 129, 1000}) {
                Histogram h;
                h.lo = lo;
                h.hi = hi;
                h.counts.assign(bins, 0);
                std::vector<double> d;
                std::vector<float> f;
                for (size_t k = 0; k <= bins; ++k) {
                    const double edge = lo + (hi - lo) * double(k) / double(bins);
                    for (double x :
                         {edge, std::nextafter(edge, -F64Inf), std::nextafter(edge, F64Inf)})
                        if (x >= lo && x <= hi)
                            d.push_back(x);
                    const float e = float(edge);
                    for (float x :
                         {e, std::nextafter(e, -F::infinity()), std::nextafter(e, F::infinity())})
                        if (double(x) >= lo && double(x) <= hi)
                            f.push_back(x);
                }
                for (int k = 0; k < 3000; ++k) // and enough for the vector loops
                    d.push_back(lo + (hi - lo) * double(rng() % 100001) / 100000.0);
                for (double x : d)
                    if (double(float(x)) >= lo && double(float(x)) <= hi)
                        f.push_back(float(x));
                for (size_t i = 0; i < 5; ++i) {
                    d.insert(d.begin() + long(i * 37), {F64Inf, -F64Inf, std::nan("")});
                    f.insert(f.begin() + long(i * 41),
                             {F::infinity(), -F::infinity(), F::quiet_NaN()});
                }
                std::shuffle(d.begin(), d.end(), rng);
                std::shuffle(f.begin(), f.end(), rng);
                std::vector<uint64_t> directD(bins, 0), directF(bins, 0);
                for (double x : d)
                    if (std::isfinite(x))
                        ++directD[h.binOf(x)];
                for (float x : f)
                    if (std::isfinite(x))
                        ++directF[h.binOf(x)];
                const QString where =
                    QStringLiteral("%1 bins over [%2, %3]").arg(bins).arg(lo).arg(hi);
                for (Kernel kernel : {Kernel::Scalar, Kernel::Avx2, Kernel::Auto}) {
                    QVERIFY2(countBins(h, d, kernel) == directD, qPrintable(where));
                    QVERIFY2(countBins(h, f, kernel) == directF, qPrintable(where));
                    // The same floats counted as doubles: the same counts.
                    const std::vector<double> widened(f.begin(), f.end());
                    QVERIFY2(countBins(h, widened, kernel) == directF, qPrintable(where));
                }
            }
    }

    // A range given by the caller (histogramOver): values beyond it go to the
    // end bins, as binOf puts them.
    void valuesOutsideTheRangeGoToTheEnds() {
        std::mt19937 rng(43);
        std::vector<float> f(5000);
        for (float& x : f)
            x = float(int(rng() % 4001) - 2000) / 100.0f; // [-20, 20]
        f[3] = 3e38f;
        f[4] = -3e38f;
        // Non-finite values among them, not counted (the table kernels count
        // such a lane where it truncates, then take it back).
        for (size_t i = 10; i < f.size(); i += 37)
            f[i] = specials()[i % 5]; // NaN, −NaN, signalling NaN, ±Inf
        const std::vector<double> d(f.begin(), f.end());
        for (size_t bins : {1, 16, 33, 64, 100, 1000}) {
            Histogram h;
            h.lo = -5;
            h.hi = 7.5;
            h.counts.assign(bins, 0);
            std::vector<uint64_t> direct(bins, 0);
            for (float x : f)
                if (std::isfinite(x))
                    ++direct[h.binOf(x)];
            for (Kernel kernel : {Kernel::Scalar, Kernel::Avx2, Kernel::Auto}) {
                QCOMPARE(countBins(h, f, kernel, Spread::Anywhere), direct);
                QCOMPARE(countBins(h, d, kernel, Spread::Anywhere), direct);
            }
            QCOMPARE(histogramOver(
                         f.size(),
                         [&](uint64_t first, uint64_t n, float* out) {
                             std::memcpy(out, f.data() + first, size_t(n) * 4);
                         },
                         h.lo, h.hi, int(bins))
                         .counts,
                     direct);
        }
    }

    // Doubles over [-max, max]: hi - lo passes the double range, so every
    // kernel counts by binOf on halves; the expected bins are computed here
    // from the value's share of the range.
    void doublesOverAWidthBeyondDouble() {
        constexpr double mx = std::numeric_limits<double>::max();
        std::vector<double> v = {-mx, mx, 0, -mx / 2, mx / 2, mx * 0.9, -mx * 0.3, 1e300};
        for (int k = 1; k <= 40; ++k)
            v.push_back(mx * (double(k) / 20.5 - 1.0));
        for (size_t bins : {1, 4, 64, 100}) {
            Histogram h;
            h.lo = -mx;
            h.hi = mx;
            h.counts.assign(bins, 0);
            std::vector<uint64_t> direct(bins, 0);
            for (double x : v) { // (x + max) / 2max of the bins, the last closed
                const double share = (x / mx + 1.0) / 2.0;
                ++direct[std::min(size_t(share * double(bins)), bins - 1)];
            }
            for (Kernel kernel : {Kernel::Scalar, Kernel::Avx2, Kernel::Auto})
                QVERIFY2(countBins(h, v, kernel) == direct,
                         qPrintable(QStringLiteral("%1 bins").arg(bins)));
        }
    }

    void scalarAndSimdScansAgree_data() {
        QTest::addColumn<Kernel>("kernel");
        QTest::newRow("auto") << Kernel::Auto; // AVX-512 where the CPU has it
        QTest::newRow("avx2") << Kernel::Avx2;
    }

    void scalarAndSimdScansAgree() {
        QFETCH(Kernel, kernel);
        std::mt19937 rng(17);
        for (uint64_t n : lengths())
            for (int kind = 0; kind < 5; ++kind) {
                comparePartials(data(n, kind, rng),
                                QStringLiteral("length %1, kind %2").arg(n).arg(kind), kernel);
                if (QTest::currentTestFailed())
                    return;
            }
        // A special value in every position of a vector group, alone.
        for (float s : specials())
            for (uint64_t at = 0; at < 17; ++at) {
                std::vector<float> v(17, 0.25f);
                v[at] = s;
                comparePartials(v, QStringLiteral("special at %1").arg(at), kernel);
                if (QTest::currentTestFailed())
                    return;
            }
    }

    void scalarAndSimdHistogramsAgree() {
        std::mt19937 rng(23);
        std::vector<std::vector<float>> sets;
        for (int kind = 0; kind < 5; ++kind)
            for (uint64_t n : {uint64_t(0), uint64_t(7), uint64_t(17), uint64_t(1000), kBlock + 3})
                sets.push_back(data(n, kind, rng));
        std::vector<float> edges(20000); // on bin edges: integers 0..100, eighths
        for (size_t i = 0; i < edges.size(); ++i)
            edges[i] = i % 2 ? float(rng() % 101) : float(rng() % 65) / 8.0f - 4.0f;
        sets.push_back(edges);
        for (const std::vector<float>& v : sets) {
            float lo = F::infinity(), hi = -F::infinity();
            for (float f : v)
                if (std::isfinite(f)) {
                    lo = std::min(lo, f);
                    hi = std::max(hi, f);
                }
            if (!(hi > lo))
                continue;
            for (size_t bins :
                 {1, 2, 3, 7, 16, 63, 64, 65, 96, 100, 127, 128, 129, 1000, 4096, 4097}) {
                Histogram h;
                h.lo = lo;
                h.hi = hi;
                h.counts.assign(bins, 0);
                std::vector<uint64_t> direct(bins, 0);
                for (float f : v)
                    if (std::isfinite(f))
                        ++direct[h.binOf(f)];
                const QString where = QStringLiteral("%1 values in %2 bins over [%3, %4]")
                                          .arg(v.size())
                                          .arg(bins)
                                          .arg(double(lo))
                                          .arg(double(hi));
                QCOMPARE(countBins(h, v, Kernel::Scalar), direct);
                QVERIFY2(countBins(h, v, Kernel::Auto) == direct, qPrintable(where));
                QVERIFY2(countBins(h, v, Kernel::Avx2) == direct, qPrintable(where));
                // Told how many values come: few a bin count in one table.
                for (Kernel kernel : {Kernel::Auto, Kernel::Avx2}) {
                    BinCounter<float> told(h, kernel, Spread::InRange, v.size());
                    if (told.mode == BinMode::Lanes)
                        QCOMPARE(told.tables, v.size() / 16 < bins ? 1u : 8u);
                    QVERIFY2(countBins(h, v, kernel, Spread::InRange, v.size()) == direct,
                             qPrintable(where));
                }
            }
        }
    }

    void slicedCountsCarryOverLongRuns() {
        // A million values (256 folds of the weight-16 level with AVX-512,
        // 512 with AVX2) in 32, 33 and 64 bins: one and two one-hot words per
        // value, every carry level.
        std::mt19937 rng(37);
        std::vector<float> v = data((uint64_t(1) << 20) + 5, 0, rng);
        for (size_t i = 0; i < v.size(); i += 97) // many on the edges of 32 bins over [-8, 8]
            v[i] = float(int(rng() % 33) - 16) / 2.0f;
        v[7] = -8.0f;
        v[8] = 8.0f;
        for (float& f : v)
            f = std::clamp(f, -8.0f, 8.0f);
        for (size_t bins : {32, 33, 64}) {
            Histogram h;
            h.lo = -8;
            h.hi = 8;
            h.counts.assign(bins, 0);
            std::vector<uint64_t> direct(bins, 0);
            for (float f : v)
                ++direct[h.binOf(f)];
            QCOMPARE(countBins(h, v, Kernel::Auto), direct);
            QCOMPARE(countBins(h, v, Kernel::Avx2), direct);
        }
    }

    void parallelMatchesSerial() {
        // More helpers asked for than there are cores (the pool has cores - 1);
        // blocks are merged in order, so the results are bit for bit the same.
        std::mt19937 rng(29);
        const std::vector<float> v = data(20 * kBlock + 123, 1, rng);
        const unsigned many = 4 * std::max(1u, std::thread::hardware_concurrency()) + 3;
        for (int bins : {0, 1, 64, 1000}) {
            const StatsResult serial = statsOf(v, 1, bins);
            QVERIFY(serial.stats.finite > 0);
            QVERIFY2(testsupport::sameStats(statsOf(v, many, bins), serial),
                     qPrintable(QString::number(bins)));
            QVERIFY(testsupport::sameStats(computeStats(v.data(), v.size(), bins), serial));
        }
    }

    void concurrentCallersShareThePool() {
        // Several callers at once, each asking for more helpers than cores.
        std::mt19937 rng(31);
        const std::vector<float> v = data(6 * kBlock + 5, 1, rng);
        const StatsResult serial = statsOf(v, 1, 64);
        const unsigned many = 2 * std::max(1u, std::thread::hardware_concurrency()) + 1;
        std::vector<StatsResult> results(6);
        std::vector<std::thread> callers;
        for (size_t k = 0; k < results.size(); ++k)
            callers.emplace_back([&, k] { results[k] = statsOf(v, many, 64); });
        for (std::thread& t : callers)
            t.join();
        for (const StatsResult& r : results)
            QVERIFY(testsupport::sameStats(r, serial));
    }
};

QTEST_APPLESS_MAIN(TestStatsKernels)
#include "tst_statskernels.moc"
