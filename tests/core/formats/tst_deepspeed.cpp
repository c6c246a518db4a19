// DeepSpeed ZeRO folders as one model: folders the tests write (stages 1, 2 and
// 3; 1, 2, 3 and 8 ranks; parameters split unevenly, two groups) give back
// every master weight and moment exactly; the corpus's folder (written by
// DeepSpeed) gives its partition's slices; damaged sets are refused naming
// the file; the optimizer's figures of a DeepSpeed folder equal the formula.
#include "deepspeedfixture.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/export/converter.h"
#include "ckptscope/formats/openerror.h"
#include "ckptscope/optimizer/parameterupdate.h"

#include <fstream>

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>

using namespace ckptscope;
using testsupport::DeepSpeedFixture;
using testsupport::openError;

namespace {

std::vector<float> valuesOf(const Document& doc, const std::string& name) {
    for (size_t i = 0; i < doc.tensors().size(); ++i)
        if (doc.tensors()[i].name == name) {
            std::vector<float> v(doc.tensors()[i].dataLen);
            doc.readValues(i, 0, v.size(), v.data());
            return v;
        }
    return {};
}

const std::vector<std::vector<std::vector<uint64_t>>> kShapes = {
    {{5, 3}, {7}, {4, 4}}, {{3}, {2, 5}}}; // two groups; sizes that split unevenly

} // namespace

class TestDeepSpeed : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void logicalTensorsEqualWhatWasWritten_data() {
        QTest::addColumn<int>("stage");
        QTest::addColumn<int>("world");
        for (int stage : {1, 2, 3})
            for (int world : {1, 2, 3, 8})
                QTest::addRow("stage %d, %d ranks", stage, world) << stage << world;
    }
    void logicalTensorsEqualWhatWasWritten() {
        QFETCH(int, stage);
        QFETCH(int, world);
        const DeepSpeedFixture f = DeepSpeedFixture::make(stage, uint64_t(world), kShapes);
        QTemporaryDir dir;
        f.write(dir.path().toStdString());
        // By the folder holding `latest`, and by the step folder.
        for (const std::string& path :
             {dir.path().toStdString(), f.stepFolder(dir.path().toStdString())}) {
            const auto doc = Document::open(path);
            QCOMPARE(doc->formatModule().name, "deepspeed");
            for (const auto& p : f.params) {
                QCOMPARE(valuesOf(*doc, "fp32." + p.name), p.w);
                QCOMPARE(valuesOf(*doc, "exp_avg." + p.name), p.m);
                QCOMPARE(valuesOf(*doc, "exp_avg_sq." + p.name), p.v);
                // Stage 3's module holds placeholders.
                QCOMPARE(valuesOf(*doc, "module." + p.name).size(),
                         stage == 3 ? size_t(0) : p.w.size());
            }
            // Each moment names its parameter, as an optimizer.pt's do.
            for (size_t i = 0; i < doc->tensors().size(); ++i)
                if (doc->tensors()[i].name.starts_with("exp_avg"))
                    QVERIFY(!doc->traits()[i].parameter.empty());
        }
    }

    // A tied parameter (shared_params) is written under both names.
    void sharedParameterUnderBothNames() {
        DeepSpeedFixture f = DeepSpeedFixture::make(2, 2, kShapes);
        f.shared = {{"head.weight", f.params[0].name}};
        QTemporaryDir dir;
        f.write(dir.path().toStdString());
        const auto doc = Document::open(dir.path().toStdString());
        QCOMPARE(valuesOf(*doc, "fp32.head.weight"), f.params[0].w);
    }

    // DeepSpeed's own folder (one rank, stage 2): each master weight is its
    // slice of the flat partition, in param_shapes order; the tied lm_head
    // the embedding's.
    void corpusFolder() {
        REQUIRE_CONFORMANCE();
        const std::string folder =
            testsupport::corpus(QStringLiteral("pytorch/valid/deepspeed")).toStdString();
        const auto doc = Document::open(folder);
        const auto rank =
            Document::open(folder + "/global_step10/zero_pp_rank_0_mp_rank_00_optim_states.pt");
        const std::vector<float> flat =
            valuesOf(*rank, "optimizer_state_dict.single_partition_of_fp32_groups.0");
        QCOMPARE(flat.size(), size_t(3120));
        size_t at = 0, seen = 0;
        for (size_t i = 0; i < doc->tensors().size(); ++i) {
            const TensorEntry& t = doc->tensors()[i];
            if (!t.name.starts_with("fp32.") || t.name == "fp32.lm_head.weight")
                continue;
            const std::vector<float> v = valuesOf(*doc, t.name);
            QCOMPARE(
                v, std::vector<float>(flat.begin() + long(at), flat.begin() + long(at + v.size())));
            at += v.size();
            ++seen;
        }
        QCOMPARE(seen, size_t(11));
        QCOMPARE(at, flat.size());
        QCOMPARE(valuesOf(*doc, "fp32.lm_head.weight"),
                 valuesOf(*doc, "fp32.model.embed_tokens.weight"));
    }

    void damagedSetsAreRefused() {
        namespace fs = std::filesystem;
        const DeepSpeedFixture f = DeepSpeedFixture::make(2, 3, kShapes);
        { // a rank's file missing: never a smaller model
            QTemporaryDir dir;
            f.write(dir.path().toStdString());
            fs::remove(f.rankFile(dir.path().toStdString(), 1));
            const std::string e = openError(dir.path().toStdString());
            QVERIFY2(e.find("rank 1 is missing") != std::string::npos, e.c_str());
        }
        { // the last rank's file missing: partition_count says more
            QTemporaryDir dir;
            f.write(dir.path().toStdString());
            fs::remove(f.rankFile(dir.path().toStdString(), 2));
            const std::string e = openError(dir.path().toStdString());
            QVERIFY2(e.find("partition_count says 3 ranks, but 2 rank files are here") !=
                         std::string::npos,
                     e.c_str());
        }
        { // `latest` naming a folder outside, or none
            for (const char* tag : {"../elsewhere", "/tmp", "global_step99"}) {
                QTemporaryDir dir;
                f.write(dir.path().toStdString());
                std::ofstream(dir.filePath(QStringLiteral("latest")).toStdString()) << tag;
                const std::string e = openError(dir.path().toStdString());
                QVERIFY2(e.find("latest") != std::string::npos && e.find(tag) != std::string::npos,
                         e.c_str());
            }
        }
        { // tensor parallelism: refused by name
            QTemporaryDir dir;
            f.write(dir.path().toStdString());
            std::ofstream(f.stepFolder(dir.path().toStdString()) + "/mp_rank_01_model_states.pt")
                << "x";
            const std::string e = openError(dir.path().toStdString());
            QVERIFY2(e.find("tensor parallelism is not read: found mp_rank_01_model_states.pt") !=
                         std::string::npos,
                     e.c_str());
        }
    }

    // convert DIR model.safetensors: the master weights under the parameters'
    // names (a tied one under both), nothing else; as one file and as shards.
    void convertWritesTheMasterWeights() {
        DeepSpeedFixture f = DeepSpeedFixture::make(3, 3, kShapes);
        f.shared = {{"head.weight", f.params[1].name}};
        f.buffers = {{"norm.running_mean", {0.5f, -1.25f, 3.f}}};
        QTemporaryDir dir;
        f.write(dir.path().toStdString());
        const auto doc = Document::open(dir.path().toStdString());
        const std::string one = dir.filePath(QStringLiteral("model.safetensors")).toStdString();
        const std::vector<std::string> warnings =
            convertDocument(*doc, ConvertTarget::Safetensors, one);
        QVERIFY(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
            return w.find("left out") != std::string::npos &&
                   w.find("exp_avg.*") != std::string::npos;
        }));
        const std::string shards =
            dir.filePath(QStringLiteral("sharded.safetensors")).toStdString();
        convertToShards(*doc, shards, 64);
        for (const std::string& path : {one, shards + ".index.json"}) {
            const auto out = Document::open(path);
            QCOMPARE(out->tensors().size(), f.params.size() + 2);
            for (const auto& p : f.params)
                QCOMPARE(valuesOf(*out, p.name), p.w);
            QCOMPARE(valuesOf(*out, "head.weight"), f.params[1].w);
            // A buffer, saved in fp16, written in F32 as zero_to_fp32.py's
            // `.float()` gives it; the shard index counts its 4-byte values.
            QCOMPARE(valuesOf(*out, "norm.running_mean"), (std::vector<float>{0.5f, -1.25f, 3.f}));
            const auto buffer =
                std::find_if(out->tensors().begin(), out->tensors().end(),
                             [](const TensorEntry& t) { return t.name == "norm.running_mean"; });
            QVERIFY(buffer != out->tensors().end());
            QCOMPARE(dtypeName(buffer->dtype), "F32");
            if (path != one) { // the index's total_size: every value as written
                uint64_t written = 0;
                for (const TensorEntry& t : out->tensors())
                    written += t.dataLen * dtypeSize(t.dtype);
                QCOMPARE(out->indexMetadata().at(0).key, std::string("total_size"));
                QCOMPARE(out->indexMetadata().at(0).value, std::to_string(written));
                QVERIFY(out->warnings().empty());
            }
        }
    }

    // --weights module writes the module as saved (stage 2; stage 3 saves
    // placeholders, refused); --include-optimizer adds the moments.
    void convertChoices() {
        for (int stage : {2, 3}) {
            const DeepSpeedFixture f = DeepSpeedFixture::make(stage, 2, kShapes);
            QTemporaryDir dir;
            f.write(dir.path().toStdString());
            const auto doc = Document::open(dir.path().toStdString());
            const std::string out = dir.filePath(QStringLiteral("m.safetensors")).toStdString();
            ConvertChoice module;
            module.moduleWeights = true;
            if (stage == 3) {
                try {
                    convertDocument(*doc, ConvertTarget::Safetensors, out, {}, module);
                    QFAIL("stage 3's placeholders were written");
                } catch (const std::exception& e) {
                    QVERIFY2(std::string(e.what()).find("placeholder") != std::string::npos,
                             e.what());
                }
            } else {
                convertDocument(*doc, ConvertTarget::Safetensors, out, {}, module);
                const auto written = Document::open(out);
                for (const auto& p : f.params)
                    QCOMPARE(valuesOf(*written, p.name), valuesOf(*doc, "module." + p.name));
            }
            ConvertChoice all;
            all.includeOptimizer = true;
            const std::string full = dir.filePath(QStringLiteral("all.safetensors")).toStdString();
            convertDocument(*doc, ConvertTarget::Safetensors, full, {}, all);
            const auto written = Document::open(full);
            for (const auto& p : f.params) {
                QCOMPARE(valuesOf(*written, p.name), p.w);
                QCOMPARE(valuesOf(*written, "exp_avg." + p.name), p.m);
                QCOMPARE(valuesOf(*written, "exp_avg_sq." + p.name), p.v);
            }
        }
    }

    // The optimizer's figures over a DeepSpeed folder: the master weights
    // and moments cut from the partitions, the formula in double.
    void optimizerFiguresEqualTheFormula() {
        const DeepSpeedFixture f = DeepSpeedFixture::make(3, 3, kShapes);
        QTemporaryDir dir;
        f.write(dir.path().toStdString());
        const OptimizerCheckpoint state = openOptimizerCheckpoint(dir.path().toStdString());
        const std::vector<ParameterUpdate> u = computeParameterUpdates(state);
        QCOMPARE(u.size(), f.params.size());
        const double bc1 = 1 - std::pow(f.beta1, f.step), bc2 = 1 - std::pow(f.beta2, f.step);
        for (size_t k = 0; k < u.size(); ++k) {
            const auto& p = f.params[k];
            double u2 = 0, w2 = 0;
            for (size_t i = 0; i < p.w.size(); ++i) {
                const double x = f.lr * (p.m[i] / bc1) / (std::sqrt(p.v[i] / bc2) + f.eps);
                u2 += x * x;
                w2 += double(p.w[i]) * p.w[i];
            }
            const double want =
                std::sqrt(u2 / double(p.w.size())) / std::sqrt(w2 / double(p.w.size()));
            QCOMPARE(u[k].parameter, p.name);
            QCOMPARE(u[k].rule, UpdateRule::Adam);
            QVERIFY(u[k].updateToWeight && std::abs(*u[k].updateToWeight - want) <= 1e-12 * want);
            QCOMPARE(u[k].step.value_or(0), f.step);
        }
    }
};

QTEST_GUILESS_MAIN(TestDeepSpeed)
#include "tst_deepspeed.moc"
