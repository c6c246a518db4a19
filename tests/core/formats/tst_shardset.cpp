// Shard sets by name: parsing NAME-0000N-of-0000M.EXT, grouping a folder's
// names into sets, complete / incomplete / mixed, and the one index file.
#include "ckptscope/formats/safetensors/shardset.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <string>
#include <vector>

using namespace ckptscope;

class TestShardSet : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void parsesNames() {
        const auto s = parseShardName("model-00002-of-00004.safetensors");
        QVERIFY(s);
        QCOMPARE(s->stem, std::string("model"));
        QCOMPARE(s->extension, std::string(".safetensors"));
        QCOMPARE(s->number, uint64_t(2));
        QCOMPARE(s->count, uint64_t(4));
        const auto g = parseShardName("llama_7-3-of-12.gguf");
        QVERIFY(g);
        QCOMPARE(g->stem, std::string("llama_7"));
        QCOMPARE(g->number, uint64_t(3));
        QCOMPARE(g->count, uint64_t(12));
        QCOMPARE(g->extension, std::string(".gguf"));
        QVERIFY(!parseShardName("model.safetensors"));
        QVERIFY(!parseShardName("00001-of-00002.safetensors"));       // no stem
        QVERIFY(!parseShardName("model-00003-of-00002.safetensors")); // N > M
        QVERIFY(!parseShardName("model-00000-of-00002.safetensors")); // N = 0
        QVERIFY(!parseShardName("model00001-of-00002.safetensors"));  // no separator
        QVERIFY(!parseShardName("model-1234567890123456789-of-1234567890123456789.x"));
    }

    void writesNamesAsHuggingFace() {
        QCOMPARE(shardFileName("model", 1, 3, ".safetensors"),
                 std::string("model-00001-of-00003.safetensors"));
        QCOMPARE(shardFileName("m", 7, 123456, ".gguf"), std::string("m-00007-of-123456.gguf"));
        for (uint64_t n : {1, 9, 10, 99999, 100000}) {
            const auto back = parseShardName(shardFileName("a-b", n, 100000, ".x"));
            QVERIFY(back);
            QCOMPARE(back->stem, std::string("a-b"));
            QCOMPARE(back->number, n);
            QCOMPARE(back->count, uint64_t(100000));
        }
        QCOMPARE(shardIndexName("model"), std::string("model.safetensors.index.json"));
        QVERIFY(isShardIndexName("model.safetensors.index.json"));
        QVERIFY(!isShardIndexName(".safetensors.index.json"));
        QVERIFY(!isShardIndexName("model.safetensors"));
    }

    void groupsIntoSets() {
        const ShardGroups g = groupShards({"b-00002-of-00002.safetensors", "config.json",
                                           "b-00001-of-00002.safetensors",
                                           "a-00001-of-00003.safetensors", "x-00001-of-00001.gguf"},
                                          ".safetensors");
        QCOMPARE(g.others, (std::vector<std::string>{"config.json", "x-00001-of-00001.gguf"}));
        QCOMPARE(g.sets.size(), size_t(2));
        QCOMPARE(g.sets[0].stem, std::string("a"));
        QVERIFY(!g.sets[0].complete());
        QCOMPARE(g.sets[0].missing, (std::vector<uint64_t>{2, 3}));
        QCOMPARE(g.sets[0].problem(),
                 std::string("incomplete set of shards: 1 of 3 found "
                             "(a-00002-of-00003.safetensors and 1 more missing)"));
        QCOMPARE(g.sets[1].stem, std::string("b"));
        QVERIFY(g.sets[1].complete());
        QCOMPARE(g.sets[1].problem(), std::string());
        QCOMPARE(g.sets[1].files, (std::vector<std::string>{"b-00001-of-00002.safetensors",
                                                            "b-00002-of-00002.safetensors"}));
        // Without an extension every shard name is grouped.
        QCOMPARE(groupShards({"x-00001-of-00001.gguf"}).sets.size(), size_t(1));
    }

    void duplicateNumberIsAProblem() {
        const ShardGroups g =
            groupShards({"m-00001-of-00002.safetensors", "m-0001-of-00002.safetensors",
                         "m-00002-of-00002.safetensors"});
        QCOMPARE(g.sets.size(), size_t(1));
        QVERIFY(!g.sets[0].complete());
        QCOMPARE(g.sets[0].duplicated, std::vector<uint64_t>{1});
        QVERIFY(g.sets[0].problem().find("shard 1 of 2 given by two files") != std::string::npos);
    }

    void findsTheModelOfAFolder() {
        // One index: the model, whatever shards lie beside it.
        auto f = findShardedModel(
            {"model.safetensors.index.json", "model-00001-of-00002.safetensors", "config.json"});
        QVERIFY(f.isModel());
        QCOMPARE(f.index, std::string("model.safetensors.index.json"));
        QVERIFY(!f.set);
        // Two indexes: none chosen.
        f = findShardedModel({"a.safetensors.index.json", "b.safetensors.index.json"});
        QVERIFY(!f.isModel());
        QVERIFY(f.problem.find("2 index files") != std::string::npos);
        // No index, one complete set.
        f = findShardedModel({"m-00002-of-00002.safetensors", "m-00001-of-00002.safetensors"});
        QVERIFY(f.isModel());
        QCOMPARE(f.set->files.size(), size_t(2));
        QCOMPARE(f.set->files[0], std::string("m-00001-of-00002.safetensors"));
        // Incomplete.
        f = findShardedModel({"m-00001-of-00002.safetensors"});
        QVERIFY(!f.isModel());
        QVERIFY(f.problem.find("incomplete set of shards: 1 of 2 found") != std::string::npos);
        // Mixed: two sets (even if each is complete).
        f = findShardedModel({"m-00001-of-00001.safetensors", "n-00001-of-00001.safetensors"});
        QVERIFY(!f.isModel());
        QVERIFY(f.problem.find("mixed shard sets: 2 sets") != std::string::npos);
        f = findShardedModel({"m-00001-of-00002.safetensors", "m-00001-of-00003.safetensors"});
        QVERIFY(f.problem.find("mixed shard sets") != std::string::npos);
        // Nothing sharded: no model, no problem.
        f = findShardedModel({"model.safetensors", "config.json"});
        QVERIFY(!f.isModel());
        QVERIFY(f.problem.empty());
        // Another extension (GGUF splits).
        f = findShardedModel({"x-00001-of-00002.gguf", "x-00002-of-00002.gguf"}, ".gguf");
        QVERIFY(f.isModel());
    }

    void listsAFolder() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string root = dir.path().toStdString();
        for (const char* name : {"m-00001-of-00002.safetensors", "m-00002-of-00002.safetensors",
                                 ".m-00001-of-00003.safetensors.tmp", "notes.txt"})
            std::ofstream(root + "/" + name) << "x";
        QDir(dir.path())
            .mkdir(QStringLiteral("n-00001-of-00001.safetensors")); // a folder: not a file
        const ShardedFolder f = findShardedModelIn(root);
        QVERIFY(f.isModel());
        QCOMPARE(f.set->files.size(), size_t(2));
        const ShardedFolder missing = findShardedModelIn(root + "/absent");
        QVERIFY(!missing.isModel());
        QVERIFY(missing.problem.find("cannot list the folder") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestShardSet)
#include "tst_shardset.moc"
