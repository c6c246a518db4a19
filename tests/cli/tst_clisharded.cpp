// A sharded safetensors model through ckptscope-cli: info (text and JSON:
// "file" per tensor, "shards", "index_metadata"), stats and export equal to
// the single file's, diff single vs sharded (exit 0) and vs one shard (exit
// 1), convert to one file and --shard-size round trip, errors naming the
// shard and the tensor.
#include "clirunner.h"
#include "shardedfixture.h"
#include "testsupport.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

using nlohmann::json;
using testsupport::ShardedFixture;

using clirunner::describe;
using clirunner::parseOut;
using clirunner::Run;
using clirunner::runCli;

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QByteArray fileBytes(const std::string& path) {
    QFile f(q(path));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestCliSharded : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_root, m_index, m_single;
    ShardedFixture m_f;

private Q_SLOTS:
    void initTestCase() {
        clirunner::requireCli();
        QVERIFY(m_dir.isValid());
        m_root = m_dir.path().toStdString();
        std::filesystem::create_directory(m_root + "/model");
        m_index = m_f.writeTo(m_root + "/model");
        m_single = m_f.writeSingle(m_root + "/single.safetensors");
    }

    void infoJson() {
        const Run r = runCli({QStringLiteral("info"), QStringLiteral("--json"), q(m_index)});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const json j = parseOut(r);
        QCOMPARE(j["format"].get<std::string>(), std::string("safetensors"));
        QVERIFY(j["shards"] == json({ShardedFixture::shardName(1), ShardedFixture::shardName(2)}));
        QCOMPARE(j["index_metadata"]["total_size"].get<uint64_t>(), m_f.totalBytes());
        QCOMPARE(j["total_bytes"].get<uint64_t>(), m_f.totalBytes());
        QCOMPARE(j["tensors"].size(), size_t(4));
        for (size_t i = 0; i < 4; ++i)
            QCOMPARE(j["tensors"][i]["file"].get<std::string>(),
                     ShardedFixture::shardName(i < 2 ? 1 : 2));
        QCOMPARE(j["warnings"].size(), size_t(0));
        // A single file has neither.
        const json one =
            parseOut(runCli({QStringLiteral("info"), QStringLiteral("--json"), q(m_single)}));
        QVERIFY(!one.contains("shards") && !one.contains("index_metadata"));
        QVERIFY(!one["tensors"][0].contains("file"));
        // The folder is the same model.
        const json folder = parseOut(
            runCli({QStringLiteral("info"), QStringLiteral("--json"), q(m_root + "/model")}));
        QVERIFY(folder["tensors"] == j["tensors"]);
    }

    void shardAloneWarns() {
        const Run r =
            runCli({QStringLiteral("info"), q(m_root + "/model/" + ShardedFixture::shardName(1))});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.errText().contains(QStringLiteral(
                     "warning: one of 2 shards of a sharded model; the whole model is "
                     "model.safetensors.index.json")),
                 qPrintable(describe(r)));
    }

    void statsEqualTheSingleFile() {
        const Run a = runCli({QStringLiteral("stats"), QStringLiteral("--json"), q(m_single)});
        const Run b = runCli({QStringLiteral("stats"), QStringLiteral("--json"), q(m_index)});
        QVERIFY2(a.exitCode == 0 && b.exitCode == 0, qPrintable(describe(b)));
        const json sa = parseOut(a)["tensors"];
        QVERIFY(sa.size() == 4 && sa == parseOut(b)["tensors"]);
    }

    void exportReadsFromTheShard() {
        const std::string a = m_root + "/a.npy", b = m_root + "/b.npy";
        for (const auto& [in, out] : {std::pair(m_single, a), std::pair(m_index, b)}) {
            const Run r = runCli({QStringLiteral("export"), q(in), QStringLiteral("--tensor"),
                                  QStringLiteral("b.weight"), QStringLiteral("-o"), q(out)});
            QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        }
        QVERIFY(!fileBytes(a).isEmpty());
        QCOMPARE(fileBytes(b), fileBytes(a));
    }

    void diffComparesTheModels() {
        Run r = runCli({QStringLiteral("diff"), q(m_single), q(m_index)});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        r = runCli({QStringLiteral("diff"), q(m_single), q(m_root + "/model")});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        // Against one shard: the other shard's tensors are removed.
        r = runCli({QStringLiteral("diff"), QStringLiteral("--json"), q(m_single),
                    q(m_root + "/model/" + ShardedFixture::shardName(1))});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(parseOut(r)["summary"]["removed"].get<uint64_t>(), uint64_t(2));
    }

    void convertBothWays() {
        const std::string one = m_root + "/one.safetensors";
        Run r = runCli({QStringLiteral("convert"), q(m_index), q(one)});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QCOMPARE(fileBytes(one), fileBytes(m_single)); // same tensors, order and metadata
        std::filesystem::create_directory(m_root + "/resharded");
        const std::string out = m_root + "/resharded/model.safetensors.index.json";
        r = runCli({QStringLiteral("convert"), q(m_single), q(out), QStringLiteral("--shard-size"),
                    QStringLiteral("40")});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const json index = json::parse(fileBytes(out).toStdString());
        QCOMPARE(index["metadata"]["total_size"].get<uint64_t>(), m_f.totalBytes());
        QCOMPARE(index["weight_map"]["a.weight"].get<std::string>(),
                 std::string("model-00001-of-00002.safetensors"));
        QCOMPARE(index["weight_map"]["c"].get<std::string>(),
                 std::string("model-00002-of-00002.safetensors"));
        r = runCli({QStringLiteral("diff"), q(m_single), q(out)});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        r = runCli({QStringLiteral("convert"), q(m_single), q(m_root + "/x.npz"),
                    QStringLiteral("--shard-size"), QStringLiteral("1K")});
        QCOMPARE(r.exitCode, 2);
        r = runCli({QStringLiteral("convert"), q(m_single), q(m_root + "/y.safetensors"),
                    QStringLiteral("--shard-size"), QStringLiteral("2XB")});
        QCOMPARE(r.exitCode, 2);
    }

    void missingShardIsAnError() {
        const std::string dir = m_root + "/broken";
        std::filesystem::create_directory(dir);
        const std::string index = m_f.writeTo(dir);
        std::filesystem::remove(dir + "/" + ShardedFixture::shardName(1));
        const Run r = runCli({QStringLiteral("info"), q(index)});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.errText().contains(q(ShardedFixture::shardName(1))) &&
                     r.errText().contains(QStringLiteral("\"a.")),
                 qPrintable(describe(r)));
    }
};

QTEST_GUILESS_MAIN(TestCliSharded)
#include "tst_clisharded.moc"
