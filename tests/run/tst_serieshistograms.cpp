// One tensor's fine histograms over a run, read when needed: from the cache,
// from the files when there is no cache, the right file of a sharded
// checkpoint, gaps where absent, and a file changed since the run was read.
#include "testsupport.h"

#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/run/serieshistograms.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

using namespace ckptscope;
using testsupport::guarded;
using testsupport::str;

namespace {

std::vector<float> valuesFor(int step, int layer) {
    std::vector<float> v(300);
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = float(int(i * 7919 % 301) - 150) * 0.01f * float(step + layer);
    return v;
}

void writeStep(const std::string& dir, int step, bool withSecond) {
    Checkpoint c;
    c.setMetadata("step", std::to_string(step));
    c.addTensor({"a.0", {300}, valuesFor(step, 0)});
    if (withSecond)
        c.addTensor({"a.1", {300}, valuesFor(step, 1)});
    c.save(dir + "/s" + std::to_string(step) + ".oxck");
}

const TensorSeries& named(const std::vector<TensorSeries>& all, const std::string& name) {
    for (const TensorSeries& s : all)
        if (s.name == name)
            return s;
    throw std::runtime_error("no series " + name);
}

void compareToDirect(const std::optional<Histogram>& got, const std::vector<float>& values) {
    QVERIFY(got);
    const Histogram want =
        computeStats(values.data(), values.size(), kSummaryHistogramBins).histogram;
    QCOMPARE(got->lo, want.lo);
    QCOMPARE(got->hi, want.hi);
    QCOMPARE(got->counts, want.counts);
}

} // namespace

class TestSeriesHistograms : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fromCacheAndFromFiles() {
        guarded([] {
            QTemporaryDir tmp;
            const std::string dir = str(tmp.path()) + "/run";
            QDir().mkpath(QString::fromStdString(dir));
            writeStep(dir, 1, true);
            writeStep(dir, 2, false); // a.1 absent
            writeStep(dir, 3, true);
            RunOptions opt;
            opt.cacheDir = str(tmp.path()) + "/cache";
            const Run run = readRun({dir}, opt);
            QCOMPARE(run.checkpoints.size(), size_t(3));
            // The run holds statistics only.
            QVERIFY(run.checkpoints[0].summary.tensors[0].histogram.counts.empty());
            const auto series = tensorSeries(run);
            const SummaryCache cache(opt.cacheDir, opt.cacheMaxBytes);
            for (const SummaryCache* c : {&cache, static_cast<const SummaryCache*>(nullptr)}) {
                const SeriesHistograms h = readSeriesHistograms(run, named(series, "a.1"), c);
                QCOMPARE(h.at.size(), size_t(3));
                compareToDirect(h.at[0], valuesFor(1, 1));
                QVERIFY(!h.at[1]);
                compareToDirect(h.at[2], valuesFor(3, 1));
                QVERIFY(h.problems.empty());
            }
            // A file rewritten since: left out, and said so.
            {
                Checkpoint c;
                c.setMetadata("step", "3");
                c.addTensor({"a.0", {2}, {5.f, 6.f}});
                c.addTensor({"a.1", {2}, {5.f, 6.f}});
                c.save(dir + "/s3.oxck");
            }
            const SeriesHistograms h = readSeriesHistograms(run, named(series, "a.1"), &cache);
            QVERIFY(h.at[0]);
            QVERIFY(!h.at[2]);
            QCOMPARE(h.problems.size(), size_t(1));
            QVERIFY(QString::fromStdString(h.problems[0]).contains(QStringLiteral("s3.oxck")));
            std::atomic<bool> cancel{true};
            QVERIFY_THROWS_EXCEPTION(
                Cancelled, readSeriesHistograms(run, named(series, "a.1"), &cache, &cancel));
        });
    }

    void shardedCheckpointFindsTheRightFile() {
        guarded([] {
            QTemporaryDir tmp;
            const std::string cp = str(tmp.path()) + "/checkpoint-5";
            QDir().mkpath(QString::fromStdString(cp));
            Checkpoint one, two;
            one.addTensor({"x.0", {300}, valuesFor(5, 0)});
            one.addTensor({"x.1", {300}, valuesFor(5, 1)});
            two.addTensor({"x.2", {300}, valuesFor(5, 2)});
            one.save(cp + "/model-00001-of-00002.oxck");
            two.save(cp + "/model-00002-of-00002.oxck");
            RunOptions opt;
            opt.useCache = false;
            const Run run = readRun({str(tmp.path())}, opt);
            QCOMPARE(run.checkpoints.size(), size_t(1));
            QCOMPARE(run.checkpoints[0].files.size(), size_t(2));
            const auto series = tensorSeries(run);
            compareToDirect(readSeriesHistograms(run, named(series, "x.2"), nullptr).at[0],
                            valuesFor(5, 2));
            compareToDirect(readSeriesHistograms(run, named(series, "x.1"), nullptr).at[0],
                            valuesFor(5, 1));
        });
    }
};

QTEST_APPLESS_MAIN(TestSeriesHistograms)
#include "tst_serieshistograms.moc"
