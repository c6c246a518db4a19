// Tensor names and row orders across a Hugging Face model and its llama.cpp
// GGUF conversion: the name map both ways, and the rotary row permutation
// against its definition (a reshape to [heads, 2, h], axes 1 and 2 swapped).
#include "ckptscope/diff/namemapping.h"
#include "ckptscope/diff/tensordiff.h"
#include "ckptscope/document/document.h"
#include "testsupport.h"

#include <QtTest>

#include <cmath>
#include <numeric>

using namespace ckptscope;

namespace {

// llama.cpp's permute, spelled as its definition: out[head][i][two] =
// in[head][two][i] over rows, each row one element here.
std::vector<uint64_t> llamaPermute(const std::vector<uint64_t>& rows, uint64_t heads) {
    const uint64_t h = rows.size() / heads / 2;
    std::vector<uint64_t> out(rows.size());
    for (uint64_t head = 0; head < heads; ++head)
        for (uint64_t two = 0; two < 2; ++two)
            for (uint64_t i = 0; i < h; ++i)
                out[head * 2 * h + i * 2 + two] = rows[head * 2 * h + two * h + i];
    return out;
}

} // namespace

class TestNameMapping : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void namesBothWays_data();
    void namesBothWays();
    void unknownNamesAreNotMapped();
    void rotaryRowsFollowTheDefinition_data();
    void rotaryRowsFollowTheDefinition();
    void quantizationErrorAgainstTheF32Model();
};

void TestNameMapping::namesBothWays_data() {
    QTest::addColumn<QString>("hf");
    QTest::addColumn<QString>("gguf");
    const auto row = [](const char* hf, const char* gguf) {
        QTest::newRow(gguf) << QString::fromLatin1(hf) << QString::fromLatin1(gguf);
    };
    row("model.embed_tokens.weight", "token_embd.weight");
    row("model.norm.weight", "output_norm.weight");
    row("lm_head.weight", "output.weight");
    row("model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight");
    row("model.layers.0.self_attn.q_proj.bias", "blk.0.attn_q.bias");
    row("model.layers.12.self_attn.k_proj.weight", "blk.12.attn_k.weight");
    row("model.layers.3.self_attn.v_proj.weight", "blk.3.attn_v.weight");
    row("model.layers.3.self_attn.o_proj.weight", "blk.3.attn_output.weight");
    row("model.layers.3.self_attn.q_norm.weight", "blk.3.attn_q_norm.weight");
    row("model.layers.3.self_attn.k_norm.weight", "blk.3.attn_k_norm.weight");
    row("model.layers.3.input_layernorm.weight", "blk.3.attn_norm.weight");
    row("model.layers.3.post_attention_layernorm.weight", "blk.3.ffn_norm.weight");
    row("model.layers.79.mlp.gate_proj.weight", "blk.79.ffn_gate.weight");
    row("model.layers.3.mlp.up_proj.weight", "blk.3.ffn_up.weight");
    row("model.layers.3.mlp.down_proj.weight", "blk.3.ffn_down.weight");
}

void TestNameMapping::namesBothWays() {
    QFETCH(QString, hf);
    QFETCH(QString, gguf);
    QCOMPARE(QString::fromStdString(ggufNameOf(hf.toStdString())), gguf);
    QCOMPARE(QString::fromStdString(hfNameOf(gguf.toStdString())), hf);
}

void TestNameMapping::unknownNamesAreNotMapped() {
    for (const char* name : {"model.layers.x.mlp.up_proj.weight", "model.layers.3.mlp.up_proj",
                             "model.layers.3.mlp.up_proj.scale", "encoder.weight",
                             "blk.3.foo.weight", "blk..attn_q.weight", ""}) {
        QVERIFY2(ggufNameOf(name).empty(), name);
        QVERIFY2(hfNameOf(name).empty(), name);
    }
}

void TestNameMapping::rotaryRowsFollowTheDefinition_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("heads");
    QTest::newRow("4 heads x 64") << 256 << 4;
    QTest::newRow("1 head") << 8 << 1;
    QTest::newRow("32 heads x 128") << 4096 << 32;
    QTest::newRow("kv: 8 heads x 128") << 1024 << 8;
}

void TestNameMapping::rotaryRowsFollowTheDefinition() {
    QFETCH(int, rows);
    QFETCH(int, heads);
    std::vector<uint64_t> hfRows(static_cast<size_t>(rows));
    std::iota(hfRows.begin(), hfRows.end(), uint64_t(0));
    const std::vector<uint64_t> ggufRows = llamaPermute(hfRows, uint64_t(heads));
    const RowOrder bGguf{RowOrder::Kind::BIsRotary, uint32_t(heads)};
    const RowOrder aGguf{RowOrder::Kind::AIsRotary, uint32_t(heads)};
    QVERIFY(bGguf.fits(uint64_t(rows)) && aGguf.fits(uint64_t(rows)));
    for (uint64_t r = 0; r < uint64_t(rows); ++r) {
        // A is Hugging Face: its row r is found in the GGUF tensor B at rowOfB.
        QCOMPARE(ggufRows[bGguf.rowOfB(r, uint64_t(rows))], hfRows[r]);
        // A is the GGUF tensor: its row r is B's (Hugging Face) row rowOfB.
        QCOMPARE(hfRows[aGguf.rowOfB(r, uint64_t(rows))], ggufRows[r]);
    }
    QVERIFY(!bGguf.fits(uint64_t(rows) + 1));
}

// The conformance model: its f32 safetensors against the Q4_K_M GGUF
// llama.cpp made of it. Every tensor pairs under the map; a q/k tensor's
// relative L2 equals the one computed here from ggml's own dequantized
// values with the rows put back by the permutation's definition, and is
// large when the rows are compared as stored.
void TestNameMapping::quantizationErrorAgainstTheF32Model() {
    REQUIRE_CONFORMANCE();
    const QString dir = testsupport::conformanceDir() + QStringLiteral("/gguf/");
    const auto hf =
        Document::open(testsupport::str(dir + QStringLiteral("valid/tiny-llama-f32.safetensors")));
    const auto gguf =
        Document::open(testsupport::str(dir + QStringLiteral("valid/tiny-llama-Q4_K_M.gguf")));
    const TensorDiff d = diffTensors(*hf, *gguf, DiffOptions{});
    QCOMPARE(d.nameMap, std::string("llama"));
    QCOMPARE(d.summary.added + d.summary.removed + d.summary.shapeChanged, uint64_t(0));
    QCOMPARE(d.tensors.size(), hf->tensors().size());
    const uint64_t heads = 4; // llama.attention.head_count (and _kv) of this model
    for (const TensorDiffEntry& e : d.tensors) {
        QVERIFY2(e.elements && e.elements->relL2, e.name.c_str());
        QCOMPARE(e.nameB, gguf->tensors()[*e.indexB].name);
        QVERIFY2(*e.elements->relL2 < 0.5, e.name.c_str());
        const bool rotary = e.name.find("q_proj") != std::string::npos ||
                            e.name.find("k_proj") != std::string::npos;
        QCOMPARE(!e.rowOrderB.same(), rotary);
        if (!rotary)
            continue;
        // ggml's dequantized values of the GGUF tensor, rows put back.
        const QString f32 =
            dir + QStringLiteral("expected/tiny-llama-Q4_K_M.gguf.%1.f32").arg(*e.indexB);
        const std::string raw = testsupport::readFile(f32);
        const uint64_t n = *hf->tensors()[*e.indexA].elementCount;
        QCOMPARE(raw.size(), n * 4);
        std::vector<float> q(n), a(n);
        std::memcpy(q.data(), raw.data(), raw.size());
        hf->readValues(*e.indexA, 0, n, a.data());
        const uint64_t rows = hf->tensors()[*e.indexA].shape[0], cols = n / rows;
        std::vector<uint64_t> rowIds(rows);
        std::iota(rowIds.begin(), rowIds.end(), uint64_t(0));
        const std::vector<uint64_t> held = llamaPermute(rowIds, heads); // GGUF row g holds HF row
        double diff2 = 0, norm2 = 0, asStored2 = 0;
        for (uint64_t g = 0; g < rows; ++g)
            for (uint64_t c = 0; c < cols; ++c) {
                const double hfValue = a[held[g] * cols + c], ggufValue = q[g * cols + c];
                diff2 += (ggufValue - hfValue) * (ggufValue - hfValue);
                norm2 += hfValue * hfValue;
                const double sameRow = a[g * cols + c];
                asStored2 += (ggufValue - sameRow) * (ggufValue - sameRow);
            }
        const double expected = std::sqrt(diff2 / norm2);
        QVERIFY2(std::abs(*e.elements->relL2 - expected) <= 1e-6 * expected,
                 qPrintable(QStringLiteral("%1: %2 vs %3")
                                .arg(QString::fromStdString(e.name))
                                .arg(*e.elements->relL2)
                                .arg(expected)));
        QVERIFY(std::sqrt(asStored2 / norm2) > 1.0); // what comparing as stored would say
    }
    // --no-map: nothing pairs (every name differs).
    NameMapOptions off;
    off.builtIn = false;
    const TensorDiff raw = diffTensors(*hf, *gguf, DiffOptions{}, {}, off);
    QCOMPARE(raw.summary.removed, uint64_t(hf->tensors().size()));
    QVERIFY(raw.nameMap.empty());
}

QTEST_GUILESS_MAIN(TestNameMapping)
#include "tst_namemapping.moc"
