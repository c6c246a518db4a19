// The layer × step matrix of a family against statistics computed directly
// from the values written, gaps where a layer is absent, and the relative
// change of the L2 norm as defined.
#include "optimizerfixture.h"
#include "testsupport.h"

#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/run/layerprofile.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

using namespace ckptscope;
using testsupport::guarded;
using testsupport::str;

namespace {

struct Direct {
    double l2 = 0, mean = 0, std = 0, maxAbs = 0;
};

Direct direct(const std::vector<float>& v) {
    Direct d;
    double sum = 0, sq = 0;
    for (float x : v) {
        sum += x;
        sq += double(x) * x;
        d.maxAbs = std::max(d.maxAbs, std::fabs(double(x)));
    }
    d.l2 = std::sqrt(sq);
    d.mean = sum / double(v.size());
    double var = 0;
    for (float x : v)
        var += (x - d.mean) * (x - d.mean);
    d.std = std::sqrt(var / double(v.size()));
    return d;
}

bool close(double a, double b) {
    return std::fabs(a - b) <= 1e-7 * std::max(1.0, std::fabs(b));
}

} // namespace

class TestLayerProfile : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void matrixAgainstDirectComputation() {
        guarded([] {
            QTemporaryDir tmp;
            // values[checkpoint][layer]; layer 2 is missing at step 20.
            std::vector<std::vector<std::vector<float>>> values(3);
            std::mt19937 rng(7);
            std::normal_distribution<float> normal(0.f, 1.f);
            for (int c = 0; c < 3; ++c) {
                Checkpoint ck;
                ck.setMetadata("step", std::to_string(10 * (c + 1)));
                for (int layer = 0; layer < 3; ++layer) {
                    std::vector<float> v(50);
                    for (float& x : v)
                        x = normal(rng) * float(1 + layer * c); // layer 2 drifts
                    values[c].push_back(v);
                    if (!(layer == 2 && c == 1))
                        ck.addTensor({"layers." + std::to_string(layer) + ".w", {50}, v});
                }
                ck.addTensor({"head.w", {1}, {1.f}});
                ck.save(str(tmp.path()) + "/c" + std::to_string(c) + ".oxck");
            }
            RunOptions opt;
            opt.useCache = false;
            const Run run = readRun({str(tmp.path())}, opt);
            const auto series = tensorSeries(run);
            const auto families = layerFamilies(series);
            QCOMPARE(families.size(), size_t(1));
            QCOMPARE(families[0].pattern(), std::string("layers.{N}.w"));
            for (int s = 0; s < int(LayerStatistic::Count); ++s) {
                const auto stat = LayerStatistic(s);
                const LayerProfile p = layerProfile(run, series, families[0], stat);
                QCOMPARE(p.rows, (std::vector<std::string>{"0", "1", "2"}));
                if (isOptimizerStatistic(stat)) { // OXCK files hold no optimizer state
                    for (const auto& row : p.values)
                        QVERIFY(std::none_of(row.begin(), row.end(),
                                             [](const auto& cell) { return cell.has_value(); }));
                    continue;
                }
                for (int layer = 0; layer < 3; ++layer)
                    for (int c = 0; c < 3; ++c) {
                        const auto& cell = p.values[layer][c];
                        const bool absent = layer == 2 && c == 1;
                        const bool noPrevious = stat == LayerStatistic::L2RelativeChange &&
                                                (c == 0 || (layer == 2 && c == 2));
                        if (absent || noPrevious) {
                            QVERIFY2(!cell, "a gap where the layer or its predecessor is absent");
                            continue;
                        }
                        QVERIFY(cell);
                        const Direct d = direct(values[c][layer]);
                        double expected = 0;
                        switch (stat) {
                        case LayerStatistic::L2:
                            expected = d.l2;
                            break;
                        case LayerStatistic::Std:
                            expected = d.std;
                            break;
                        case LayerStatistic::MaxAbs:
                            expected = d.maxAbs;
                            break;
                        case LayerStatistic::Mean:
                            expected = d.mean;
                            break;
                        default: {
                            const double prev = direct(values[c - 1][layer]).l2;
                            expected = std::fabs(d.l2 - prev) / prev;
                        }
                        }
                        QVERIFY2(close(*cell, expected),
                                 qPrintable(QStringLiteral("%1 layer %2 checkpoint %3: %4 vs %5")
                                                .arg(QString::fromUtf8(layerStatisticName(stat)))
                                                .arg(layer)
                                                .arg(c)
                                                .arg(*cell)
                                                .arg(expected)));
                    }
            }
        });
    }

    // update / weight and √v RMS of a Trainer run the test wrote: each cell
    // is the figure the formula gives for that layer at that checkpoint.
    void optimizerStatisticsFromTheState() {
        guarded([] {
            QTemporaryDir tmp;
            std::vector<testsupport::AdamFixture> fixtures;
            for (int c = 0; c < 2; ++c) {
                auto f = testsupport::AdamFixture::make(
                    {"layers.0.weight", "layers.1.weight", "layers.2.weight"}, 32, {1, 10, 0.1},
                    uint32_t(c + 3));
                const std::string dir = str(tmp.path()) + "/checkpoint-" + std::to_string(c + 1);
                QVERIFY(std::filesystem::create_directory(dir));
                f.writeTo(dir);
                fixtures.push_back(std::move(f));
            }
            RunOptions opt;
            opt.useCache = false;
            const Run run = readRun({str(tmp.path())}, opt);
            QCOMPARE(run.checkpoints.size(), size_t(2));
            const auto series = tensorSeries(run);
            const auto families = layerFamilies(series);
            QCOMPARE(families.size(), size_t(1));
            const LayerProfile ratio =
                layerProfile(run, series, families[0], LayerStatistic::UpdateToWeight);
            const LayerProfile sqrtV =
                layerProfile(run, series, families[0], LayerStatistic::SqrtVRms);
            // (relative: the figures are around 1e-3)
            const auto near = [](const std::optional<double>& a, double b) {
                return a && std::fabs(*a - b) <= 1e-12 * b;
            };
            for (size_t layer = 0; layer < 3; ++layer)
                for (size_t c = 0; c < 2; ++c) {
                    const auto e = fixtures[c].expected(layer);
                    QVERIFY(near(ratio.values[layer][c], e.updateToWeight));
                    QVERIFY(near(sqrtV.values[layer][c], e.sqrtVRms));
                }
        });
    }

    void noFiniteValueAndZeroNormAreGaps() {
        guarded([] {
            QTemporaryDir tmp;
            const float nan = std::numeric_limits<float>::quiet_NaN();
            for (int c = 0; c < 2; ++c) {
                Checkpoint ck;
                ck.setMetadata("step", std::to_string(c));
                ck.addTensor({"b.0", {2}, {nan, nan}});
                ck.addTensor({"b.1", {2}, {0.f, float(c)}});
                ck.save(str(tmp.path()) + "/c" + std::to_string(c) + ".oxck");
            }
            RunOptions opt;
            opt.useCache = false;
            const Run run = readRun({str(tmp.path())}, opt);
            const auto series = tensorSeries(run);
            const auto fam = layerFamilies(series).at(0);
            QVERIFY(!layerProfile(run, series, fam, LayerStatistic::Std).values[0][0]);
            QVERIFY(!layerProfile(run, series, fam, LayerStatistic::MaxAbs).values[0][1]);
            QCOMPARE(*layerProfile(run, series, fam, LayerStatistic::L2).values[0][0], 0.0);
            // b.1's L2 is 0 at step 0: no relative change at step 1.
            QVERIFY(!layerProfile(run, series, fam, LayerStatistic::L2RelativeChange).values[1][1]);
            QVERIFY(QString::fromUtf8(layerStatisticMeaning(LayerStatistic::L2RelativeChange))
                        .contains(QStringLiteral("not of the values")));
            // The cells of a layer holding NaN/Inf say how many, for every
            // statistic (the figure is of the finite values only).
            for (int st = 0; st < int(LayerStatistic::Count); ++st) {
                const LayerProfile p = layerProfile(run, series, fam, LayerStatistic(st));
                QCOMPARE(p.nonFinite, (std::vector<std::vector<uint64_t>>{{2, 2}, {0, 0}}));
            }
        });
    }
};

QTEST_APPLESS_MAIN(TestLayerProfile)
#include "tst_layerprofile.moc"
