// Tensor names and row orders across a Hugging Face model and its llama.cpp
// GGUF conversion: the name map both ways, and the rotary row permutation
// against its definition (a reshape to [heads, 2, h], axes 1 and 2 swapped).
#include "ckptscope/diff/namemapping.h"

#include <QtTest>

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

QTEST_GUILESS_MAIN(TestNameMapping)
#include "tst_namemapping.moc"
