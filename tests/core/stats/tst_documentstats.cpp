// The statistics of many tensors at once (small ones one per thread, large
// ones spread over all threads) are bit for bit those of one tensor at a
// time, in the order asked for; progress rises to 1; a tensor that cannot
// be read fails the whole call with its error. (Which failure comes first:
// tst_blockworkers.)
#include "countingsource.h"
#include "picklewriter.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/stats/documentstats.h"
#include "ckptscope/stats/tensorstats.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <thread>

using namespace ckptscope;
using testsupport::str;

class TestDocumentStats : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string m_path;

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        // 40 small tensors around one computed over all threads (more than
        // kWholeTensorBytes).
        std::mt19937 rng(5);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        Checkpoint c;
        for (int k = 0; k < 41; ++k) {
            const uint64_t n = k == 20 ? kWholeTensorBytes / 4 + 1000 : 1 + rng() % 200'000;
            std::vector<float> v(n);
            for (float& f : v)
                f = normal(rng) * float(k + 1);
            if (k % 7 == 3)
                v[n / 2] = std::nanf("");
            c.addTensor({"t" + std::to_string(k), {n}, std::move(v)});
        }
        m_path = str(m_dir.filePath(QStringLiteral("many.oxck")));
        c.save(m_path);
    }

    void manyAtOnceMatchOneByOne() {
        const auto doc = Document::open(m_path);
        std::vector<size_t> indices;
        for (size_t i = 0; i < doc->tensors().size(); ++i)
            indices.push_back(doc->tensors().size() - 1 - i); // backwards, and one twice
        indices.push_back(3);
        for (int bins : {0, 32, 256}) {
            StatsOptions o;
            o.bins = bins;
            std::mutex mutex;
            std::vector<double> seen;
            std::atomic<int> calls = 0;
            o.progress = [&](double p) {
                // Uneven delays before recording: callbacks that are not
                // serialised by the caller arrive here out of order.
                std::this_thread::sleep_for(std::chrono::microseconds(20 * (calls++ % 3)));
                std::lock_guard lock(mutex);
                seen.push_back(p);
            };
            const std::vector<StatsResult> all = computeTensorStats(*doc, indices, o);
            QCOMPARE(all.size(), indices.size());
            StatsOptions single;
            single.bins = bins;
            for (size_t k = 0; k < indices.size(); ++k)
                QVERIFY2(
                    testsupport::sameStats(all[k], computeTensorStats(*doc, indices[k], single)),
                    qPrintable(QStringLiteral("tensor %1, %2 bins").arg(indices[k]).arg(bins)));
            QVERIFY(!seen.empty());
            QCOMPARE(seen.back(), 1.0);
            for (size_t k = 1; k < seen.size(); ++k)
                QVERIFY2(seen[k] >= seen[k - 1], "progress went back");
        }
    }

    void aDamagedTensorFailsTheCall() {
        // Cut the file inside tensor 30: tensors 30 and later cannot be read;
        // the error is the one reading tensor 30 alone gives.
        const std::string cut = str(m_dir.filePath(QStringLiteral("cut.oxck")));
        QVERIFY(QFile::copy(QString::fromStdString(m_path), QString::fromStdString(cut)));
        const auto doc = Document::open(cut);
        const TensorEntry& t30 = doc->tensors()[30];
        QVERIFY(QFile::resize(QString::fromStdString(cut), qint64(t30.dataOffset + 8)));
        std::vector<size_t> indices;
        for (size_t i = 0; i < doc->tensors().size(); ++i)
            indices.push_back(i);
        StatsOptions o;
        o.bins = 32;
        std::string expected;
        try {
            computeTensorStats(*doc, 30, o);
        } catch (const std::exception& e) {
            expected = e.what();
        }
        QVERIFY(!expected.empty());
        try {
            computeTensorStats(*doc, indices, o);
            QFAIL("no error");
        } catch (const std::exception& e) {
            QCOMPARE(std::string(e.what()), expected);
        }
    }
    // Integer tensors: min and max as stored, mean, std and L2 from exact
    // sums (they went through f32: I32 2^31 - 1 was 2^31, a mean -0.25).
    void integersAreExact() {
        using testsupport::leBytes;
        constexpr int32_t i32lo = std::numeric_limits<int32_t>::min();
        constexpr int32_t i32hi = std::numeric_limits<int32_t>::max();
        constexpr int64_t i64lo = std::numeric_limits<int64_t>::min();
        constexpr int64_t i64hi = std::numeric_limits<int64_t>::max();
        constexpr uint64_t u64hi = std::numeric_limits<uint64_t>::max();
        const std::vector<int32_t> four = {i32lo, i32hi, 0, -1};
        const std::vector<int64_t> wide = {i64lo, i64hi, 3};
        // Squares past 2^63 (a u32 squared needs all 64 bits, unsigned).
        const std::vector<uint32_t> u32s = {0xFFFFFFFFu, 0xC0000000u, 7};
        const std::string path = str(m_dir.filePath(QStringLiteral("ints.safetensors")));
        testsupport::writeFile(
            QString::fromStdString(path),
            testsupport::stFile({{"one", "I32", {1}, leBytes<int32_t>({i32hi})},
                                 {"four", "I32", {4}, leBytes(four)},
                                 {"u64", "U64", {3}, leBytes<uint64_t>({0, u64hi, 5})},
                                 {"i64", "I64", {3}, leBytes(wide)},
                                 {"i8", "I8", {3}, leBytes<int8_t>({-128, 127, 3})},
                                 {"u32", "U32", {3}, leBytes(u32s)}}));
        const auto doc = Document::open(path);
        StatsOptions o;
        o.bins = 4;
        const auto at = [&](size_t i) { return computeTensorStats(*doc, i, o).stats; };
        const TensorStats one = at(0), f = at(1), u = at(2), w = at(3), b = at(4), u32 = at(5);
        const auto exact = [](int64_t v) {
            return StoredInteger{v < 0, v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v)};
        };
        QVERIFY(one.intMin == exact(i32hi) && one.intMax == exact(i32hi));
        QCOMPARE(*one.max, double(i32hi));
        QCOMPARE(one.l2, double(i32hi));
        // Population moments, computed here from the integers.
        int64_t sum = 0;
        for (int32_t v : four)
            sum += v;
        const double mean = double(sum) / 4.0;
        QCOMPARE(*f.mean, -0.5);
        QCOMPARE(*f.mean, mean);
        long double var = 0, sq = 0;
        for (int32_t v : four) {
            var += (v - static_cast<long double>(mean)) * (v - static_cast<long double>(mean));
            sq += static_cast<long double>(v) * v;
        }
        QVERIFY(std::fabs(*f.std - double(std::sqrt(var / 4))) <= 1e-15 * *f.std);
        QVERIFY(std::fabs(f.l2 - double(std::sqrt(sq))) <= 1e-15 * f.l2);
        QVERIFY(f.intMin == exact(i32lo) && f.intMax == exact(i32hi));
        QVERIFY(u.intMin == exact(0) && (u.intMax == StoredInteger{false, u64hi}));
        QVERIFY(w.intMin == exact(i64lo) && w.intMax == exact(i64hi));
        QCOMPARE(*w.mean, 2.0 / 3.0); // the sum is 2 exactly
        QCOMPARE(*u.mean, (double(u64hi) + 5.0) / 3.0);
        QVERIFY(b.intMin == exact(-128) && b.intMax == exact(127));
        long double u32Sum = 0, u32Sq = 0;
        for (uint32_t v : u32s) {
            u32Sum += v;
            u32Sq += static_cast<long double>(v) * v;
        }
        const long double u32Mean = u32Sum / 3;
        const long double u32Var = u32Sq / 3 - u32Mean * u32Mean;
        QVERIFY2(std::fabs(u32.l2 - double(std::sqrt(u32Sq))) <= 1e-15 * u32.l2,
                 qPrintable(QString::number(u32.l2)));
        QVERIFY2(std::fabs(*u32.std - double(std::sqrt(u32Var))) <= 1e-12 * *u32.std,
                 qPrintable(QString::number(*u32.std)));
    }

    // F64 at the top of the double range: the squares and hi - lo overflow,
    // the statistics do not (the mean was null, the histogram [3, 0, 0, 0]).
    void f64AtTheTopOfTheRange() {
        constexpr double mx = std::numeric_limits<double>::max();
        const std::string path = str(m_dir.filePath(QStringLiteral("f64.safetensors")));
        testsupport::writeFile(
            QString::fromStdString(path),
            testsupport::stFile(
                {{"edge", "F64", {3}, testsupport::leBytes<double>({-mx, 0, mx})},
                 {"wide", "F64", {4}, testsupport::leBytes<double>({1e300, -1e300, 1, 2})}}));
        const auto doc = Document::open(path);
        StatsOptions o;
        o.bins = 4;
        const StatsResult edge = computeTensorStats(*doc, 0, o);
        QCOMPARE(*edge.stats.mean, 0.0);
        const double std0 = std::sqrt(2.0 / 3.0) * mx; // population: sqrt(2 mx² / 3)
        QVERIFY2(std::fabs(*edge.stats.std - std0) <= 1e-15 * std0,
                 qPrintable(QString::number(*edge.stats.std)));
        QVERIFY(std::isinf(edge.stats.l2)); // sqrt(2) mx: truly beyond double
        QCOMPARE(edge.histogram.counts, (std::vector<uint64_t>{1, 0, 1, 1}));
        const TensorStats wide = computeTensorStats(*doc, 1, o).stats;
        QCOMPARE(*wide.mean, 0.75);
        // 1 and 2 are far below an ulp of 1e300's squares.
        const double l2 = std::sqrt(2.0) * 1e300, std1 = l2 / 2;
        QVERIFY2(std::fabs(wide.l2 - l2) <= 1e-15 * l2, qPrintable(QString::number(wide.l2)));
        QVERIFY2(std::fabs(*wide.std - std1) <= 1e-15 * std1,
                 qPrintable(QString::number(*wide.std)));
    }

    // At the bottom of the range the squares underflow: std and L2 were 0.
    // They are scaled as at the top (issue 38: [5e-324, 1e-310, -2e-320]
    // has std 4.714045208382e-311 and L2 1e-310); F32 subnormals, squared in
    // double, never underflowed; 1e-300 beside 1e300 is below an ulp.
    void subnormalsAtTheBottomOfTheRange() {
        const std::string path = str(m_dir.filePath(QStringLiteral("tiny.safetensors")));
        const float f32Tiny = std::numeric_limits<float>::denorm_min();
        testsupport::writeFile(
            QString::fromStdString(path),
            testsupport::stFile(
                {{"f64", "F64", {3}, testsupport::leBytes<double>({5e-324, 1e-310, -2e-320})},
                 {"f32", "F32", {2}, testsupport::leBytes<float>({f32Tiny, -3 * f32Tiny})},
                 {"mixed", "F64", {2}, testsupport::leBytes<double>({1e-300, 1e300})}}));
        const auto doc = Document::open(path);
        const auto near = [](double got, double want) {
            return std::fabs(got - want) <= 1e-12 * std::fabs(want);
        };
        const TensorStats f64 = computeTensorStats(*doc, 0, {}).stats;
        // Population std of the three values, and the L2 norm, from their
        // exact sums (the values are multiples of 5e-324).
        const double a = 5e-324, b = 1e-310, c = -2e-320;
        const double mean = (a + b + c) / 3;
        const double l2 = b * std::sqrt(1 + (a / b) * (a / b) + (c / b) * (c / b));
        const double std0 =
            std::sqrt(((a - mean) / b * ((a - mean) / b) + (b - mean) / b * ((b - mean) / b) +
                       (c - mean) / b * ((c - mean) / b)) /
                      3) *
            b;
        QVERIFY2(near(*f64.std, std0), qPrintable(QString::number(*f64.std, 'g', 17)));
        QVERIFY2(near(*f64.std, 4.714045208382e-311), qPrintable(QString::number(*f64.std)));
        QVERIFY2(near(f64.l2, l2), qPrintable(QString::number(f64.l2, 'g', 17)));
        QVERIFY2(near(*f64.mean, mean), qPrintable(QString::number(*f64.mean, 'g', 17)));
        const TensorStats f32 = computeTensorStats(*doc, 1, {}).stats;
        const double d = f32Tiny;
        QVERIFY2(near(f32.l2, std::sqrt(10.0) * d), qPrintable(QString::number(f32.l2)));
        QVERIFY2(near(*f32.std, 2 * d), qPrintable(QString::number(*f32.std)));
        const TensorStats mixed = computeTensorStats(*doc, 2, {}).stats;
        QVERIFY(near(mixed.l2, 1e300) && near(*mixed.std, 0.5e300) && near(*mixed.mean, 0.5e300));
    }

    // A tensor torch saved transposed (strides (1, 1024)) is summarised from
    // its storage in order, read once, not a window at a time across every
    // column: the figures of the storage's values, the sums in its order.
    void transposedViewReadInStorageOrder() {
        const uint64_t side = 1024;
        std::vector<float> values(side * side);
        std::mt19937 rng(5);
        std::normal_distribution<float> d(0.0f, 0.02f);
        // Magnitudes from 1e-8 to 1e8, so that sums in double round
        // differently in another order.
        for (size_t i = 0; i < values.size(); ++i)
            values[i] = d(rng) * std::pow(10.0f, float(int(i % 17) - 8));
        picklewriter::Pickle p;
        p.proto(2).emptyDict().mark().unicode("w.T");
        p.tensor("0", "FloatStorage", side * side, 0, {side, side}, {1, side});
        p.setitems().stop();
        const std::string zip =
            picklewriter::torchZip("archive", p.bytes, {{"0", picklewriter::leBytes(values)}});
        auto source = std::make_shared<testsupport::CountingSource>(
            std::vector<uint8_t>(zip.begin(), zip.end()), "t.pt");
        const auto doc = Document::open(source);
        const uint64_t opened = source->bytesRead;
        StatsOptions o;
        o.bins = 100;
        const StatsResult got = computeTensorStats(*doc, 0, o);
        QVERIFY2(source->bytesRead - opened <= side * side * 4 + 4096,
                 qPrintable(QString::number(source->bytesRead - opened)));
        const StatsResult want = computeStats(values.data(), values.size(), 100);
        QCOMPARE(*got.stats.min, *want.stats.min);
        QCOMPARE(*got.stats.max, *want.stats.max);
        QCOMPARE(got.stats.finite, want.stats.finite);
        QCOMPARE(got.histogram.counts, want.histogram.counts);
        // Summed in the storage's order: exactly the figures of the
        // storage's values, which differ in C order in the last digits (so
        // the comparison is exact: QCOMPARE of doubles is fuzzy).
        std::vector<float> cOrder(values.size());
        for (uint64_t r = 0; r < side; ++r)
            for (uint64_t c = 0; c < side; ++c)
                cOrder[r * side + c] = values[c * side + r];
        const double inC = *computeStats(cOrder.data(), cOrder.size(), 100).stats.mean;
        QVERIFY(inC != *want.stats.mean);
        QVERIFY2(*got.stats.mean == *want.stats.mean,
                 qPrintable(QString::number(*got.stats.mean, 'g', 17)));
        QVERIFY(*got.stats.std == *want.stats.std);
    }
};

QTEST_APPLESS_MAIN(TestDocumentStats)
#include "tst_documentstats.moc"
