// Steps from metadata values and from file names: every rule of the
// timeline contract, and the tokens that must not be read as steps.
#include "ckptscope/run/stepparser.h"

#include <QTest>

#include <optional>
#include <string>

using namespace ckptscope;

Q_DECLARE_METATYPE(std::optional<uint64_t>)

namespace {
const std::optional<uint64_t> none;
std::optional<uint64_t> step(uint64_t v) {
    return v;
}
} // namespace

class TestStepParser : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void metadataValues_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<std::optional<uint64_t>>("expected");
        QTest::newRow("digits") << "1200" << step(1200);
        QTest::newRow("spaces around") << "  7 " << step(7);
        QTest::newRow("leading zeros") << "0042" << step(42);
        QTest::newRow("zero") << "0" << step(0);
        QTest::newRow("u64 max") << "18446744073709551615" << step(UINT64_MAX);
        QTest::newRow("past u64") << "18446744073709551616" << none;
        QTest::newRow("empty") << "" << none;
        QTest::newRow("spaces only") << "   " << none;
        QTest::newRow("negative") << "-1" << none;
        QTest::newRow("plus") << "+1" << none;
        QTest::newRow("exponent") << "1e3" << none;
        QTest::newRow("fraction") << "1.0" << none;
        QTest::newRow("inner space") << "12 3" << none;
        QTest::newRow("tab") << "\t5" << none;
        QTest::newRow("hex") << "0x10" << none;
    }
    void metadataValues() {
        QFETCH(QString, text);
        QFETCH(std::optional<uint64_t>, expected);
        QCOMPARE(parseStepValue(text.toStdString()), expected);
    }

    void metadataKeysInOrder() {
        using Rows = std::vector<std::pair<std::string, std::string>>;
        QCOMPARE(stepFromMetadata(Rows{{"iter", "3"}, {"step", "9"}}), step(9));
        QCOMPARE(stepFromMetadata(Rows{{"iter", "3"}, {"global_step", "8"}}), step(8));
        QCOMPARE(stepFromMetadata(Rows{{"iter", "3"}, {"iteration", "5"}}), step(5));
        QCOMPARE(stepFromMetadata(Rows{{"iter", "3"}, {"loss", "2"}}), step(3));
        // A key whose value is not a step is passed over for the next key.
        QCOMPARE(stepFromMetadata(Rows{{"step", "final"}, {"global_step", "77"}}), step(77));
        QCOMPARE(stepFromMetadata(Rows{{"Step", "1"}, {"epoch", "2"}}), none);
        QCOMPARE(stepFromMetadata(Rows{}), none);
    }

    void fileNames_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<std::optional<uint64_t>>("expected");
        QTest::newRow("step-") << "model-step-1500.oxck" << step(1500);
        QTest::newRow("step_") << "step_300.oxck" << step(300);
        QTest::newRow("step.") << "run.step.12.oxck" << step(12);
        QTest::newRow("step glued") << "step42.oxck" << step(42);
        QTest::newRow("upper case") << "STEP_9.OXCK" << step(9);
        QTest::newRow("global_step") << "global_step700" << step(700);
        QTest::newRow("iter") << "iter_50.oxck" << step(50);
        QTest::newRow("iteration") << "iteration-60.bin" << step(60);
        QTest::newRow("checkpoint folder") << "checkpoint-500" << step(500);
        QTest::newRow("ckpt") << "ckpt70.oxck" << step(70);
        QTest::newRow("keyword beats later number") << "step10_epoch3.oxck" << step(10);
        QTest::newRow("step before ckpt") << "ckpt-2_step-2000.oxck" << step(2000);
        QTest::newRow("keyword without digits") << "step_final_99.oxck" << step(99);
        QTest::newRow("last number") << "run2_000800.oxck" << step(800);
        QTest::newRow("dtype bf16 after") << "model_900_bf16.oxck" << step(900);
        QTest::newRow("dtype fp16 before") << "fp16-model-33.oxck" << step(33);
        QTest::newRow("dtype f32") << "weights-12-f32.oxck" << step(12);
        QTest::newRow("dtype int8") << "q-5.int8.oxck" << step(5);
        QTest::newRow("dtype float8 e4m3") << "m-44-f8_e4m3.oxck" << step(44);
        QTest::newRow("ggml Q4_0") << "tiny-llama-Q4_0.gguf" << none;
        QTest::newRow("ggml q1_0 lower case") << "type-q1_0.gguf" << none;
        QTest::newRow("ggml Q5_K_M") << "model-Q5_K_M.gguf" << none;
        QTest::newRow("ggml IQ1_M") << "model-IQ1_M.gguf" << none;
        QTest::newRow("ggml TQ2_0") << "model-TQ2_0.gguf" << none;
        QTest::newRow("ggml Q4_0_4_8") << "model-Q4_0_4_8.gguf" << none;
        QTest::newRow("ggml NVFP4") << "type-nvfp4.gguf" << none;
        QTest::newRow("ggml type and a step") << "run-300-Q4_K_M.gguf" << step(300);
        QTest::newRow("model size and version") << "Llama-3.1-8B-Instruct-Q4_K_M.gguf" << none;
        QTest::newRow("imatrix mark") << "Qwen2.5-0.5B-Instruct.i1-Q4_K_M.gguf" << none;
        QTest::newRow("experts x size") << "Mixtral-8x7B-v0.1.gguf" << none;
        QTest::newRow("size lower case, context") << "phi-mini-4k-70b.oxck" << none;
        QTest::newRow("size then a step") << "SmolLM2-135M-1000.oxck" << step(1000);
        QTest::newRow("version then keyword") << "Llama-3.1-8B-step-200.gguf" << step(200);
        QTest::newRow("digits before a word") << "run-300-bits.oxck" << step(300);
        QTest::newRow("shard") << "model-00001-of-00004.oxck" << none;
        QTest::newRow("shard with number") << "run-250-00002-of-00004.oxck" << step(250);
        QTest::newRow("shard after step") << "step-3-00001-of-00002.oxck" << step(3);
        QTest::newRow("only dtype") << "model.bf16.oxck" << none;
        QTest::newRow("no digits") << "final.oxck" << none;
        QTest::newRow("too long") << "x99999999999999999999999.oxck" << none;
        QTest::newRow("too long keyword, falls back") << "7_step99999999999999999999999" << step(7);
        QTest::newRow("not a dtype width") << "bf17.oxck" << step(17);
        QTest::newRow("dtype word must be whole") << "self32.oxck" << step(32);
    }
    void fileNames() {
        QFETCH(QString, name);
        QFETCH(std::optional<uint64_t>, expected);
        QCOMPARE(stepFromFileName(name.toStdString()), expected);
    }

    void sourceNames() {
        QCOMPARE(stepSourceName(StepSource::MetadataKey), "metadata");
        QCOMPARE(stepSourceName(StepSource::GradientStep), "gradient");
        QCOMPARE(stepSourceName(StepSource::FileName), "file_name");
        QCOMPARE(stepSourceName(StepSource::None), "none");
    }
};

QTEST_APPLESS_MAIN(TestStepParser)
#include "tst_stepparser.moc"
