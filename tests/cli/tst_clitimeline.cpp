// `ckptscope-cli timeline` run as a process: exit codes, the JSON contract
// (keys, order, nulls, the same statistics as `stats --json`), --tensor,
// the cache across runs and --no-cache, gradient runs, the text report.
#include "dcpfixture.h"
#include "deepspeedfixture.h"
#include "optimizerfixture.h"
#include "testsupport.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <nlohmann/json.hpp>

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>
#include <map>

using json = nlohmann::ordered_json; // key order is part of the contract
using namespace ckptscope;
using testsupport::guarded;
using testsupport::qstr;
using testsupport::str;

namespace {

struct Result {
    int exitCode = -1;
    QByteArray out, err;
    json parsed() const {
        return json::parse(out.constData(), out.constData() + out.size(), nullptr, false);
    }
    QString text() const { return QString::fromUtf8(out); }
};

std::vector<std::string> keys(const json& j) {
    std::vector<std::string> k;
    for (auto it = j.begin(); it != j.end(); ++it)
        k.push_back(it.key());
    return k;
}

// Compares JSON values; prints both when they differ.
bool jsonEq(const json& a, const json& b) {
    if (a == b)
        return true;
    qWarning("JSON differs: %s vs %s", a.dump().c_str(), b.dump().c_str());
    return false;
}

} // namespace

class TestCliTimeline : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_run, m_cache;

    std::string at(const std::string& name) const { return str(m_run) + "/" + name; }

    Result cli(const QStringList& args, const QStringList& env = {}) const {
        QProcess p;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert(QStringLiteral("XDG_CACHE_HOME"), m_cache);
        e.remove(QStringLiteral("CKPTSCOPE_CACHE_MAX_BYTES"));
        for (const QString& kv : env)
            e.insert(kv.section(QLatin1Char('='), 0, 0), kv.section(QLatin1Char('='), 1));
        p.setProcessEnvironment(e);
        p.start(QStringLiteral(CKPTSCOPE_CLI_PATH), args);
        Result r;
        if (!p.waitForFinished(120000))
            return r;
        r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        r.out = p.readAllStandardOutput();
        r.err = p.readAllStandardError();
        return r;
    }

    // Three OXCK checkpoints; a NaN appears at step 200 in "b", "a" grows.
    void writeRun() {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        for (int i = 0; i < 3; ++i) {
            Checkpoint c;
            c.setMetadata("step", std::to_string((i + 1) * 100));
            if (i > 0)
                c.setMetadata("loss", std::to_string(3 - i));
            const float s = float(1 << (2 * i));
            c.addTensor({"a", {3}, {s, -s, 0.5f}});
            c.addTensor({"b", {2}, {i == 1 ? nan : 1.0f, 2.0f}});
            if (i == 2)
                c.addTensor({"late", {1}, {7.0f}});
            c.save(at("ckpt_" + std::to_string(3 - i) + ".oxck")); // names against the steps
        }
        testsupport::writeFile(qstr(at("README.txt")), "not a checkpoint");
    }

private Q_SLOTS:
    void init() {
        QVERIFY(m_tmp.isValid());
        const QString name = QString::fromLatin1(QTest::currentTestFunction());
        m_run = m_tmp.filePath(name);
        m_cache = m_tmp.filePath(name + QStringLiteral("-cache"));
        QVERIFY(QDir().mkpath(m_run));
    }

    void exitCodes() {
        QCOMPARE(cli({QStringLiteral("timeline")}).exitCode, 2);
        QCOMPARE(cli({QStringLiteral("timeline"), m_run, QStringLiteral("--bogus")}).exitCode, 2);
        QCOMPARE(cli({QStringLiteral("timeline"), m_run, QStringLiteral("--tensor")}).exitCode, 2);
        const Result help = cli({QStringLiteral("timeline"), QStringLiteral("--help")});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.text().contains(QStringLiteral("Usage: ckptscope-cli timeline PATH...")));
        // Nothing readable: 1, and the JSON still says why.
        const QString missing = m_run + QStringLiteral("/missing");
        const Result none = cli({QStringLiteral("timeline"), missing, QStringLiteral("--json")});
        QCOMPARE(none.exitCode, 1);
        const json j = none.parsed();
        QCOMPARE(j["checkpoints"].size(), size_t(0));
        QCOMPARE(j["skipped"][0]["path"].get<std::string>(), str(missing));
        QVERIFY(!j["skipped"][0]["reason"].get<std::string>().empty());
        guarded([&] { writeRun(); });
        QCOMPARE(cli({QStringLiteral("timeline"), m_run}).exitCode, 0);
        // A --tensor no checkpoint has is a usage error.
        QCOMPARE(cli({QStringLiteral("timeline"), m_run, QStringLiteral("--tensor"),
                      QStringLiteral("zzz")})
                     .exitCode,
                 2);
    }

    void jsonContract() {
        guarded([&] {
            writeRun();
            const Result r = cli({QStringLiteral("timeline"), m_run, QStringLiteral("--json")});
            QCOMPARE(r.exitCode, 0);
            const json j = r.parsed();
            QVERIFY(!j.is_discarded());
            QCOMPARE(keys(j), (std::vector<std::string>{
                                  "format", "checkpoints", "skipped", "side_files", "warnings",
                                  "model_config", "trainer_history", "tensors", "metadata",
                                  "first_nonfinite", "optimizer_outliers", "cache"}));
            QVERIFY(jsonEq(j["optimizer_outliers"], json::array())); // no optimizer state
            QVERIFY(jsonEq(j["side_files"], json::array()));
            QVERIFY(jsonEq(j["warnings"], json::array()));
            QVERIFY(j["model_config"].is_null());
            QCOMPARE(j["format"].get<std::string>(), std::string("tensors"));
            QCOMPARE(j["checkpoints"].size(), size_t(3));
            const std::vector<std::string> order = {"ckpt_3.oxck", "ckpt_2.oxck", "ckpt_1.oxck"};
            for (size_t i = 0; i < 3; ++i) {
                const json& c = j["checkpoints"][i];
                QCOMPARE(keys(c),
                         (std::vector<std::string>{"path", "step", "step_source", "file_size",
                                                   "mtime", "side_files", "optimizer_file"}));
                QVERIFY(c["optimizer_file"].is_null());
                QVERIFY(jsonEq(c["side_files"], json::array()));
                QCOMPARE(c["path"].get<std::string>(), at(order[i]));
                QCOMPARE(c["step"].get<uint64_t>(), uint64_t((i + 1) * 100));
                QCOMPARE(c["step_source"].get<std::string>(), std::string("metadata"));
                const QFileInfo fi(qstr(at(order[i])));
                QCOMPARE(c["file_size"].get<int64_t>(), fi.size());
                QCOMPARE(
                    qstr(c["mtime"].get<std::string>()),
                    fi.lastModified().toUTC().toString(QStringLiteral("yyyy-MM-ddTHH:mm:ssZ")));
            }
            QCOMPARE(j["skipped"].size(), size_t(1));
            QCOMPARE(j["skipped"][0]["path"].get<std::string>(), at("README.txt"));
            // Union in order of first appearance; null where absent.
            QCOMPARE(j["tensors"].size(), size_t(3));
            QCOMPARE(j["tensors"][2]["name"].get<std::string>(), std::string("late"));
            QVERIFY(j["tensors"][2]["series"][0].is_null());
            QVERIFY(j["tensors"][2]["series"][1].is_null());
            QCOMPARE(keys(j["tensors"][0]["series"][0]),
                     (std::vector<std::string>{"count", "finite", "nan", "inf", "zeros", "min",
                                               "max", "mean", "std", "l2"}));
            // The same numbers as `stats --json` of each file.
            for (size_t i = 0; i < 3; ++i) {
                const Result stats =
                    cli({QStringLiteral("stats"), qstr(at(order[i])), QStringLiteral("--json")});
                const json s = stats.parsed();
                for (const json& t : s["tensors"]) {
                    const json* series = nullptr;
                    for (const json& tt : j["tensors"])
                        if (tt["name"] == t["name"])
                            series = &tt;
                    QVERIFY(series);
                    const json& point = (*series)["series"][i];
                    for (const std::string& k : keys(point))
                        QVERIFY2(point[k] == t[k],
                                 (t["name"].get<std::string>() + "." + k).c_str());
                }
            }
            QCOMPARE(j["metadata"].size(), size_t(2));
            QCOMPARE(j["metadata"][0]["key"].get<std::string>(), std::string("loss"));
            QVERIFY(j["metadata"][0]["values"][0].is_null());
            QCOMPARE(j["metadata"][0]["values"][1].get<std::string>(), std::string("2"));
            QCOMPARE(j["metadata"][1]["key"].get<std::string>(), std::string("step"));
            const json& f = j["first_nonfinite"];
            QCOMPARE(f["index"].get<int>(), 1);
            QCOMPARE(f["step"].get<int>(), 200);
            QVERIFY(jsonEq(f["tensors"], json::array({"b"})));
            QCOMPARE(j["cache"]["misses"].get<int>(), 3);
        });
    }

    // Hugging Face Trainer folders: the step and log from trainer_state.json
    // (log values as JSON numbers, NaN as null), side files per checkpoint,
    // config.json's facts, a pickle skipped, a bad state a warning.
    // A Trainer checkpoint saved with safe_serialization=False: its
    // pytorch_model.bin is the checkpoint (read as torch reads it), the
    // optimizer, scheduler, RNG states and arguments are side files.
    void trainerFolderOfPytorchModel() {
        REQUIRE_CONFORMANCE();
        const QString folder = testsupport::corpus(QStringLiteral("pytorch/valid/checkpoint-50"));
        const Result r = cli({QStringLiteral("timeline"), folder, QStringLiteral("--no-cache"),
                              QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const json j = r.parsed();
        QCOMPARE(j["checkpoints"].size(), size_t(1));
        const json& c = j["checkpoints"][0];
        QCOMPARE(c["step"].get<int>(), 50);
        QCOMPARE(j["tensors"].size(), size_t(21));
        for (const char* side :
             {"optimizer.pt", "rng_state.pth", "scheduler.pt", "training_args.bin"})
            QVERIFY2(c["side_files"].dump().find(side) != std::string::npos, side);
        QVERIFY(j["skipped"].empty());
    }

    // A Trainer run of three checkpoints with Adam's state, written here:
    // each series point carries the parameter's update figures (equal to the
    // formula), a layer whose weights are 1000× smaller than the others' is
    // an outlier of update / weight at every step, a second moment grown
    // 10^4× is named at its step; the text report names both; a second run
    // reads the figures from the cache.
    void optimizerOverARun() {
        guarded([&] {
            const std::vector<std::string> names = {
                "embed.weight", "layers.0.weight", "layers.1.weight", "tiny.weight", "head.weight"};
            std::vector<testsupport::AdamFixture> fixtures;
            for (int i = 0; i < 3; ++i) {
                auto f =
                    testsupport::AdamFixture::make(names, 64, {1, 1, 1, 1e-3, 1}, uint32_t(i + 1));
                f.step = double((i + 1) * 10);
                if (i == 2)
                    for (float& v : f.params[2].expAvgSq)
                        v *= 1e4f;
                const std::string dir = "checkpoint-" + std::to_string((i + 1) * 10);
                QVERIFY(QDir().mkpath(qstr(at(dir))));
                f.writeTo(at(dir));
                fixtures.push_back(std::move(f));
            }
            const Result r = cli({QStringLiteral("timeline"), m_run, QStringLiteral("--json")});
            QVERIFY2(r.exitCode == 0, r.err.constData());
            const json j = r.parsed();
            QCOMPARE(j["checkpoints"].size(), size_t(3));
            QVERIFY2(j["warnings"].empty(), j["warnings"].dump().c_str());
            for (size_t c = 0; c < 3; ++c)
                QVERIFY(j["checkpoints"][c]["optimizer_file"].get<std::string>().ends_with(
                    "/optimizer.pt"));
            const json& head = j["tensors"][4];
            QCOMPARE(head["name"].get<std::string>(), std::string("head.weight"));
            for (size_t c = 0; c < 3; ++c) {
                const json& o = head["series"][c]["optimizer"];
                const auto e = fixtures[c].expected(4);
                QCOMPARE(o["step"].get<double>(), double((c + 1) * 10));
                QVERIFY(std::abs(o["update_to_weight"].get<double>() - e.updateToWeight) <=
                        1e-12 * e.updateToWeight);
            }
            std::vector<std::string> ratioOutliers, growth;
            for (const json& o : j["optimizer_outliers"]) {
                if (o["kind"] == "update_to_weight") {
                    ratioOutliers.push_back(o["name"].get<std::string>() + "@" + o["step"].dump());
                    const double factor = o["factor"].get<double>();
                    QVERIFY2(factor >= 10 || factor <= 0.1, o.dump().c_str());
                    QVERIFY(
                        std::abs(o["update_to_weight"].get<double>() / o["median"].get<double>() -
                                 o["factor"].get<double>()) < 1e-9 * o["factor"].get<double>());
                } else {
                    growth.push_back(o["name"].get<std::string>() + "@" + o["step"].dump());
                    QVERIFY(o["factor"].get<double>() > 100);
                }
            }
            // (at step 30 the grown second moment makes layers.1's update
            // 100× smaller: an outlier below the median)
            QVERIFY2(ratioOutliers ==
                         (std::vector<std::string>{"tiny.weight@10", "tiny.weight@20",
                                                   "layers.1.weight@30", "tiny.weight@30"}),
                     j["optimizer_outliers"].dump().c_str());
            QVERIFY2(growth == std::vector<std::string>{"layers.1.weight@30"},
                     j["optimizer_outliers"].dump().c_str());
            const Result text = cli({QStringLiteral("timeline"), m_run});
            QVERIFY(text.out.contains("Optimizer outliers"));
            QVERIFY(text.out.contains("tiny.weight"));
            QVERIFY(text.out.contains("sqrt(v) growth"));
            const Result again = cli({QStringLiteral("timeline"), m_run, QStringLiteral("--json")});
            const json k = again.parsed();
            QCOMPARE(k["cache"]["hits"].get<int>(), 3);
            QVERIFY(jsonEq(k["tensors"], j["tensors"]));
            QVERIFY(jsonEq(k["optimizer_outliers"], j["optimizer_outliers"]));
        });
    }

    // A Lightning checkpoint holds its optimizer state: its series carry the
    // same figures as `stats --optimizer` of the file, buffers none.
    void lightningCheckpointCarriesItsOptimizer() {
        REQUIRE_CONFORMANCE();
        const QString folder = testsupport::corpus(QStringLiteral("pytorch/valid/lightning"));
        const Result r = cli({QStringLiteral("timeline"), folder, QStringLiteral("--no-cache"),
                              QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const json j = r.parsed();
        const Result s =
            cli({QStringLiteral("stats"), QStringLiteral("--optimizer"), QStringLiteral("--json"),
                 folder + QStringLiteral("/epoch=2-step=150.ckpt")});
        QCOMPARE(s.exitCode, 0);
        std::map<std::string, json> byName;
        const json stats = s.parsed();
        for (const json& t : stats["tensors"])
            byName[t["name"].get<std::string>()] = t["optimizer"];
        QCOMPARE(byName.size(), size_t(6));
        size_t carried = 0;
        for (const json& t : j["tensors"]) {
            const json& point = t["series"][0];
            const auto it = byName.find(t["name"].get<std::string>());
            if (it == byName.end()) {
                QVERIFY2(point["optimizer"].is_null(), t["name"].dump().c_str());
                continue;
            }
            QVERIFY(jsonEq(point["optimizer"], it->second));
            ++carried;
        }
        QCOMPARE(carried, size_t(6));
    }

    // A DeepSpeed run: global_stepN folders, each one model from its ranks'
    // partitions; the master weights' series carry the optimizer's figures,
    // a parameter with 1000x smaller weights is flagged, a second run reads
    // every checkpoint from the cache.
    void deepSpeedRun() {
        guarded([&] {
            for (int i = 1; i <= 3; ++i) {
                auto f =
                    testsupport::DeepSpeedFixture::make(2, 2, {{{8, 4}, {6, 4}, {4, 4}, {10}}});
                f.step = 10.0 * i;
                f.tag = "global_step" + std::to_string(10 * i);
                for (float& w : f.params[2].w)
                    w *= 1e-3f;
                f.write(str(m_run));
            }
            const Result r = cli({QStringLiteral("timeline"), m_run, QStringLiteral("--json")});
            QVERIFY2(r.exitCode == 0, r.err.constData());
            const json j = r.parsed();
            QCOMPARE(j["checkpoints"].size(), size_t(3));
            QVERIFY2(j["skipped"].empty(), j["skipped"].dump().c_str());
            for (size_t c = 0; c < 3; ++c) {
                QCOMPARE(j["checkpoints"][c]["step"].get<int>(), int(10 * (c + 1)));
                QCOMPARE(j["checkpoints"][c]["optimizer_file"].get<std::string>(),
                         at("global_step" + std::to_string(10 * (c + 1))));
            }
            bool carried = false;
            for (const json& t : j["tensors"])
                if (t["name"] == "fp32.layers.0.weight")
                    carried = t["series"][2]["optimizer"]["step"].get<double>() == 30.0;
            QVERIFY(carried);
            std::vector<std::string> flagged;
            for (const json& o : j["optimizer_outliers"])
                flagged.push_back(o["name"].get<std::string>() + "@" + o["step"].dump());
            QVERIFY2(flagged == (std::vector<std::string>{"fp32.layers.2.weight@10",
                                                          "fp32.layers.2.weight@20",
                                                          "fp32.layers.2.weight@30"}),
                     j["optimizer_outliers"].dump().c_str());
            const json again =
                cli({QStringLiteral("timeline"), m_run, QStringLiteral("--json")}).parsed();
            QCOMPARE(again["cache"]["hits"].get<int>(), 3);
            QVERIFY(jsonEq(again["optimizer_outliers"], j["optimizer_outliers"]));
        });
    }

    // A folder of step-N/ DCP folders is a run: the step from each name,
    // the optimizer's figures from each folder's optim.state, cached.
    void dcpRun() {
        guarded([&] {
            for (int i = 1; i <= 3; ++i)
                testsupport::DcpFixture::make(2, {{8, 4}, {10}})
                    .write(at("step-" + std::to_string(100 * i)));
            const Result r = cli({QStringLiteral("timeline"), m_run, QStringLiteral("--json")});
            QVERIFY2(r.exitCode == 0, r.err.constData());
            const json j = r.parsed();
            QCOMPARE(j["checkpoints"].size(), size_t(3));
            QVERIFY2(j["skipped"].empty(), j["skipped"].dump().c_str());
            for (size_t c = 0; c < 3; ++c)
                QCOMPARE(j["checkpoints"][c]["step"].get<int>(), int(100 * (c + 1)));
            bool carried = false;
            for (const json& t : j["tensors"])
                if (t["name"] == "model.layers.0.weight")
                    carried = t["series"][2]["optimizer"]["step"].get<double>() == 10.0;
            QVERIFY(carried);
            const json again =
                cli({QStringLiteral("timeline"), m_run, QStringLiteral("--json")}).parsed();
            QCOMPARE(again["cache"]["hits"].get<int>(), 3);
        });
    }

    void trainerFolders() {
        guarded([&] {
            const std::vector<double> loss = {2.75, 1.0 / 3.0};
            for (size_t i = 0; i < 2; ++i) {
                const std::string dir = "checkpoint-" + std::to_string((i + 1) * 10);
                QVERIFY(QDir().mkpath(qstr(at(dir))));
                Checkpoint c;
                c.addTensor({"w", {1}, {float(i)}});
                c.save(at(dir + "/model.oxck"));
                testsupport::writeFile(qstr(at(dir + "/optimizer.pt")), "PK\x03\x04");
                const std::string g = i == 0 ? "0.5" : "NaN"; // Python writes NaN bare
                testsupport::writeFile(qstr(at(dir + "/trainer_state.json")),
                                       "{\"global_step\": " + std::to_string((i + 1) * 10) +
                                           ", \"log_history\": [{\"loss\": " +
                                           json(loss[i]).dump() + ", \"grad_norm\": " + g +
                                           ", \"step\": " + std::to_string((i + 1) * 10) + "}]}");
            }
            testsupport::writeFile(qstr(at("checkpoint-20/config.json")),
                                   R"({"architectures": ["GPT2LMHeadModel"], "n_embd": 8,
                                       "model_type": "gpt2", "vocab_size": 50257})");
            testsupport::writeFile(qstr(at("checkpoint-10/pytorch_model.bin")), "PK\x03\x04");
            testsupport::writeFile(qstr(at("trainer_state.json")), "{\"global_step\": ");
            const Result r = cli({QStringLiteral("timeline"), m_run, QStringLiteral("--json")});
            QCOMPARE(r.exitCode, 0);
            const json j = r.parsed();
            QCOMPARE(j["checkpoints"].size(), size_t(2));
            for (size_t i = 0; i < 2; ++i) {
                const json& c = j["checkpoints"][i];
                QCOMPARE(c["step"].get<uint64_t>(), uint64_t((i + 1) * 10));
                QCOMPARE(c["step_source"].get<std::string>(), std::string("trainer_state.json"));
                const json side =
                    i == 0 ? json::array({"optimizer.pt", "trainer_state.json"})
                           : json::array({"config.json", "optimizer.pt", "trainer_state.json"});
                QVERIFY(jsonEq(c["side_files"], side));
            }
            QVERIFY(jsonEq(j["metadata"],
                           json::array({{{"key", "grad_norm"}, {"values", {0.5, nullptr}}},
                                        {{"key", "loss"}, {"values", {loss[0], loss[1]}}}})));
            // The run folder's state is broken: the history is the latest
            // checkpoint's, every key's steps and values side by side.
            QVERIFY(jsonEq(
                j["trainer_history"],
                json(
                    {{"file", at("checkpoint-20/trainer_state.json")},
                     {"series",
                      json::array({{{"key", "grad_norm"}, {"steps", {20}}, {"values", {nullptr}}},
                                   {{"key", "loss"}, {"steps", {20}}, {"values", {loss[1]}}}})}})));
            // A pickled model is probed like any model file: four bytes of
            // a zip header are not one.
            QCOMPARE(j["skipped"].size(), size_t(1));
            QCOMPARE(j["skipped"][0]["path"].get<std::string>(),
                     at("checkpoint-10/pytorch_model.bin"));
            QVERIFY(j["skipped"][0]["reason"].get<std::string>().find("not a checkpoint") !=
                    std::string::npos);
            QVERIFY(jsonEq(j["side_files"], json::array({at("trainer_state.json")})));
            // The run's broken state, and each checkpoint's optimizer.pt
            // (four bytes of a zip header) that gave no update figures.
            QCOMPARE(j["warnings"].size(), size_t(3));
            const auto warned = [&](const std::string& start) {
                return std::any_of(j["warnings"].begin(), j["warnings"].end(), [&](const json& w) {
                    return w.get<std::string>().find(start) == 0;
                });
            };
            QVERIFY2(warned(at("trainer_state.json") + ": not valid JSON"),
                     j["warnings"].dump().c_str());
            QVERIFY(warned(at("checkpoint-10/optimizer.pt: ")));
            QVERIFY(warned(at("checkpoint-20/optimizer.pt: ")));
            QVERIFY(jsonEq(j["model_config"], json({{"path", at("checkpoint-20/config.json")},
                                                    {"architecture", "GPT2LMHeadModel"},
                                                    {"model_type", "gpt2"},
                                                    {"hidden_size", 8}, // n_embd
                                                    {"vocab_size", 50257}})));
            const Result text = cli({QStringLiteral("timeline"), m_run});
            QVERIFY(text.text().contains(QStringLiteral("trainer_state.json  checkpoint-20")));
            QVERIFY(
                text.text().contains(QStringLiteral("architecture GPT2LMHeadModel; model_type "
                                                    "gpt2; hidden_size 8; vocab_size 50257\n")));
            QVERIFY(text.text().contains(QStringLiteral("Warnings:\n  ")));
            // What the Trainer logged: grad_norm's NaN counted and shown as
            // the last value logged, no extreme; the loss exact, at its step.
            const QString logged =
                text.text().section(QStringLiteral("Logged by the Trainer ("), 1);
            QVERIFY2(logged.startsWith(qstr(at("checkpoint-20/trainer_state.json")) +
                                       QStringLiteral("):\n")),
                     qPrintable(text.text()));
            const QStringList rows = logged.split(QLatin1Char('\n'));
            QVERIFY2(rows.size() > 3, qPrintable(logged));
            QCOMPARE(rows[2].simplified(), QStringLiteral("grad_norm 1 nan at 20 – – 1"));
            QCOMPARE(
                rows[3].simplified(),
                QStringLiteral("loss 1 %1 at 20 %1 at 20 %1 at 20").arg(qstr(fmt::exact(loss[1]))));
        });
    }

    // The Trainer's log in one notation: a learning rate of 5e-4 beside
    // 0.0009666… reads as its neighbours do — here all scientific, as a
    // loss of 2e-05 is (fixed would need five zeros).
    void loggedValuesOneNotationPerColumn() {
        guarded([&] {
            for (int step : {10, 20}) {
                const std::string dir = "checkpoint-" + std::to_string(step);
                QVERIFY(QDir().mkpath(qstr(at(dir))));
                Checkpoint c;
                c.addTensor({"w", {1}, {float(step)}});
                c.save(at(dir + "/model.oxck"));
            }
            testsupport::writeFile(qstr(at("checkpoint-20/trainer_state.json")),
                                   R"({"global_step": 20, "log_history": [
                    {"learning_rate": 0.0005, "loss": 2e-05, "step": 10},
                    {"learning_rate": 0.0009666666666666667, "loss": 3.25, "step": 20}]})");
            const Result r = cli({QStringLiteral("timeline"), m_run, QStringLiteral("--no-cache")});
            QCOMPARE(r.exitCode, 0);
            const QString logged = r.text().section(QStringLiteral("Logged by the Trainer ("), 1);
            const QStringList rows = logged.split(QLatin1Char('\n'));
            QVERIFY2(rows.size() > 3, qPrintable(r.text()));
            QCOMPARE(rows[2].simplified(),
                     QStringLiteral("learning_rate 2 9.666666666666667e-04 at 20 5e-04 at 10 "
                                    "9.666666666666667e-04 at 20"));
            QCOMPARE(rows[3].simplified(),
                     QStringLiteral("loss 2 3.25e+00 at 20 2e-05 at 10 3.25e+00 at 20"));
        });
    }

    void tensorOptionLimitsTensorsAndFirstNonfinite() {
        guarded([&] {
            writeRun();
            const Result r = cli({QStringLiteral("timeline"), m_run, QStringLiteral("--json"),
                                  QStringLiteral("--tensor"), QStringLiteral("a"),
                                  QStringLiteral("--tensor"), QStringLiteral("late")});
            QCOMPARE(r.exitCode, 0);
            const json j = r.parsed();
            QCOMPARE(j["tensors"].size(), size_t(2));
            QCOMPARE(j["tensors"][0]["name"].get<std::string>(), std::string("a"));
            QCOMPARE(j["tensors"][1]["name"].get<std::string>(), std::string("late"));
            QVERIFY(j["first_nonfinite"].is_null()); // the NaN is in "b"
        });
    }

    void cacheAcrossRuns() {
        guarded([&] {
            writeRun();
            const QStringList args = {QStringLiteral("timeline"), m_run, QStringLiteral("--json")};
            const json first = cli(args).parsed();
            QVERIFY(jsonEq(first["cache"], json({{"hits", 0}, {"misses", 3}})));
            const json second = cli(args).parsed();
            QVERIFY(jsonEq(second["cache"], json({{"hits", 3}, {"misses", 0}})));
            QVERIFY(jsonEq(second["tensors"], first["tensors"]));
            // --no-cache: 0 and 0, and nothing written.
            const QString fresh = m_tmp.filePath(QStringLiteral("fresh-cache"));
            const Result off = cli(args + QStringList{QStringLiteral("--no-cache")},
                                   {QStringLiteral("XDG_CACHE_HOME=") + fresh});
            QVERIFY(jsonEq(off.parsed()["cache"], json({{"hits", 0}, {"misses", 0}})));
            QVERIFY(!QFileInfo::exists(fresh));
            // A cap of one byte keeps nothing.
            const QString capped = m_tmp.filePath(QStringLiteral("capped-cache"));
            const QStringList env = {QStringLiteral("XDG_CACHE_HOME=") + capped,
                                     QStringLiteral("CKPTSCOPE_CACHE_MAX_BYTES=1")};
            QCOMPARE(cli(args, env).parsed()["cache"]["misses"].get<int>(), 3);
            QCOMPARE(QDir(capped + QStringLiteral("/ckptscope")).entryList(QDir::Files).size(),
                     qsizetype(0));
            QCOMPARE(cli(args, env).parsed()["cache"]["misses"].get<int>(), 3);
        });
    }

    void gradientRun() {
        guarded([&] {
            for (uint64_t step : {20u, 10u}) {
                ComputationGraphStore graph;
                ComputationNode a("a", "input", {});
                a.outputCid = "x";
                graph.insertNode(a);
                graph.insertNode(ComputationNode("b", "relu", {"x"}));
                graph.addEdge("a", "b");
                GradientCheckpoint g(graph, step);
                g.setOptimizerState("m", {0, 0, 128, 63});
                if (step == 20)
                    g.setOptimizerState("odd", {1, 2, 3});
                g.save(at("g" + std::to_string(step) + ".json"));
            }
            const Result r = cli({QStringLiteral("timeline"), m_run, QStringLiteral("--json")});
            QCOMPARE(r.exitCode, 0);
            const json j = r.parsed();
            QCOMPARE(keys(j),
                     (std::vector<std::string>{"format", "checkpoints", "skipped", "side_files",
                                               "warnings", "model_config", "trainer_history",
                                               "series", "optimizer_state", "cache"}));
            QVERIFY(j["trainer_history"].is_null());
            QCOMPARE(j["format"].get<std::string>(), std::string("gradient"));
            QCOMPARE(j["checkpoints"][0]["step"].get<int>(), 10);
            QCOMPARE(j["checkpoints"][0]["step_source"].get<std::string>(),
                     std::string("gradient"));
            QVERIFY(jsonEq(j["series"]["node_count"], json::array({2, 2})));
            QVERIFY(jsonEq(j["series"]["edge_count"], json::array({1, 1})));
            QVERIFY(jsonEq(j["series"]["forward_done"], json::array({1, 1})));
            QVERIFY(jsonEq(j["series"]["backward_done"], json::array({0, 0})));
            const json& blobs = j["optimizer_state"];
            QCOMPARE(blobs.size(), size_t(2));
            QCOMPARE(blobs[0]["name"].get<std::string>(), std::string("m"));
            QCOMPARE(blobs[0]["series"][0]["bytes"].get<int>(), 4);
            QCOMPARE(blobs[0]["series"][0]["max"].get<double>(), 1.0);
            QCOMPARE(blobs[1]["name"].get<std::string>(), std::string("odd"));
            QVERIFY(blobs[1]["series"][0].is_null());
            QCOMPARE(keys(blobs[1]["series"][1]), std::vector<std::string>{"bytes"});
        });
    }

    void textReport() {
        guarded([&] {
            writeRun();
            const Result r = cli({QStringLiteral("timeline"), m_run});
            QCOMPARE(r.exitCode, 0);
            const QStringList lines = r.text().split(QLatin1Char('\n'));
            auto lineOf = [&](const QString& needle) {
                for (int i = 0; i < lines.size(); ++i)
                    if (lines[i].contains(needle))
                        return i;
                return -1;
            };
            const int l3 = lineOf(QStringLiteral("ckpt_3.oxck")),
                      l2 = lineOf(QStringLiteral("ckpt_2.oxck")),
                      l1 = lineOf(QStringLiteral("ckpt_1.oxck"));
            QVERIFY(l3 >= 0 && l3 < l2 && l2 < l1);
            // Counts and nouns agree: the NaN/Inf column, the findings.
            QVERIFY2(lines[l2].endsWith(QStringLiteral("  1 tensor")), qPrintable(lines[l2]));
            QVERIFY(r.text().contains(
                QStringLiteral("First NaN/Inf: step 200 (ckpt_2.oxck), in 1 tensor: b\n")));
            const int growth = lineOf(QStringLiteral("L2 norm grew most"));
            QVERIFY(growth > 0);
            QVERIFY(lines[growth + 2].trimmed().startsWith(QStringLiteral("a ")));
            QVERIFY(r.text().contains(QStringLiteral("README.txt: ")));
            QVERIFY(r.text().contains(QStringLiteral("Cache: 0 hits, 3 misses")));
            // One checkpoint, now cached.
            const Result one = cli({QStringLiteral("timeline"), qstr(at("ckpt_1.oxck"))});
            QCOMPARE(one.exitCode, 0);
            QVERIFY2(one.text().startsWith(QStringLiteral("1 tensor checkpoint, by step:\n")),
                     qPrintable(one.text()));
            QVERIFY2(one.text().endsWith(QStringLiteral("Cache: 1 hit, 0 misses\n")),
                     qPrintable(one.text()));
        });
    }

    void textEscapesNames() {
        guarded([&] {
            // A name with a tab and a newline, growing: one row in the L2 table.
            const std::string odd = "x\ty\nz";
            for (int step : {1, 2}) {
                Checkpoint c;
                c.setMetadata("step", std::to_string(step));
                c.addTensor({odd, {1}, {float(step)}});
                c.save(at("s" + std::to_string(step) + ".oxck"));
            }
            const Result r = cli({QStringLiteral("timeline"), m_run, QStringLiteral("--no-cache")});
            QCOMPARE(r.exitCode, 0);
            const QStringList lines = r.text().split(QLatin1Char('\n'));
            const int growth = int(lines.indexOf(QStringLiteral(
                "  L2 norm grew most (first → last checkpoint holding the tensor):")));
            QVERIFY2(growth > 0, qPrintable(r.text()));
            QVERIFY2(lines[growth + 2].startsWith(QStringLiteral("    x\\ty\\nz  ")),
                     qPrintable(r.text()));
            QVERIFY2(lines[growth + 3].isEmpty(), qPrintable(r.text()));
        });
    }
};

QTEST_GUILESS_MAIN(TestCliTimeline)
#include "tst_clitimeline.moc"
