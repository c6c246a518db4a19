// Hugging Face Trainer run folders: checkpoint-N folders holding a model
// (one file or one shard set with its index), the step and log from
// trainer_state.json (the folder's own, the run's for what it lacks), every
// side file known by name, pickles, incomplete and mixed shard sets skipped
// in natural order, config.json's facts, bad and oversized trainer states,
// and a sharded model folder read as one checkpoint.
#include "testsupport.h"

#include "ckptscope/common/naturalorder.h"
#include "ckptscope/export/safetensorswriter.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/run/metadatanumber.h"
#include "ckptscope/run/runseries.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

using namespace ckptscope;
using nlohmann::json;
using testsupport::guarded;
using testsupport::qstr;
using testsupport::str;

namespace {

// A safetensors file written by the project's writer (from an OXCK
// checkpoint opened as a Document).
void writeModel(const std::string& path, const std::vector<CheckpointTensor>& tensors) {
    const std::string oxck = path + ".oxck.tmp";
    Checkpoint c;
    for (const CheckpointTensor& t : tensors)
        c.addTensor(t);
    c.save(oxck);
    {
        const auto doc = Document::open(oxck);
        std::ofstream out(path, std::ios::binary);
        writeSafetensors(out, *doc);
    }
    std::filesystem::remove(oxck);
}

// The values the "training" logged at a step, computed here.
double lossAt(uint64_t s) {
    return 4.0 / (1.0 + double(s) / 250.0);
}
double lrAt(uint64_t s) {
    return 5e-5 * (1.0 - double(s) / 2000.0);
}
double gradNormAt(uint64_t s) {
    return s == 200 ? NAN : 0.5 + double(s) * 1e-3; // a NaN, as Python writes it
}
double epochAt(uint64_t s) {
    return double(s) / 400.0;
}
double evalLossAt(uint64_t s) {
    return lossAt(s) + 0.125;
}
bool evaluatedAt(uint64_t s) {
    return s % 500 == 0 || s == 200;
}

// trainer_state.json as the Trainer writes it (keys sorted, NaN bare): a
// training entry every 50 steps up to `globalStep`, an evaluation entry
// where evaluatedAt (unless `withEval` is false), and a final summary entry.
std::string trainerState(uint64_t globalStep, bool withEval = true) {
    json history = json::array();
    for (uint64_t s = 50; s <= globalStep; s += 50) {
        const double g = gradNormAt(s);
        history.push_back({{"epoch", epochAt(s)},
                           {"grad_norm", std::isnan(g) ? json("__NaN__") : json(g)},
                           {"learning_rate", lrAt(s)},
                           {"loss", lossAt(s)},
                           {"step", s}});
        if (withEval && evaluatedAt(s))
            history.push_back({{"epoch", epochAt(s)},
                               {"eval_loss", evalLossAt(s)},
                               {"eval_runtime", 1.5},
                               {"eval_samples_per_second", 200.25},
                               {"step", s}});
    }
    history.push_back({{"epoch", epochAt(globalStep)},
                       {"step", globalStep},
                       {"total_flos", 1.0e15},
                       {"train_loss", 2.0},
                       {"train_runtime", 99.5}});
    const json state = {{"best_metric", nullptr},
                        {"epoch", epochAt(globalStep)},
                        {"eval_steps", 500},
                        {"global_step", globalStep},
                        {"is_world_process_zero", true},
                        {"log_history", history},
                        {"logging_steps", 50},
                        {"max_steps", 2000},
                        {"trial_name", nullptr}};
    std::string text = state.dump(2);
    for (size_t at; (at = text.find("\"__NaN__\"")) != std::string::npos;)
        text.replace(at, 9, "NaN");
    return text;
}

const json kConfig = {{"architectures", {"LlamaForCausalLM"}},
                      {"hidden_size", 64},
                      {"model_type", "llama"},
                      {"num_attention_heads", 8},
                      {"num_hidden_layers", 2},
                      {"num_key_value_heads", 4},
                      {"torch_dtype", "bfloat16"},
                      {"vocab_size", 32000}};

// Every side file the Trainer (and a tokenizer) writes into a checkpoint.
const std::vector<std::string> kSideFiles = {
    "config.json",      "generation_config.json",  "optimizer.pt",
    "rng_state.pth",    "rng_state_0.pth",         "rng_state_1.pth",
    "scheduler.pt",     "special_tokens_map.json", "tokenizer.json",
    "tokenizer.model",  "tokenizer_config.json",   "trainer_state.json",
    "training_args.bin"};

// The run's warnings but those about the placeholder optimizer.pt files
// (not torch.save files: each is warned of, its update figures missing),
// which are checked to be one per checkpoint holding one.
std::vector<std::string> otherWarnings(const Run& run) {
    std::vector<std::string> other;
    size_t optimizers = 0, holding = 0;
    for (const std::string& w : run.warnings)
        (w.find("/optimizer.pt: ") != std::string::npos ? (void)++optimizers : other.push_back(w));
    for (const RunCheckpoint& c : run.checkpoints)
        for (const std::string& f : c.sideFiles)
            holding += std::filesystem::path(f).filename() == "optimizer.pt";
    if (optimizers != holding)
        other.push_back("expected one warning per placeholder optimizer.pt");
    return other;
}

std::vector<std::string> baseNames(const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const std::string& p : paths)
        out.push_back(std::filesystem::path(p).filename().string());
    return out;
}

const MetadataSeries* seriesOf(const std::vector<MetadataSeries>& all, const std::string& key) {
    for (const MetadataSeries& m : all)
        if (m.key == key)
            return &m;
    return nullptr;
}

} // namespace

class TestTrainerFiles : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_run; // a fresh folder per test

    std::string at(const std::string& name) const { return str(m_run) + "/" + name; }
    void put(const std::string& name, const std::string& bytes) const {
        QVERIFY(QDir().mkpath(QFileInfo(qstr(at(name))).absolutePath()));
        testsupport::writeFile(qstr(at(name)), bytes);
    }
    RunOptions options() const {
        RunOptions o;
        o.cacheDir = str(m_run) + "-cache";
        return o;
    }

    // checkpoint-N with a model.safetensors, every side file and its own
    // trainer_state.json.
    void trainerCheckpoint(uint64_t step, bool withEval = true) {
        const std::string dir = "checkpoint-" + std::to_string(step) + "/";
        QVERIFY(QDir().mkpath(qstr(at(dir))));
        writeModel(at(dir + "model.safetensors"), {{"w", {2}, {float(step), -1.0f}}});
        for (const std::string& side : kSideFiles)
            put(dir + side, "PK\x03\x04 not read");
        put(dir + "config.json", kConfig.dump(2));
        put(dir + "trainer_state.json", trainerState(step, withEval));
    }

private Q_SLOTS:
    void init() {
        m_run = m_tmp.filePath(QString::fromLatin1(QTest::currentTestFunction()));
        QVERIFY(QDir().mkpath(m_run));
    }

    void namesDecideBeforeAnyProbe() {
        for (const std::string& side : kSideFiles)
            QVERIFY2(runFileRole(side) == RunFileRole::SideFile, side.c_str());
        for (const char* side : {"model.safetensors.index.json", "rng_state_7.pth",
                                 "tokenizer.vocab", "pytorch_model.bin.index.json"})
            QVERIFY2(runFileRole(side) == RunFileRole::SideFile, side);
        for (const char* pickle : {"pytorch_model.bin", "pytorch_model-00001-of-00002.bin"})
            QVERIFY2(runFileRole(pickle) == RunFileRole::PytorchPickle, pickle);
        for (const char* probe :
             {"model.safetensors", "model-00001-of-00002.safetensors", "step_10.oxck",
              "optimizer.pt.bak", "my_config.json", "rng_state.pth.tmp"})
            QVERIFY2(runFileRole(probe) == RunFileRole::Probe, probe);
        QVERIFY(isTrainerLogKey("loss") && isTrainerLogKey("eval_loss") &&
                isTrainerLogKey("epoch") && isTrainerLogKey("grad_norm") &&
                isTrainerLogKey("learning_rate"));
        QVERIFY(!isTrainerLogKey("step") && !isTrainerLogKey("train_loss") &&
                !isTrainerLogKey("eval_") && !isTrainerLogKey("total_flos"));
    }

    void naturalOrderOfNames() {
        QVERIFY(naturalLess("checkpoint-200", "checkpoint-1000"));
        QVERIFY(!naturalLess("checkpoint-1000", "checkpoint-200"));
        QVERIFY(naturalLess("a/checkpoint-300/x", "a/checkpoint-1000/x"));
        QVERIFY(naturalLess("step_007", "step_10"));
        QVERIFY(naturalLess("B1", "b2"));                              // case aside
        QVERIFY(naturalLess("x01", "x1") != naturalLess("x1", "x01")); // total
        QVERIFY(!naturalLess("same", "same"));
    }

    void trainerStateReadsStepAndLog() {
        guarded([&] {
            put("trainer_state.json", trainerState(1000));
            const TrainerState own = readTrainerState(at("trainer_state.json"));
            QCOMPARE(own.globalStep, std::optional<uint64_t>(1000));
            QCOMPARE(own.logAt.size(), size_t(1)); // only its own step is kept
            std::map<std::string, double> log(own.logAt.at(1000).begin(), own.logAt.at(1000).end());
            QCOMPARE(log.size(), size_t(7)); // train_loss, total_flos, … are no log keys
            QCOMPARE(log.at("loss"), lossAt(1000));
            QCOMPARE(log.at("learning_rate"), lrAt(1000));
            QCOMPARE(log.at("grad_norm"), gradNormAt(1000));
            QCOMPARE(log.at("epoch"), epochAt(1000));
            QCOMPARE(log.at("eval_loss"), evalLossAt(1000));
            QCOMPARE(log.at("eval_runtime"), 1.5);
            QCOMPARE(log.at("eval_samples_per_second"), 200.25);
            const std::set<uint64_t> steps = {200, 350, 9999};
            const auto some =
                logsAt(readTrainerState(at("trainer_state.json"), true).history, steps);
            QCOMPARE(some.size(), size_t(2)); // 9999 was never logged
            std::map<std::string, double> at200(some.at(200).begin(), some.at(200).end());
            QVERIFY(std::isnan(at200.at("grad_norm"))); // written bare: NaN
            QCOMPARE(at200.at("eval_loss"), evalLossAt(200));
            QVERIFY(own.history.empty()); // not asked for
            // The history: every value of each log key, in the file's order.
            const TrainerState all = readTrainerState(at("trainer_state.json"), true);
            QCOMPARE(all.logAt.size(), size_t(1));
            std::set<std::string> keys;
            for (const auto& [key, values] : all.history)
                keys.insert(key);
            QCOMPARE(keys, (std::set<std::string>{"epoch", "eval_loss", "eval_runtime",
                                                  "eval_samples_per_second", "grad_norm",
                                                  "learning_rate", "loss"}));
            const auto& loss = all.history.at("loss");
            QCOMPARE(loss.size(), size_t(20)); // every 50 steps to 1000
            for (size_t i = 0; i < loss.size(); ++i) {
                QCOMPARE(loss[i].first, uint64_t(50 * (i + 1)));
                QCOMPARE(loss[i].second, lossAt(loss[i].first));
            }
            QVERIFY(std::isnan(all.history.at("grad_norm")[3].second)); // step 200
            std::vector<uint64_t> evaluated;
            for (const auto& [step, v] : all.history.at("eval_loss")) {
                evaluated.push_back(step);
                QCOMPARE(v, evalLossAt(step));
            }
            QCOMPARE(evaluated, (std::vector<uint64_t>{200, 500, 1000}));
            // The closing entry's epoch too: logged at 1000 twice, both kept.
            QCOMPARE(all.history.at("epoch").size(), size_t(20 + 3 + 1));
            // Infinity, and the words inside strings left alone.
            put("inf.json", "{\"global_step\": 3, \"note\": \"NaN Infinity\", \"log_history\": "
                            "[{\"loss\": Infinity, \"eval_x\": -Infinity, \"step\": 3}]}");
            const TrainerState inf = readTrainerState(at("inf.json"));
            std::map<std::string, double> at3(inf.logAt.at(3).begin(), inf.logAt.at(3).end());
            QCOMPARE(at3.size(), size_t(2));
            QCOMPARE(at3.at("loss"), double(INFINITY));
            QCOMPARE(at3.at("eval_x"), -double(INFINITY));
        });
    }

    void badTrainerStateIsAWarning() {
        guarded([&] {
            put("bad.json", "{\"global_step\": 12, \"log_history\": [");
            put("negative.json", "{\"global_step\": -4}");
            put("list.json", "[1, 2]");
            const std::pair<const char*, const char*> cases[] = {
                {"bad.json", "not valid JSON"},
                {"negative.json", "global_step is not a whole number"},
                {"list.json", "not a JSON object"}};
            for (const auto& [name, problem] : cases) {
                try {
                    readTrainerState(at(name));
                    QFAIL(name);
                } catch (const OpenError& e) {
                    const std::string what = e.what();
                    QVERIFY2(what.find(at(name) + ": ") == 0, e.what());
                    QVERIFY2(what.find(problem) != std::string::npos, e.what());
                }
            }
        });
    }

    void trainerRunFolder() {
        guarded([&] {
            for (uint64_t step : {100, 200})
                trainerCheckpoint(step);
            trainerCheckpoint(1000, false); // its evaluation only in the run's state
            put("checkpoint-100/pytorch_model.bin", "PK\x03\x04 a pickle");
            put("checkpoint-1000/pytorch_model-00001-of-00002.bin", "PK\x03\x04 a pickle");
            // A sharded model with its index; its own trainer state is broken.
            QVERIFY(QDir().mkpath(qstr(at("checkpoint-1500"))));
            writeModel(at("checkpoint-1500/model-00002-of-00002.safetensors"),
                       {{"b", {1}, {2.0f}}});
            writeModel(at("checkpoint-1500/model-00001-of-00002.safetensors"),
                       {{"a", {1}, {1.0f}}});
            put("checkpoint-1500/model.safetensors.index.json",
                R"({"metadata":{},"weight_map":{"a":"model-00001-of-00002.safetensors",)"
                R"("b":"model-00002-of-00002.safetensors"}})");
            put("checkpoint-1500/trainer_state.json", "{\"global_step\": 1500, \"log_hi");
            json config1500 = kConfig;
            config1500["hidden_size"] = 128;
            put("checkpoint-1500/config.json", config1500.dump());
            // Shard 1 of 2 alone; shards of two different sets.
            QVERIFY(QDir().mkpath(qstr(at("checkpoint-300"))));
            writeModel(at("checkpoint-300/model-00001-of-00002.safetensors"), {{"a", {1}, {1}}});
            QVERIFY(QDir().mkpath(qstr(at("checkpoint-2000"))));
            writeModel(at("checkpoint-2000/model-00001-of-00002.safetensors"), {{"a", {1}, {1}}});
            writeModel(at("checkpoint-2000/model-00002-of-00003.safetensors"), {{"b", {1}, {1}}});
            // The run folder: the whole history, config.json, a flat incomplete set.
            put("trainer_state.json", trainerState(1500));
            put("config.json", kConfig.dump());
            writeModel(at("w-00001-of-00003.safetensors"), {{"a", {1}, {1}}});

            const Run run = readRun({str(m_run)}, options());
            QCOMPARE(run.kind, std::optional<RunKind>(RunKind::Tensors));
            const std::vector<uint64_t> steps = {100, 200, 1000, 1500};
            QCOMPARE(run.checkpoints.size(), steps.size());
            for (size_t c = 0; c < steps.size(); ++c) {
                const RunCheckpoint& cp = run.checkpoints[c];
                QCOMPARE(cp.name, "checkpoint-" + std::to_string(steps[c]));
                QCOMPARE(cp.step, std::optional<uint64_t>(steps[c]));
                // checkpoint-1500's own state is broken: its step is its name's.
                QCOMPARE(cp.stepSource,
                         steps[c] == 1500 ? StepSource::FileName : StepSource::TrainerState);
            }
            QCOMPARE(std::string(stepSourceName(StepSource::TrainerState)), "trainer_state.json");
            for (size_t c = 0; c < 3; ++c) {
                // A pickled model beside model.safetensors is a side file, as
                // transformers reads the safetensors one.
                std::vector<std::string> side = kSideFiles;
                if (c != 1)
                    side.push_back(c == 0 ? "pytorch_model.bin"
                                          : "pytorch_model-00001-of-00002.bin");
                std::sort(side.begin(), side.end());
                std::vector<std::string> got = baseNames(run.checkpoints[c].sideFiles);
                std::sort(got.begin(), got.end());
                QCOMPARE(got, side);
                QCOMPARE(run.checkpoints[c].files.size(), size_t(1));
                QCOMPARE(run.checkpoints[c].summary.tensors[0].stats.max, double(steps[c]));
            }
            const RunCheckpoint& sharded = run.checkpoints[3];
            QCOMPARE(baseNames(sharded.files),
                     (std::vector<std::string>{"model-00001-of-00002.safetensors",
                                               "model-00002-of-00002.safetensors"}));
            QCOMPARE(sharded.summary.tensors.size(), size_t(2));
            QCOMPARE(sharded.index, at("checkpoint-1500/model.safetensors.index.json"));
            QCOMPARE(sharded.openPath(), sharded.index);
            // What a window opens for it is the whole model.
            QCOMPARE(Document::open(sharded.openPath())->tensors().size(), size_t(2));
            QCOMPARE(baseNames(sharded.sideFiles),
                     (std::vector<std::string>{"config.json", "model.safetensors.index.json",
                                               "trainer_state.json"}));
            QCOMPARE(baseNames(run.sideFiles),
                     (std::vector<std::string>{"config.json", "trainer_state.json"}));

            // The log: each checkpoint's own, the run's for what it lacks.
            const auto meta = metadataSeries(run);
            auto expect = [&](const std::string& key, double (*value)(uint64_t),
                              bool (*present)(uint64_t)) {
                const MetadataSeries* m = seriesOf(meta, key);
                QVERIFY2(m, key.c_str());
                QVERIFY2(m->numbers, key.c_str());
                for (size_t c = 0; c < steps.size(); ++c) {
                    const auto& v = m->values[c];
                    QCOMPARE(v.has_value(), present(steps[c]));
                    if (!v)
                        continue;
                    const double x = *metadataNumber(*v), want = value(steps[c]);
                    QVERIFY2(std::isnan(want) ? std::isnan(x) : x == want,
                             (key + " at " + std::to_string(steps[c]) + ": " + *v).c_str());
                }
            };
            auto always = [](uint64_t) { return true; };
            expect("loss", lossAt, always);
            expect("learning_rate", lrAt, always);
            expect("grad_norm", gradNormAt, always);
            expect("epoch", epochAt, always);
            expect("eval_loss", evalLossAt, evaluatedAt); // 1000's from the run's state
            QVERIFY(seriesOf(meta, "eval_runtime"));
            for (const char* notLogged : {"step", "train_loss", "total_flos", "global_step"})
                QVERIFY2(!seriesOf(meta, notLogged), notLogged);

            // The history: the run folder's state, at 1500 further on than the
            // latest checkpoint's readable one (1000).
            QCOMPARE(run.trainerHistoryFile, at("trainer_state.json"));
            QCOMPARE(run.trainerHistory.at("loss").size(), size_t(30));
            QCOMPARE(run.trainerHistory.at("loss").back(),
                     (std::pair<uint64_t, double>(1500, lossAt(1500))));

            // config.json of the latest checkpoint.
            QVERIFY(run.modelConfig);
            QCOMPARE(run.modelConfig->path, at("checkpoint-1500/config.json"));
            QCOMPARE(run.modelConfig->architecture,
                     std::optional<std::string>(config1500["architectures"][0]));
            QCOMPARE(run.modelConfig->hiddenSize,
                     std::optional<uint64_t>(config1500["hidden_size"].get<uint64_t>()));
            QCOMPARE(run.modelConfig->numKeyValueHeads,
                     std::optional<uint64_t>(config1500["num_key_value_heads"].get<uint64_t>()));
            QCOMPARE(run.modelConfig->torchDtype,
                     std::optional<std::string>(config1500["torch_dtype"]));
            QCOMPARE(run.modelConfig->rows().size(), size_t(8));
            QCOMPARE(run.modelConfig->rows().front().first, std::string("architecture"));

            // The broken state is a warning naming it; the checkpoint stays.
            const std::vector<std::string> warnings = otherWarnings(run);
            QCOMPARE(warnings.size(), size_t(1));
            QVERIFY2(warnings[0].find(at("checkpoint-1500/trainer_state.json") +
                                      ": not valid JSON") == 0,
                     warnings[0].c_str());

            // Skipped, in natural order (checkpoint-300 before checkpoint-1000).
            const std::vector<std::pair<std::string, std::string>> skipped = {
                {"checkpoint-300/model-00001-of-00002.safetensors",
                 "incomplete set of shards: 1 of 2 found"},
                {"checkpoint-2000/model-00001-of-00002.safetensors", "mixed shard sets"},
                {"w-00001-of-00003.safetensors", "incomplete set of shards: 1 of 3 found"}};
            QCOMPARE(run.skipped.size(), skipped.size());
            for (size_t i = 0; i < skipped.size(); ++i) {
                QCOMPARE(run.skipped[i].path, at(skipped[i].first));
                QVERIFY2(run.skipped[i].reason.find(skipped[i].second) == 0,
                         run.skipped[i].reason.c_str());
            }
        });
    }

    // A run still training has no state of its own yet, or one left by an
    // earlier run: the latest checkpoint's history is then the one further
    // on; on a tie the run folder's (the Trainer's last word) is kept.
    void historyFromTheStateFurthestOn() {
        guarded([&] {
            for (uint64_t step : {100, 200})
                trainerCheckpoint(step);
            put("trainer_state.json", trainerState(150));
            Run run = readRun({str(m_run)}, options());
            QCOMPARE(run.trainerHistoryFile, at("checkpoint-200/trainer_state.json"));
            QCOMPARE(run.trainerHistory.at("loss").size(), size_t(4)); // 50 … 200
            put("trainer_state.json", trainerState(200));
            run = readRun({str(m_run)}, options());
            QCOMPARE(run.trainerHistoryFile, at("trainer_state.json"));
            QFile::remove(qstr(at("trainer_state.json")));
            run = readRun({str(m_run)}, options());
            QCOMPARE(run.trainerHistoryFile, at("checkpoint-200/trainer_state.json"));
            QVERIFY(otherWarnings(run).empty());
        });
    }

    // The Trainer's output folder: checkpoint folders, and the final model
    // saved beside the run's trainer_state.json (save_model, save_state).
    // That model has no step of its own: it takes the state's global_step
    // and the log at it, so the run stays on an axis of steps.
    void finalModelTakesTheRunStateStep() {
        guarded([&] {
            for (uint64_t step : {100, 200})
                trainerCheckpoint(step);
            writeModel(at("model.safetensors"), {{"w", {2}, {250.0f, -1.0f}}});
            put("trainer_state.json", trainerState(250));
            const Run run = readRun({str(m_run)}, options());
            QCOMPARE(run.checkpoints.size(), size_t(3));
            const RunCheckpoint& final = run.checkpoints.back();
            QCOMPARE(final.name, std::string("model.safetensors"));
            QCOMPARE(final.step, std::optional<uint64_t>(250));
            QCOMPARE(final.stepSource, StepSource::TrainerState);
            std::map<std::string, double> log(final.trainerLog.begin(), final.trainerLog.end());
            QCOMPARE(log.at("loss"), lossAt(250));
            QCOMPARE(log.at("learning_rate"), lrAt(250));
            QVERIFY(otherWarnings(run).empty());
            // A checkpoint folder opened itself: its model, the state beside it.
            const Run one = readRun({at("checkpoint-200")}, options());
            QCOMPARE(one.checkpoints.size(), size_t(1));
            QCOMPARE(one.checkpoints[0].step, std::optional<uint64_t>(200));
            QCOMPARE(one.checkpoints[0].stepSource, StepSource::TrainerState);
            // Two models beside the state: which one it is of is not known.
            writeModel(at("other.safetensors"), {{"w", {2}, {1.0f, 2.0f}}});
            const Run two = readRun({str(m_run)}, options());
            QCOMPARE(two.checkpoints.size(), size_t(4));
            for (const RunCheckpoint& cp : two.checkpoints)
                if (cp.name != "checkpoint-100" && cp.name != "checkpoint-200")
                    QVERIFY2(!cp.step, cp.name.c_str());
        });
    }

    void oversizedTrainerStateIsAWarning() {
        guarded([&] {
            QVERIFY(QDir().mkpath(qstr(at("checkpoint-5"))));
            writeModel(at("checkpoint-5/model.safetensors"), {{"w", {1}, {1}}});
            QFile big(qstr(at("checkpoint-5/trainer_state.json")));
            QVERIFY(big.open(QIODevice::WriteOnly));
            QVERIFY(big.resize(qint64(kTrainerStateMaxBytes) + 1)); // sparse: never read
            big.close();
            // A checkpoint folder given itself is one checkpoint.
            for (const std::string& path : {str(m_run), at("checkpoint-5"), at("checkpoint-5/")}) {
                const Run run = readRun({path}, options());
                QCOMPARE(run.checkpoints.size(), size_t(1));
                QCOMPARE(run.checkpoints[0].name, std::string("checkpoint-5"));
                QCOMPARE(run.checkpoints[0].step, std::optional<uint64_t>(5));
                QCOMPARE(run.checkpoints[0].stepSource, StepSource::FileName);
                QCOMPARE(run.warnings.size(), size_t(1));
                QVERIFY2(run.warnings[0].find("trainer_state.json: too large") != std::string::npos,
                         run.warnings[0].c_str());
                QVERIFY(run.skipped.empty());
            }
        });
    }

    // A shard set is read as info reads it (issue 38 item 3): an index that
    // places a tensor in a shard not holding it refuses the checkpoint with
    // info's words; a tensor in two shards is counted once, from the shard
    // the index names.
    void shardSetReadAsInfoReadsIt() {
        guarded([&] {
            QVERIFY(QDir().mkpath(qstr(at("checkpoint-10"))));
            writeModel(at("checkpoint-10/model-00001-of-00002.safetensors"), {{"a", {1}, {1}}});
            writeModel(at("checkpoint-10/model-00002-of-00002.safetensors"), {{"c", {1}, {3}}});
            put("checkpoint-10/model.safetensors.index.json",
                R"({"weight_map":{"a":"model-00001-of-00002.safetensors",)"
                R"("b":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors"}})");
            QVERIFY(QDir().mkpath(qstr(at("checkpoint-20"))));
            writeModel(at("checkpoint-20/model-00001-of-00002.safetensors"), {{"a", {1}, {1}}});
            writeModel(at("checkpoint-20/model-00002-of-00002.safetensors"),
                       {{"a", {1}, {9}}, {"b", {1}, {2}}});
            put("checkpoint-20/model.safetensors.index.json",
                R"({"weight_map":{"a":"model-00001-of-00002.safetensors",)"
                R"("b":"model-00002-of-00002.safetensors"}})");
            const Run run = readRun({str(m_run)}, options());
            QCOMPARE(run.checkpoints.size(), size_t(1));
            const RunCheckpoint& cp = run.checkpoints[0];
            QCOMPARE(cp.name, std::string("checkpoint-20"));
            std::vector<std::string> names;
            for (const TensorSummary& t : cp.summary.tensors)
                names.push_back(t.name);
            std::sort(names.begin(), names.end());
            QCOMPARE(names, (std::vector<std::string>{"a", "b"}));
            for (const TensorSummary& t : cp.summary.tensors)
                if (t.name == "a")
                    QCOMPARE(t.stats.max, 1.0); // shard 1's, as the index says
            QCOMPARE(run.skipped.size(), size_t(1));
            QCOMPARE(run.skipped[0].path, at("checkpoint-10"));
            // Without an index (a loose set), the first shard's copy stays,
            // as info keeps it.
            QVERIFY(QFile::remove(qstr(at("checkpoint-20/model.safetensors.index.json"))));
            const Run loose = readRun({at("checkpoint-20")}, options());
            QCOMPARE(loose.checkpoints.size(), size_t(1));
            QCOMPARE(loose.checkpoints[0].summary.tensors.size(), size_t(2));
            QVERIFY2(run.skipped[0].reason.find("is not in its shard") != std::string::npos,
                     run.skipped[0].reason.c_str());
        });
    }

    // Trainer model files given one by one (issue 38 item 4): each takes its
    // checkpoint folder's step, they are ordered by it, and each is named by
    // the shortest path that tells it from the others.
    void trainerFilesGivenOneByOne() {
        guarded([&] {
            for (uint64_t step : {50, 100, 150})
                trainerCheckpoint(step);
            const Run run = readRun({at("checkpoint-100/model.safetensors"),
                                     at("checkpoint-150/model.safetensors"),
                                     at("checkpoint-50/model.safetensors")},
                                    options());
            QCOMPARE(run.checkpoints.size(), size_t(3));
            const std::vector<uint64_t> steps = {50, 100, 150};
            for (size_t i = 0; i < 3; ++i) {
                const RunCheckpoint& cp = run.checkpoints[i];
                QCOMPARE(cp.step, std::optional<uint64_t>(steps[i]));
                QCOMPARE(cp.stepSource, StepSource::TrainerState);
                QCOMPARE(cp.name, "checkpoint-" + std::to_string(steps[i]) + "/model.safetensors");
            }
        });
    }

    void shardedModelFolderIsOneCheckpoint() {
        guarded([&] {
            writeModel(at("model-00001-of-00003.safetensors"), {{"a", {1}, {1}}});
            writeModel(at("model-00002-of-00003.safetensors"), {{"b", {1}, {2}}});
            writeModel(at("model-00003-of-00003.safetensors"), {{"c", {1}, {3}}});
            put("model.safetensors.index.json", R"({"metadata":{},"weight_map":{}})");
            put("config.json", kConfig.dump());
            const Run run = readRun({str(m_run)}, options());
            QCOMPARE(run.checkpoints.size(), size_t(1));
            QCOMPARE(run.checkpoints[0].files.size(), size_t(3));
            QCOMPARE(run.checkpoints[0].summary.tensors.size(), size_t(3));
            QVERIFY(run.skipped.empty());
            QCOMPARE(baseNames(run.sideFiles),
                     (std::vector<std::string>{"config.json", "model.safetensors.index.json"}));
            QCOMPARE(run.checkpoints[0].openPath(), at("model.safetensors.index.json"));
            QVERIFY(run.modelConfig);
            QCOMPARE(run.modelConfig->modelType, std::optional<std::string>("llama"));
        });
    }

    void badConfigIsAWarning() {
        guarded([&] {
            QVERIFY(QDir().mkpath(qstr(at("checkpoint-1"))));
            writeModel(at("checkpoint-1/model.safetensors"), {{"w", {1}, {1}}});
            put("checkpoint-1/config.json", "{\"architectures\": [\"X\"],");
            const Run run = readRun({str(m_run)}, options());
            QCOMPARE(run.checkpoints.size(), size_t(1));
            QVERIFY(!run.modelConfig);
            QCOMPARE(run.warnings.size(), size_t(1));
            QVERIFY2(run.warnings[0].find(at("checkpoint-1/config.json") + ": not valid JSON") == 0,
                     run.warnings[0].c_str());
            // Beside a model file, for a model's Overview: read, or nothing.
            QVERIFY(!modelConfigBeside(at("checkpoint-1/model.safetensors")));
            put("checkpoint-1/config.json", kConfig.dump());
            const auto beside = modelConfigBeside(at("checkpoint-1/model.safetensors"));
            QVERIFY(beside);
            QCOMPARE(beside->vocabSize,
                     std::optional<uint64_t>(kConfig["vocab_size"].get<uint64_t>()));
        });
    }
};

QTEST_MAIN(TestTrainerFiles)
#include "tst_trainerfiles.moc"
