// Families of tensors whose names differ by one number: which names group,
// numeric member order, names with several numbers, singletons dropped.
#include "testsupport.h"

#include "ckptscope/run/layerfamily.h"

#include <QTest>

using namespace ckptscope;

namespace {

std::vector<TensorSeries> seriesOf(const std::vector<std::string>& names) {
    std::vector<TensorSeries> out;
    for (const std::string& n : names)
        out.push_back({n, 0, {}});
    return out;
}

const LayerFamily* find(const std::vector<LayerFamily>& fs, const std::string& pattern) {
    for (const LayerFamily& f : fs)
        if (f.pattern() == pattern)
            return &f;
    return nullptr;
}

std::vector<std::string> numbers(const LayerFamily& f) {
    std::vector<std::string> out;
    for (const auto& m : f.members)
        out.push_back(m.number);
    return out;
}

} // namespace

class TestLayerFamily : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void groupsByOneNumberInNumericOrder() {
        const auto series =
            seriesOf({"embed.weight", "layers.0.attn.q.weight", "layers.10.attn.q.weight",
                      "layers.2.attn.q.weight", "layers.1.attn.q.weight", "h.3.mlp.c_fc.weight",
                      "h.12.mlp.c_fc.weight", "blocks/7/norm", "blocks/8/norm", "conv1.weight",
                      "lm_head.weight"});
        const auto fs = layerFamilies(series);
        QCOMPARE(fs.size(), size_t(3));
        QCOMPARE(fs[0].pattern(), std::string("layers.{N}.attn.q.weight"));
        QCOMPARE(numbers(fs[0]), (std::vector<std::string>{"0", "1", "2", "10"}));
        // Members point at their series.
        QCOMPARE(series[fs[0].members[3].series].name, std::string("layers.10.attn.q.weight"));
        QCOMPARE(fs[1].pattern(), std::string("h.{N}.mlp.c_fc.weight"));
        QCOMPARE(numbers(fs[1]), (std::vector<std::string>{"3", "12"}));
        QCOMPARE(fs[2].pattern(), std::string("blocks/{N}/norm"));
        QVERIFY(!find(fs, "conv{N}.weight")); // one member only
    }

    void severalNumbersGiveOneFamilyPerPosition() {
        const auto fs = layerFamilies(
            seriesOf({"layers.0.experts.0.w", "layers.0.experts.1.w", "layers.1.experts.0.w",
                      "layers.1.experts.1.w", "layers.2.experts.0.w"}));
        const LayerFamily* byLayer = find(fs, "layers.{N}.experts.0.w");
        QVERIFY(byLayer);
        QCOMPARE(numbers(*byLayer), (std::vector<std::string>{"0", "1", "2"}));
        QVERIFY(find(fs, "layers.{N}.experts.1.w"));
        const LayerFamily* byExpert = find(fs, "layers.0.experts.{N}.w");
        QVERIFY(byExpert);
        QCOMPARE(numbers(*byExpert), (std::vector<std::string>{"0", "1"}));
        QVERIFY(find(fs, "layers.1.experts.{N}.w"));
        QVERIFY(!find(fs, "layers.2.experts.{N}.w")); // one member
        QCOMPARE(fs.size(), size_t(4));
    }

    void repeatedNamesAndOddNumbers() {
        auto series = seriesOf({"w.1", "w.2"});
        series.push_back({"w.1", 1, {}}); // the second "w.1" of a file
        const auto fs = layerFamilies(series);
        QCOMPARE(fs.size(), size_t(1));
        QCOMPARE(fs[0].members.size(), size_t(2));
        // Numbers beyond 64 bits and leading zeros order without overflow.
        QVERIFY(numberTextLess("99999999999999999999999", "100000000000000000000000"));
        QVERIFY(!numberTextLess("100000000000000000000000", "99999999999999999999999"));
        QVERIFY(numberTextLess("3", "03"));
        QVERIFY(numberTextLess("03", "4"));
        QVERIFY(!numberTextLess("7", "7"));
        QVERIFY(layerFamilies(seriesOf({"a", "b", "c"})).empty());
    }
};

QTEST_APPLESS_MAIN(TestLayerFamily)
#include "tst_layerfamily.moc"
