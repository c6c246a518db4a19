// A sharded safetensors model as one Document: opened by its index (found by
// content), by its folder (index or complete set), each tensor reading from
// its shard; the index's own metadata apart; every inconsistency between the
// index and the shards an error or a warning naming both; a shard opened
// alone pointing to its model; conversion to Hugging Face shards and back.
#include "httpservers.h"
#include "shardedfixture.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/export/converter.h"
#include "ckptscope/export/safetensorswriter.h"
#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/gguf/syntheticgguf.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/stats/documentstats.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace ckptscope;
using nlohmann::ordered_json;
using testsupport::openError;
using testsupport::ShardedFixture;
using testsupport::StTensor;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::vector<std::string> warningTexts(const Document& doc) {
    std::vector<std::string> out;
    for (const IndexWarning& w : doc.warnings())
        out.push_back(w.message);
    return out;
}

std::string readText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// Both documents hold the same tensors (names, dtypes, shapes, values).
void compareModels(const Document& a, const Document& b) {
    QCOMPARE(a.tensors().size(), b.tensors().size());
    for (size_t i = 0; i < a.tensors().size(); ++i) {
        const TensorEntry& ta = a.tensors()[i];
        const TensorEntry& tb = b.tensors()[i];
        QCOMPARE(ta.name, tb.name);
        QCOMPARE(ta.dtype, tb.dtype);
        QCOMPARE(ta.shape, tb.shape);
        std::vector<double> va(ta.dataLen), vb(tb.dataLen);
        a.readValues(i, 0, ta.dataLen, va.data());
        b.readValues(i, 0, tb.dataLen, vb.data());
        QCOMPARE(va, vb);
    }
}

} // namespace

class TestShardedModel : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_root;
    int m_next = 0;

    // A fresh folder for one fixture.
    std::string folder() {
        const std::string path = m_root + "/f" + std::to_string(m_next++);
        std::filesystem::create_directory(path);
        return path;
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_root = m_dir.path().toStdString();
    }

    void opensByIndex() {
        const ShardedFixture f;
        const std::string dir = folder();
        const auto doc = Document::open(f.writeTo(dir));
        QCOMPARE(doc->format(), Format::Safetensors);
        QCOMPARE(std::string(doc->formatModule().description),
                 std::string("sharded safetensors model"));
        QVERIFY(doc->isSharded());
        QCOMPARE(doc->shards().size(), size_t(2));
        QCOMPARE(doc->shards()[0].name, ShardedFixture::shardName(1));
        QCOMPARE(doc->shards()[1].name, ShardedFixture::shardName(2));
        // Shard by shard, each in its file's order.
        const std::vector<std::string> names{"a.weight", "a.bias", "b.weight", "c"};
        QCOMPARE(doc->tensors().size(), names.size());
        for (size_t i = 0; i < names.size(); ++i) {
            QCOMPARE(doc->tensors()[i].name, names[i]);
            QCOMPARE(doc->shardName(i), ShardedFixture::shardName(i < 2 ? 1 : 2));
        }
        std::vector<float> v(6);
        doc->readValues(0, 0, 6, v.data());
        QCOMPARE(v, f.aWeight);
        doc->readValues(1, 1, 2, v.data());
        QCOMPARE(std::vector<float>(v.begin(), v.begin() + 2),
                 std::vector<float>(f.aBias.begin() + 1, f.aBias.end()));
        doc->readValues(2, 0, 4, v.data());
        QCOMPARE(std::vector<float>(v.begin(), v.begin() + 4), f.bWeight);
        int32_t raw[2];
        doc->readRawValues(3, 0, 2, raw);
        QCOMPARE(raw[0], f.c[0]);
        QCOMPARE(raw[1], f.c[1]);
        // Metadata merged (equal entries once), the index's apart.
        QCOMPARE(doc->metadata().size(), size_t(1));
        QCOMPARE(doc->metadata()[0].second, std::string("pt"));
        QCOMPARE(doc->indexMetadata().size(), size_t(1));
        QCOMPARE(doc->indexMetadata()[0].key, std::string("total_size"));
        QCOMPARE(doc->indexMetadata()[0].value, std::to_string(f.totalBytes()));
        QCOMPARE(doc->indexMetadata()[0].kind, MetadataKind::Integer);
        QCOMPARE(warningTexts(*doc), std::vector<std::string>{});
        const uint64_t sizes =
            std::filesystem::file_size(dir + "/" + ShardedFixture::shardName(1)) +
            std::filesystem::file_size(dir + "/" + ShardedFixture::shardName(2));
        QCOMPARE(doc->fileSize(), sizes);
        QCOMPARE(doc->totalBytes(), f.totalBytes());
    }

    // An index named without a folder (the shell's current one) opens: its
    // shards lie beside it.
    void opensByIndexInTheCurrentFolder() {
        const ShardedFixture f;
        const std::string dir = folder();
        const std::string index = f.writeTo(dir);
        const QString before = QDir::currentPath();
        QVERIFY(QDir::setCurrent(QString::fromStdString(dir)));
        std::shared_ptr<const Document> doc;
        std::string error;
        try {
            doc = Document::open(std::filesystem::path(index).filename().string());
        } catch (const std::exception& e) {
            error = e.what();
        }
        QDir::setCurrent(before);
        QVERIFY2(doc, error.c_str());
        QCOMPARE(doc->tensors().size(), size_t(4));
    }

    // The same values and statistics as the model in one file.
    void equalsTheSingleFile() {
        const ShardedFixture f;
        const std::string dir = folder();
        const auto sharded = Document::open(f.writeTo(dir));
        const auto single = Document::open(f.writeSingle(dir + "/single.safetensors"));
        compareModels(*single, *sharded);
        StatsOptions o;
        o.bins = 8;
        for (size_t i = 0; i < single->tensors().size(); ++i) {
            const StatsResult a = computeTensorStats(*single, i, o);
            const StatsResult b = computeTensorStats(*sharded, i, o);
            QCOMPARE(a.stats.mean, b.stats.mean);
            QCOMPARE(a.stats.l2, b.stats.l2);
            QCOMPARE(a.histogram.counts, b.histogram.counts);
        }
    }

    // The index is told from a gradient checkpoint (also a JSON object) by
    // content, whatever its name.
    void probeFindsTheIndexByContent() {
        const ShardedFixture f;
        const std::string dir = folder();
        f.writeTo(dir);
        const std::string renamed = dir + "/index-renamed.json";
        std::filesystem::copy_file(dir + "/model.safetensors.index.json", renamed);
        QCOMPARE(std::string(detectFormat(FileSource(renamed)).description),
                 std::string("sharded safetensors model"));
        QCOMPARE(Document::open(renamed)->tensors().size(), size_t(4));
        // weight_map first works too; a JSON object with other keys is not an index.
        const std::string mapFirst = dir + "/map-first.json";
        ShardedFixture::write(mapFirst,
                              ordered_json{{"weight_map", f.index()["weight_map"]}}.dump());
        QCOMPARE(Document::open(mapFirst)->tensors().size(), size_t(4));
        const std::string graph = dir + "/graph.json";
        ShardedFixture::write(graph, R"({"step": 1, "weight_map": {}})");
        QCOMPARE(std::string(detectFormat(FileSource(graph)).description),
                 std::string("gradient checkpoint"));
    }

    void opensAFolder() {
        const ShardedFixture f;
        const std::string dir = folder();
        f.writeTo(dir);
        const auto byIndex = Document::open(dir);
        QCOMPARE(byIndex->path(), dir + "/model.safetensors.index.json");
        QCOMPARE(byIndex->indexMetadata().size(), size_t(1));
        // Without an index: the complete set, in number order.
        const std::string bare = folder();
        f.writeTo(bare, false);
        const auto bySet = Document::open(bare);
        QCOMPARE(bySet->path(), bare);
        QVERIFY(bySet->isSharded());
        QVERIFY(bySet->indexMetadata().empty());
        QVERIFY(bySet->warnings().empty());
        compareModels(*byIndex, *bySet);
    }

    void mismatchedOrIncompleteSetIsRefused() {
        const ShardedFixture f;
        const std::string mixed = folder();
        f.writeTo(mixed, false);
        ShardedFixture::write(mixed + "/model-00001-of-00003.safetensors",
                              testsupport::stFile(f.shard1()));
        QVERIFY(contains(openError(mixed), "mixed shard sets"));
        const std::string partial = folder();
        f.writeTo(partial, false);
        std::filesystem::remove(partial + "/" + ShardedFixture::shardName(2));
        const std::string why = openError(partial);
        QVERIFY2(contains(why, "incomplete set of shards: 1 of 2 found") &&
                     contains(why, ShardedFixture::shardName(2)),
                 why.c_str());
        QVERIFY(contains(openError(folder()), "holding no sharded model"));
    }

    void missingShardNamesTensorAndFile() {
        const ShardedFixture f;
        const std::string dir = folder();
        const std::string index = f.writeTo(dir);
        std::filesystem::remove(dir + "/" + ShardedFixture::shardName(2));
        const std::string why = openError(index);
        QVERIFY2(contains(why, ShardedFixture::shardName(2)) &&
                     (contains(why, "\"b.weight\"") || contains(why, "\"c\"")),
                 why.c_str());
    }

    // A weight_map's shard names never leave the index's folder: each way out
    // is refused naming the index and the name, before anything is opened.
    void shardNamesStayInTheFolder_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("why");
        const auto row = [](const char* name, const char* why) {
            QTest::newRow(name) << QString::fromUtf8(name) << QString::fromUtf8(why);
        };
        row("/etc/passwd", "is an absolute path");
        row("../outside.safetensors", "leaves the folder");
        row("sub/../../x.safetensors", "leaves the folder");
        row("%2e%2e/x.safetensors", "percent sign");
        row("http://127.0.0.1:1/x.safetensors", "names a scheme");
        row("file:///etc/passwd", "names a scheme");
        row("C:/x.safetensors", "names a scheme or drive");
        row("a\\b.safetensors", "backslash");
        row("./x.safetensors", "component");
        row("a//b.safetensors", "component");
    }
    void shardNamesStayInTheFolder() {
        QFETCH(QString, name);
        QFETCH(QString, why);
        const ShardedFixture f;
        const std::string dir = folder();
        const std::string index = f.writeTo(dir);
        ordered_json j = f.index();
        j["weight_map"]["c"] = name.toStdString();
        ShardedFixture::write(index, j.dump());
        const std::string error = openError(index);
        QVERIFY2(contains(error, index) && contains(error, "\"c\"") &&
                     contains(error, name.toStdString()) && contains(error, why.toStdString()),
                 error.c_str());
    }

    // An index on a server naming a local file: refused, and nothing but the
    // index was fetched (its shards would come from that server, never the
    // disk).
    void remoteIndexNamingALocalFileIsRefused() {
        const std::string json =
            R"({"metadata": {}, "weight_map": {"w": "/etc/passwd", "v": "model.safetensors"}})";
        testsupport::FaultServer server(json, "");
        const std::string url = server.url("/file");
        const std::string error = openError(url);
        QVERIFY2(contains(error, "\"/etc/passwd\" is an absolute path"), error.c_str());
        QCOMPARE(server.requests().size(), size_t(1));
    }

    // A symbolic link among the shards that leads out of the folder is
    // refused as a "../" name is; a sub-folder is fine.
    void linksOutOfTheFolderAreRefused() {
        const ShardedFixture f;
        const std::string dir = folder(), outside = folder();
        const std::string index = f.writeTo(dir);
        std::filesystem::rename(dir + "/" + ShardedFixture::shardName(2),
                                outside + "/" + ShardedFixture::shardName(2));
        std::filesystem::create_symlink(outside + "/" + ShardedFixture::shardName(2),
                                        dir + "/" + ShardedFixture::shardName(2));
        const std::string error = openError(index);
        QVERIFY2(contains(error, "leads outside the index's folder"), error.c_str());
        // Moved into a sub-folder and named so: read as before.
        std::filesystem::remove(dir + "/" + ShardedFixture::shardName(2));
        std::filesystem::create_directory(dir + "/sub");
        std::filesystem::rename(outside + "/" + ShardedFixture::shardName(2),
                                dir + "/sub/" + ShardedFixture::shardName(2));
        ordered_json j = f.index();
        for (auto& [tensor, shard] : j["weight_map"].items())
            if (shard == ShardedFixture::shardName(2))
                shard = "sub/" + ShardedFixture::shardName(2);
        ShardedFixture::write(index, j.dump());
        const auto doc = Document::open(index);
        QCOMPARE(doc->tensors().size(), size_t(4));
    }

    void mappedTensorMissingFromItsShard() {
        ShardedFixture f;
        const std::string dir = folder();
        const std::string index = f.writeTo(dir);
        ordered_json j = f.index();
        j["weight_map"]["d.extra"] = ShardedFixture::shardName(1);
        ShardedFixture::write(index, j.dump());
        const std::string why = openError(index);
        QVERIFY2(contains(why, "\"d.extra\" is not in its shard \"" + ShardedFixture::shardName(1) +
                                   "\""),
                 why.c_str());
    }

    void tensorOutsideTheMapIsAWarning() {
        const ShardedFixture f;
        const std::string dir = folder();
        const std::string index = f.writeTo(dir);
        ordered_json j = f.index();
        j["weight_map"].erase("a.bias");
        ShardedFixture::write(index, j.dump());
        const auto doc = Document::open(index);
        QCOMPARE(doc->tensors().size(), size_t(4)); // still read: it is in the file
        QCOMPARE(warningTexts(*doc),
                 std::vector<std::string>{"tensor \"a.bias\" is in shard \"" +
                                          ShardedFixture::shardName(1) +
                                          "\" but not in the index's weight_map"});
    }

    void totalSizeMismatchIsAWarning() {
        const ShardedFixture f;
        const std::string dir = folder();
        const std::string index = f.writeTo(dir);
        ordered_json j = f.index();
        j["metadata"]["total_size"] = f.totalBytes() + 4;
        ShardedFixture::write(index, j.dump());
        const auto doc = Document::open(index);
        QCOMPARE(warningTexts(*doc),
                 std::vector<std::string>{
                     "the index's metadata.total_size is " + std::to_string(f.totalBytes() + 4) +
                     " bytes, but the tensors hold " + std::to_string(f.totalBytes())});
    }

    void metadataConflictNamesTheShards() {
        ShardedFixture f;
        f.meta2 = {{"format", "np"}, {"note", "x"}};
        const std::string dir = folder();
        const auto doc = Document::open(f.writeTo(dir));
        const std::vector<std::pair<std::string, std::string>> merged{{"format", "pt"},
                                                                      {"note", "x"}};
        QCOMPARE(doc->metadata(), merged);
        QCOMPARE(doc->warnings().size(), size_t(1));
        const std::string w = doc->warnings()[0].message;
        QVERIFY2(contains(w, "\"format\"") && contains(w, ShardedFixture::shardName(1)) &&
                     contains(w, ShardedFixture::shardName(2)),
                 w.c_str());
    }

    void shardAlonePointsToItsModel() {
        const ShardedFixture f;
        const std::string dir = folder();
        const std::string index = f.writeTo(dir);
        const auto doc = Document::open(dir + "/" + ShardedFixture::shardName(1));
        QVERIFY(!doc->isSharded());
        QCOMPARE(doc->tensors().size(), f.shard1().size());
        QCOMPARE(doc->warnings().size(), size_t(1));
        QCOMPARE(doc->warnings()[0].message,
                 std::string("one of 2 shards of a sharded model; the whole model is "
                             "model.safetensors.index.json"));
        QCOMPARE(doc->warnings()[0].opens, index);
        // No index: the folder holding the complete set is the model.
        const std::string bare = folder();
        f.writeTo(bare, false);
        const auto alone = Document::open(bare + "/" + ShardedFixture::shardName(2));
        QCOMPARE(alone->warnings().size(), size_t(1));
        QCOMPARE(alone->warnings()[0].opens, bare);
        QCOMPARE(Document::open(alone->warnings()[0].opens)->tensors().size(), size_t(4));
    }

    // convertToShards splits as Hugging Face does, writes an index a
    // reader takes, and the shards read back as the model.
    void convertToShardsRoundTrip() {
        const ShardedFixture f;
        const std::string dir = folder();
        const auto single = Document::open(f.writeSingle(dir + "/single.safetensors"));
        const uint64_t limit = 24 + 12; // a.weight + a.bias fit; b.weight + c fit
        const std::string out = dir + "/out";
        std::filesystem::create_directory(out);
        QVERIFY(convertToShards(*single, out + "/model.safetensors", limit).empty());
        // The split, computed here: a new shard when the next tensor would pass the limit.
        std::vector<std::vector<std::string>> expected(1);
        uint64_t bytes = 0;
        for (const auto& shard : {f.shard1(), f.shard2()})
            for (const StTensor& t : shard) {
                if (!expected.back().empty() && bytes + t.bytes.size() > limit) {
                    expected.emplace_back();
                    bytes = 0;
                }
                expected.back().push_back(t.name);
                bytes += t.bytes.size();
            }
        const auto index = nlohmann::json::parse(readText(out + "/model.safetensors.index.json"));
        QCOMPARE(index["metadata"]["total_size"].get<uint64_t>(), f.totalBytes());
        QCOMPARE(index["weight_map"].size(), size_t(4));
        for (size_t k = 0; k < expected.size(); ++k)
            for (const std::string& name : expected[k])
                QCOMPARE(index["weight_map"][name].get<std::string>(),
                         "model-0000" + std::to_string(k + 1) + "-of-0000" +
                             std::to_string(expected.size()) + ".safetensors");
        const auto back = Document::open(out);
        QCOMPARE(back->shards().size(), expected.size());
        QVERIFY(back->warnings().empty());
        compareModels(*single, *back);
        QCOMPARE(back->metadata(), single->metadata());
        // And to one file again, byte for byte the model written as one.
        const std::string again = dir + "/again.safetensors";
        convertDocument(*back, ConvertTarget::Safetensors, again);
        std::string expectBytes;
        {
            std::ostringstream s;
            writeSafetensors(s, *single);
            expectBytes = s.str();
        }
        QCOMPARE(readText(again), expectBytes);
        // Never over an input shard.
        QVERIFY(!conversionRefusal(*back, ConvertTarget::Safetensors,
                                   out + "/model-00001-of-00002.safetensors")
                     .empty());
    }

    // A quantized GGUF into shards: its tensors are written dequantized, as
    // F32, so the split and the index's total_size count 4 bytes a value
    // (they counted the stored blocks: 1,661,952 for 11,799,552 written).
    void dequantizedTensorsCountedAsWritten() {
        QTemporaryDir tmp;
        const std::string dir = tmp.path().toStdString();
        gguf::SyntheticGgufSpec spec;
        spec.type = Dtype::Q4_K;
        spec.totalBytes = 64 << 10;
        gguf::writeSyntheticGguf(dir + "/q.gguf", spec);
        const auto doc = Document::open(dir + "/q.gguf");
        const uint64_t limit = 32 << 10;
        convertToShards(*doc, dir + "/model.safetensors", limit);
        const auto index = nlohmann::json::parse(readText(dir + "/model.safetensors.index.json"));
        const auto back = Document::open(dir + "/model.safetensors.index.json");
        uint64_t written = 0;
        std::map<std::string, uint64_t> perShard;
        for (size_t i = 0; i < back->tensors().size(); ++i) {
            const TensorEntry& t = back->tensors()[i];
            QCOMPARE(dtypeName(t.dtype), "F32");
            written += 4 * t.dataLen;
            perShard[back->shardName(i)] += 4 * t.dataLen;
        }
        QCOMPARE(index["metadata"]["total_size"].get<uint64_t>(), written);
        QVERIFY(perShard.size() > 2);
        for (const auto& [shard, bytes] : perShard) // one tensor may pass it alone
            QVERIFY2(bytes <= limit || std::count_if(back->tensors().begin(), back->tensors().end(),
                                                     [&](const TensorEntry& t) {
                                                         return back->shards()[t.shard].name ==
                                                                shard;
                                                     }) == 1,
                     (shard + ": " + std::to_string(bytes)).c_str());
    }
};

QTEST_GUILESS_MAIN(TestShardedModel)
#include "tst_shardedmodel.moc"
