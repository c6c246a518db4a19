// Reading a training run: discovery (folders, checkpoint-N, shards, content
// probes, duplicates), the kind chosen by the first readable file, skipped
// files with reasons, ordering by every step source, statistics against a
// direct computation, first NaN/Inf, occurrence pairing and the cache.
#include "testsupport.h"

#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/run/runseries.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <thread>

using namespace ckptscope;
using testsupport::guarded;
using testsupport::qstr;
using testsupport::str;

namespace {

using Meta = std::vector<std::pair<std::string, std::string>>;

void writeOxck(const std::string& path, const std::vector<CheckpointTensor>& tensors,
               const Meta& meta = {}) {
    Checkpoint c;
    for (const auto& [k, v] : meta)
        c.setMetadata(k, v);
    for (const CheckpointTensor& t : tensors)
        c.addTensor(t);
    c.save(path);
}

CheckpointTensor small(const std::string& name, float v) {
    return {name, {2}, {v, -v}};
}

void writeGradient(const std::string& path, uint64_t step) {
    ComputationGraphStore graph;
    ComputationNode a("a", "input", {});
    a.outputCid = "cid-a";
    graph.insertNode(a);
    ComputationNode b("b", "matmul", {"cid-a"});
    b.outputCid = "cid-b";
    b.gradientCid = "grad-b";
    graph.insertNode(b);
    graph.insertNode(ComputationNode("c", "loss", {"cid-b"}));
    graph.addEdge("a", "b");
    graph.addEdge("b", "c");
    GradientCheckpoint g(graph, step);
    g.setOptimizerState("w.exp_avg", {0, 0, 128, 63, 0, 0, 0, 64}); // 1.0f, 2.0f
    g.save(path);
}

std::vector<std::string> names(const Run& run) {
    std::vector<std::string> out;
    for (const RunCheckpoint& c : run.checkpoints)
        out.push_back(c.name);
    return out;
}

const SkippedPath* skippedFor(const Run& run, const std::string& pathEnd) {
    for (const SkippedPath& s : run.skipped)
        if (s.path.size() >= pathEnd.size() &&
            s.path.compare(s.path.size() - pathEnd.size(), pathEnd.size(), pathEnd) == 0)
            return &s;
    return nullptr;
}

// The statistics of `stats`, computed the obvious way.
struct Direct {
    uint64_t count = 0, finite = 0, nan = 0, inf = 0, zeros = 0;
    double min = INFINITY, max = -INFINITY, sum = 0, sumSq = 0;
};
Direct direct(const std::vector<float>& v) {
    Direct d;
    for (float f : v) {
        ++d.count;
        if (std::isnan(f)) {
            ++d.nan;
            continue;
        }
        if (std::isinf(f)) {
            ++d.inf;
            continue;
        }
        ++d.finite;
        d.zeros += f == 0.0f;
        d.min = std::min(d.min, double(f));
        d.max = std::max(d.max, double(f));
        d.sum += f;
        d.sumSq += double(f) * double(f);
    }
    return d;
}

bool close(double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max(1.0, std::max(std::abs(a), std::abs(b)));
}

} // namespace

class TestRunScan : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_run; // a fresh folder per test

    std::string at(const std::string& name) const { return str(m_run) + "/" + name; }
    RunOptions options() const {
        RunOptions o;
        o.cacheDir = str(m_run) + "-cache";
        return o;
    }

private Q_SLOTS:
    void init() {
        QVERIFY(m_tmp.isValid());
        m_run = m_tmp.filePath(QString::fromLatin1(QTest::currentTestFunction()));
        QVERIFY(QDir().mkpath(m_run));
    }

    void ordersByMetadataStep() {
        guarded([&] {
            // Names say otherwise: metadata wins, and each key is honoured.
            writeOxck(at("step_1.oxck"), {small("w", 1)}, {{"step", "300"}});
            writeOxck(at("step_2.oxck"), {small("w", 2)}, {{"global_step", " 100 "}});
            writeOxck(at("step_3.oxck"), {small("w", 3)}, {{"iteration", "200"}});
            writeOxck(at("step_4.oxck"), {small("w", 4)}, {{"iter", "250"}, {"step", "x"}});
            const Run run = readRun({str(m_run)}, options());
            QCOMPARE(names(run), (std::vector<std::string>{"step_2.oxck", "step_3.oxck",
                                                           "step_4.oxck", "step_1.oxck"}));
            for (const RunCheckpoint& c : run.checkpoints)
                QCOMPARE(c.stepSource, StepSource::MetadataKey);
            QCOMPARE(*run.checkpoints[0].step, uint64_t(100));
            QCOMPARE(*run.checkpoints[2].step, uint64_t(250));
            QCOMPARE(run.kind, std::optional<RunKind>(RunKind::Tensors));
        });
    }

    void ordersByGradientStep() {
        guarded([&] {
            writeGradient(at("a_step_9.json"), 50);
            writeGradient(at("b.json"), 5);
            writeGradient(at("c.json"), 500);
            const Run run = readRun({str(m_run)}, options());
            QCOMPARE(run.kind, std::optional<RunKind>(RunKind::Gradient));
            QCOMPARE(names(run), (std::vector<std::string>{"b.json", "a_step_9.json", "c.json"}));
            for (const RunCheckpoint& c : run.checkpoints)
                QCOMPARE(c.stepSource, StepSource::GradientStep);
            const GraphCounts& g = run.checkpoints[0].summary.graph;
            QCOMPARE(g.nodes, uint64_t(3));
            QCOMPARE(g.edges, uint64_t(2));
            QCOMPARE(g.forwardDone, uint64_t(2));
            QCOMPARE(g.backwardDone, uint64_t(1));
            const auto blobs = blobSeries(run);
            QCOMPARE(blobs.size(), size_t(1));
            const BlobSummary& b = run.checkpoints[0].summary.blobs[*blobs[0].at[0]];
            QCOMPARE(b.bytes, uint64_t(8));
            QVERIFY(b.stats);
            QCOMPARE(*b.stats->min, 1.0);
            QCOMPARE(*b.stats->max, 2.0);
        });
    }

    void ordersByFileNameNumerically() {
        guarded([&] {
            writeOxck(at("step_20.oxck"), {small("w", 1)});
            writeOxck(at("step_3.oxck"), {small("w", 1)});
            writeOxck(at("model_100_bf16.oxck"), {small("w", 1)});
            const Run run = readRun({str(m_run)}, options());
            QCOMPARE(names(run), (std::vector<std::string>{"step_3.oxck", "step_20.oxck",
                                                           "model_100_bf16.oxck"}));
            for (const RunCheckpoint& c : run.checkpoints)
                QCOMPARE(c.stepSource, StepSource::FileName);
        });
    }

    void equalStepsByNameAndNoStepLast() {
        guarded([&] {
            writeOxck(at("y.oxck"), {small("w", 1)}, {{"step", "5"}});
            writeOxck(at("x.oxck"), {small("w", 1)}, {{"step", "5"}});
            writeOxck(at("zeta.oxck"), {small("w", 1)});
            writeOxck(at("alpha.oxck"), {small("w", 1)});
            writeOxck(at("late.oxck"), {small("w", 1)}, {{"step", "6"}});
            const Run run = readRun({str(m_run)}, options());
            QCOMPARE(names(run), (std::vector<std::string>{"x.oxck", "y.oxck", "late.oxck",
                                                           "alpha.oxck", "zeta.oxck"}));
            QCOMPARE(run.checkpoints[3].stepSource, StepSource::None);
            QVERIFY(!run.checkpoints[4].step);
        });
    }

    void trainerFoldersAndShards() {
        guarded([&] {
            QVERIFY(QDir(m_run).mkpath(QStringLiteral("checkpoint-100")));
            QVERIFY(QDir(m_run).mkpath(QStringLiteral("checkpoint-50")));
            QVERIFY(QDir(m_run).mkpath(QStringLiteral("logs")));
            QVERIFY(QDir(m_run).mkpath(QStringLiteral("checkpoint-empty")));
            writeOxck(at("checkpoint-100/model-00002-of-00002.oxck"), {small("second", 2)});
            writeOxck(at("checkpoint-100/model-00001-of-00002.oxck"), {small("first", 1)});
            testsupport::writeFile(qstr(at("checkpoint-100/trainer_state.json")), "{\"x\": 1}");
            writeOxck(at("checkpoint-50/model.oxck"), {small("first", 1)});
            writeOxck(at("logs/step_1.oxck"), {small("first", 1)}); // not entered
            writeOxck(at("w-00002-of-00002.oxck"), {small("b", 2)});
            writeOxck(at("w-00001-of-00002.oxck"), {small("a", 1)}, {{"step", "75"}});
            writeOxck(at("v-00001-of-00003.oxck"), {small("a", 1)});
            writeOxck(at("v-00003-of-00003.oxck"), {small("a", 1)});
            const Run run = readRun({str(m_run)}, options());
            QCOMPARE(names(run), (std::vector<std::string>{"checkpoint-50", "w-00001-of-00002.oxck",
                                                           "checkpoint-100"}));
            const RunCheckpoint& hf = run.checkpoints[2];
            QCOMPARE(hf.path, at("checkpoint-100"));
            QCOMPARE(hf.stepSource, StepSource::FileName);
            QCOMPARE(*hf.step, uint64_t(100));
            QCOMPARE(hf.files.size(), size_t(2));
            QCOMPARE(hf.summary.tensors.size(), size_t(2));
            QCOMPARE(hf.summary.tensors[0].name, std::string("first")); // shard order
            QCOMPARE(hf.summary.tensors[1].name, std::string("second"));
            QCOMPARE(hf.fileSize, uint64_t(QFileInfo(qstr(hf.files[0])).size() +
                                           QFileInfo(qstr(hf.files[1])).size()));
            const RunCheckpoint& w = run.checkpoints[1];
            QCOMPARE(w.stepSource, StepSource::MetadataKey);
            QCOMPARE(w.summary.tensors.size(), size_t(2));
            // Known by name: a side file, never probed; without global_step
            // it gives no step (a warning says so) and the name does.
            QVERIFY(!skippedFor(run, "checkpoint-100/trainer_state.json"));
            QCOMPARE(hf.sideFiles,
                     std::vector<std::string>{at("checkpoint-100/trainer_state.json")});
            QCOMPARE(run.warnings.size(), size_t(1));
            QVERIFY2(run.warnings[0].find("trainer_state.json: no global_step") !=
                         std::string::npos,
                     run.warnings[0].c_str());
            const SkippedPath* partial = skippedFor(run, "v-00001-of-00003.oxck");
            QVERIFY(partial);
            QVERIFY2(partial->reason.find("2 of 3") != std::string::npos, partial->reason.c_str());
            QVERIFY(!skippedFor(run, "logs/step_1.oxck"));
            QVERIFY(!skippedFor(run, "checkpoint-empty")); // not checkpoint-N: not entered
        });
    }

    void firstReadableFileDecidesAndOthersAreSkipped() {
        guarded([&] {
            // a: OXCK magic, then nothing: damaged; b: the first readable one.
            testsupport::writeFile(qstr(at("a_damaged.oxck")), "OXCK\x01\x00\x00");
            writeGradient(at("b.json"), 3);
            writeOxck(at("c.oxck"), {small("w", 1)});
            testsupport::writeFile(qstr(at("d.txt")), "just some notes\n");
            testsupport::writeFile(qstr(at("e.json")), "{\n  \"graph\": nope\n}\n");
            testsupport::writeFile(qstr(at(".hidden.tmp")), "partial");
            writeGradient(at("f.json"), 1);
            const std::string missing = at("no-such-file.oxck");
            // c.oxck given a second time, directly: counted once.
            const Run run = readRun({str(m_run), at("c.oxck"), missing}, options());
            QCOMPARE(run.kind, std::optional<RunKind>(RunKind::Gradient));
            QCOMPARE(names(run), (std::vector<std::string>{"f.json", "b.json"}));
            auto reason = [&](const std::string& file) {
                const SkippedPath* s = skippedFor(run, file);
                return s ? s->reason : std::string("(not skipped)");
            };
            QVERIFY2(reason("a_damaged.oxck").find("truncated") != std::string::npos,
                     reason("a_damaged.oxck").c_str());
            QVERIFY2(reason("c.oxck").find("run of gradient checkpoints") != std::string::npos,
                     reason("c.oxck").c_str());
            QVERIFY2(reason("d.txt").find("not a checkpoint") != std::string::npos,
                     reason("d.txt").c_str());
            QVERIFY2(reason("e.json").find("line 2") != std::string::npos,
                     reason("e.json").c_str());
            QVERIFY2(reason("no-such-file.oxck").find("does not exist") != std::string::npos,
                     reason("no-such-file.oxck").c_str());
            QVERIFY(!skippedFor(run, ".hidden.tmp"));
            QCOMPARE(run.skipped.size(), size_t(5)); // c.oxck once
        });
    }

    void damagedFileAfterTheKindDoesNotStopTheRun() {
        guarded([&] {
            writeOxck(at("a.oxck"), {small("w", 1)}, {{"step", "1"}});
            std::string cut = Checkpoint().encode();
            Checkpoint big;
            big.addTensor({"w", {1000}, std::vector<float>(1000, 1.0f)});
            cut = big.encode();
            cut.resize(cut.size() - 100); // values cut short
            testsupport::writeFile(qstr(at("b.oxck")), cut);
            writeOxck(at("c.oxck"), {small("w", 3)}, {{"step", "3"}});
            const Run run = readRun({str(m_run)}, options());
            QCOMPARE(names(run), (std::vector<std::string>{"a.oxck", "c.oxck"}));
            QVERIFY(skippedFor(run, "b.oxck"));
            QVERIFY(!skippedFor(run, "b.oxck")->reason.empty());
        });
    }

    void nothingReadable() {
        guarded([&] {
            testsupport::writeFile(qstr(at("x.bin")), "\x00\x01\x02");
            const Run run = readRun({str(m_run)}, options());
            QVERIFY(!run.kind);
            QVERIFY(run.checkpoints.empty());
            QCOMPARE(run.skipped.size(), size_t(1));
        });
    }

    void statisticsMatchDirectComputation() {
        guarded([&] {
            std::mt19937 rng(11);
            std::normal_distribution<float> d(0.5f, 2.0f);
            std::vector<std::vector<float>> values;
            for (int c = 0; c < 3; ++c) {
                std::vector<float> v(5000 + size_t(c) * 1000);
                for (float& f : v)
                    f = d(rng);
                v[7] = 0.0f;
                v[8] = 0.0f;
                if (c == 1) {
                    v[10] = std::numeric_limits<float>::quiet_NaN();
                    v[11] = -std::numeric_limits<float>::infinity();
                }
                values.push_back(v);
                writeOxck(at("s" + std::to_string(c) + ".oxck"), {{"t", {v.size()}, v}},
                          {{"step", std::to_string(c * 10)}});
            }
            const Run run = readRun({str(m_run)}, options());
            const auto series = tensorSeries(run);
            QCOMPARE(series.size(), size_t(1));
            for (size_t c = 0; c < 3; ++c) {
                const TensorStats& s = series[0].point(run, c)->stats;
                const Direct e = direct(values[c]);
                QCOMPARE(s.count, e.count);
                QCOMPARE(s.finite, e.finite);
                QCOMPARE(s.nan, e.nan);
                QCOMPARE(s.posInf + s.negInf, e.inf);
                QCOMPARE(s.zeros, e.zeros);
                QCOMPARE(*s.min, e.min);
                QCOMPARE(*s.max, e.max);
                const double mean = e.sum / double(e.finite);
                double var = 0;
                for (float f : values[c])
                    if (std::isfinite(f))
                        var += (f - mean) * (f - mean);
                QVERIFY2(close(*s.mean, mean), qPrintable(QString::number(*s.mean - mean)));
                QVERIFY(close(*s.std, std::sqrt(var / double(e.finite))));
                QVERIFY(close(s.l2, std::sqrt(e.sumSq)));
            }
        });
    }

    void firstNonfiniteAndSelection() {
        guarded([&] {
            const float nan = std::numeric_limits<float>::quiet_NaN();
            const float inf = std::numeric_limits<float>::infinity();
            writeOxck(at("a.oxck"), {small("a", 1), small("b", 1), small("c", 1)}, {{"step", "1"}});
            writeOxck(
                at("b.oxck"),
                {{"a", {2}, {1, 1}}, {"b", {2}, {nan, 1}}, {"c", {2}, {1, 1}}, {"d", {1}, {-inf}}},
                {{"step", "2"}});
            writeOxck(at("c.oxck"), {{"a", {2}, {inf, 1}}, {"c", {2}, {1, nan}}}, {{"step", "3"}});
            const Run run = readRun({str(m_run)}, options());
            const auto all = tensorSeries(run);
            const auto first = firstNonfinite(run, all);
            QVERIFY(first);
            QCOMPARE(first->index, size_t(1));
            QCOMPARE(*first->step, uint64_t(2));
            QCOMPARE(first->tensors, (std::vector<std::string>{"b", "d"})); // file order
            const auto onlyC = firstNonfinite(run, selectSeries(all, {"c"}));
            QVERIFY(onlyC);
            QCOMPARE(onlyC->index, size_t(2));
            QCOMPARE(onlyC->tensors, (std::vector<std::string>{"c"}));
            QVERIFY(!firstNonfinite(run, selectSeries(all, {"nothing"})));
        });
    }

    void unionOfTensorsPairsRepeatsByOccurrence() {
        guarded([&] {
            writeOxck(at("a.oxck"), {small("w", 1), small("x", 2), small("w", 3)}, {{"step", "1"}});
            writeOxck(at("b.oxck"), {small("y", 4), small("w", 5), small("w", 6)},
                      {{"step", "2"}, {"loss", "0.5"}});
            const Run run = readRun({str(m_run)}, options());
            const auto s = tensorSeries(run);
            QCOMPARE(s.size(), size_t(4));
            QCOMPARE(s[0].name, std::string("w"));
            QCOMPARE(s[1].name, std::string("x"));
            QCOMPARE(s[2].name, std::string("w"));
            QCOMPARE(s[2].occurrence, size_t(1));
            QCOMPARE(s[3].name, std::string("y"));
            QCOMPARE(*s[0].point(run, 1)->stats.max, 5.0);
            QCOMPARE(*s[2].point(run, 0)->stats.max, 3.0);
            QCOMPARE(*s[2].point(run, 1)->stats.max, 6.0);
            QVERIFY(!s[1].point(run, 1));
            QVERIFY(!s[3].point(run, 0));
            const auto meta = metadataSeries(run);
            QCOMPARE(meta.size(), size_t(2));
            QCOMPARE(meta[0].key, std::string("loss")); // sorted
            QVERIFY(!meta[0].values[0]);
            QCOMPARE(*meta[0].values[1], std::string("0.5"));
            QCOMPARE(*meta[1].values[0], std::string("1"));
        });
    }

    void l2GrowthIsRankedByRatio() {
        guarded([&] {
            writeOxck(at("a.oxck"), {small("slow", 1), small("fast", 1), small("shrinks", 4)},
                      {{"step", "1"}});
            writeOxck(at("b.oxck"), {small("slow", 2), small("fast", 10), small("shrinks", 1)},
                      {{"step", "2"}});
            const Run run = readRun({str(m_run)}, options());
            const auto series = tensorSeries(run);
            const auto growth = largestL2Growth(run, series, 5);
            QCOMPARE(growth.size(), size_t(2));
            QCOMPARE(series[growth[0].series].name, std::string("fast"));
            QVERIFY(close(growth[0].ratio, 10.0));
            QCOMPARE(series[growth[1].series].name, std::string("slow"));
        });
    }

    // A logged key: its count, NaN/Inf apart, the last value at the greatest
    // step and the extremes (the first of equals) with their steps.
    void loggedKeySummarized() {
        const double nan = std::nan("");
        const LoggedSummary s =
            summarizeLogged({{10, 2.5}, {20, nan}, {30, 1.0}, {5, 4.0}, {40, 1.0}, {50, INFINITY}});
        QCOMPARE(s.logged, uint64_t(6));
        QCOMPARE(s.nonFinite, uint64_t(2));
        // The last value logged, even when it is not finite (a run that
        // ended in NaN says so); the extremes of the finite ones.
        QCOMPARE(*s.last, (LoggedSummary::Entry{50, INFINITY}));
        QCOMPARE(*s.lowest, (LoggedSummary::Entry{30, 1.0}));
        QCOMPARE(*s.highest, (LoggedSummary::Entry{5, 4.0}));
        const LoggedSummary none = summarizeLogged({{1, nan}});
        QVERIFY(none.last && none.last->first == 1 && std::isnan(none.last->second));
        QVERIFY(!none.lowest && !none.highest);
        QCOMPARE(none.nonFinite, uint64_t(1));
        const LoggedSummary finite = summarizeLogged({{10, 2.5}, {30, 1.0}, {20, 3.0}});
        QCOMPARE(*finite.last, (LoggedSummary::Entry{30, 1.0}));
    }

    void cacheHitsMissesAndRebuild() {
        guarded([&] {
            for (int i = 0; i < 3; ++i)
                writeOxck(at("c" + std::to_string(i) + ".oxck"),
                          {small("w", float(i + 1)), {"v", {3}, {1, 2, float(i)}}},
                          {{"step", std::to_string(i)}});
            testsupport::writeFile(qstr(at("junk.txt")), "junk");
            const RunOptions o = options();
            // Only from the cache: nothing there yet, everything left out.
            RunOptions cacheOnly = o;
            cacheOnly.cacheOnly = true;
            const Run empty = readRun({str(m_run)}, cacheOnly);
            QVERIFY(empty.checkpoints.empty());
            QCOMPARE(empty.notCached, uint64_t(3));
            QCOMPARE(empty.skipped.size(), size_t(1)); // junk.txt, as always
            const Run first = readRun({str(m_run)}, o);
            QCOMPARE(first.cacheMisses, uint64_t(3));
            QCOMPARE(first.notCached, uint64_t(0));
            QCOMPARE(first.cacheHits, uint64_t(0));
            const Run second = readRun({str(m_run)}, o);
            QCOMPARE(second.cacheHits, uint64_t(3));
            QCOMPARE(second.cacheMisses, uint64_t(0));
            const Run cached = readRun({str(m_run)}, cacheOnly);
            QCOMPARE(cached.checkpoints.size(), size_t(3));
            QCOMPARE(cached.notCached, uint64_t(0));
            for (size_t c = 0; c < 3; ++c) {
                QVERIFY(second.checkpoints[c].fromCache);
                QVERIFY(second.checkpoints[c].summary == first.checkpoints[c].summary);
            }
            // Without the cache: neither read nor written.
            RunOptions off = o;
            off.useCache = false;
            const Run uncached = readRun({str(m_run)}, off);
            QCOMPARE(uncached.cacheHits + uncached.cacheMisses, uint64_t(0));
            QCOMPARE(uncached.checkpoints.size(), size_t(3));
            // A rewritten file is a miss; a damaged entry is rebuilt.
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            writeOxck(at("c1.oxck"), {small("w", 9), {"v", {3}, {1, 2, 3}}}, {{"step", "1"}});
            const SummaryCache cache(o.cacheDir, o.cacheMaxBytes);
            const QString entry = qstr(cache.entryPath(fileIdentity(at("c2.oxck"))->path));
            std::string bytes = testsupport::readFile(entry);
            bytes[bytes.size() - 3] ^= 0x11;
            testsupport::writeFile(entry, bytes);
            const Run third = readRun({str(m_run)}, o);
            QCOMPARE(third.cacheHits, uint64_t(1));
            QCOMPARE(third.cacheMisses, uint64_t(2));
            QCOMPARE(*third.checkpoints[1].summary.tensors[0].stats.max, 9.0);
            QVERIFY(third.checkpoints[2].summary == first.checkpoints[2].summary);
            const Run fourth = readRun({str(m_run)}, o);
            QCOMPARE(fourth.cacheHits, uint64_t(3));
        });
    }
};

QTEST_GUILESS_MAIN(TestRunScan)
#include "tst_runscan.moc"
