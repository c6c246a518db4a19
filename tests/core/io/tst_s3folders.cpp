// s3://BUCKET/PREFIX as a folder: listed with ListObjectsV2 (every page),
// then opened as the local folder is — a sharded model, a DCP folder, a
// DeepSpeed folder, a Trainer run — through a proxy that checks every
// signature and counts the requests: a model under a prefix costs one
// listing and its files' first bytes.
#include "awsenv.h"
#include "dcpfixture.h"
#include "deepspeedfixture.h"
#include "s3servers.h"
#include "shardedfixture.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/openerror.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/folderlisting.h"
#include "ckptscope/io/httpsource.h"
#include "ckptscope/run/run.h"

#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace ckptscope;
using testsupport::AwsEnv;

namespace {

constexpr const char* kKey = "AKFOLDERS";
constexpr const char* kSecret = "folders-secret";

std::vector<double> valuesOf(const Document& doc, size_t i) {
    std::vector<double> v(doc.tensors()[i].dataLen);
    doc.readValues(i, 0, v.size(), v.data());
    return v;
}

// Same tensors, names, shapes and values.
void compareDocuments(const Document& remote, const Document& local) {
    QCOMPARE(remote.tensors().size(), local.tensors().size());
    for (size_t i = 0; i < local.tensors().size(); ++i) {
        QCOMPARE(remote.tensors()[i].name, local.tensors()[i].name);
        QCOMPARE(remote.tensors()[i].shape, local.tensors()[i].shape);
        QCOMPARE(valuesOf(remote, i), valuesOf(local, i));
    }
}

size_t listings(const std::vector<testsupport::SigV4Proxy::Logged>& log) {
    return size_t(std::count_if(log.begin(), log.end(), [](const auto& l) {
        return l.request.path.find("list-type=2") != std::string::npos;
    }));
}

} // namespace

class TestS3Folders : public QObject {
    Q_OBJECT

    std::unique_ptr<testsupport::S3Server> m_server;
    std::unique_ptr<testsupport::SigV4Proxy> m_proxy;
    QTemporaryDir m_local;
    std::unique_ptr<AwsEnv> m_env;

    std::string local(const std::string& rel) const {
        return m_local.path().toStdString() + "/" + rel;
    }

private Q_SLOTS:
    void initTestCase() {
        m_server = std::make_unique<testsupport::S3Server>("train");
        QVERIFY2(m_server->start(), qPrintable(m_server->why()));
        m_proxy = std::make_unique<testsupport::SigV4Proxy>(m_server->port());
        m_proxy->addKey(kKey, kSecret);
        m_env =
            std::make_unique<AwsEnv>(AwsEnv::Vars{{"AWS_ACCESS_KEY_ID", kKey},
                                                  {"AWS_SECRET_ACCESS_KEY", kSecret},
                                                  {"AWS_ENDPOINT_URL_S3", m_proxy->endpoint()}});
        defaultHttpOptions().retryDelays = {std::chrono::milliseconds(10)};

        std::filesystem::create_directories(local("sharded"));
        testsupport::ShardedFixture().writeTo(local("sharded"));
        QVERIFY(m_server->putFolder(local("sharded"), "models/sharded"));
        testsupport::DcpFixture::make(3, {{7, 5}, {11}, {4, 3, 2}}).write(local("dcp"));
        QVERIFY(m_server->putFolder(local("dcp"), "runs/dcp/step-100"));
        testsupport::DeepSpeedFixture::make(2, 2, {{{6, 4}, {5}}}).write(local("ds"));
        QVERIFY(m_server->putFolder(local("ds"), "runs/ds"));
    }
    void cleanupTestCase() {
        m_env.reset();
        m_proxy.reset();
        m_server.reset();
    }

    // The prefix with or without its '/', as `aws s3 ls` takes it: the
    // model the local folder is, from one listing and the first bytes of
    // the index and each shard.
    void shardedModelUnderAPrefix() {
        const auto localDoc = Document::open(local("sharded"));
        for (const std::string url : {"s3://train/models/sharded/", "s3://train/models/sharded"}) {
            m_proxy->clear();
            const auto doc = Document::open(url);
            QCOMPARE(doc->path(),
                     std::string("s3://train/models/sharded/model.safetensors.index.json"));
            const auto log = m_proxy->requests();
            QCOMPARE(listings(log), size_t(1));
            for (const auto& l : log) {
                QVERIFY2(l.status == 200 || l.status == 206 ||
                             (l.status == 404 && url.back() != '/'),
                         l.request.path.c_str());
                if (l.request.path.find("list-type") == std::string::npos && l.status != 404)
                    QCOMPARE(l.request.headers.at("range"), std::string("bytes=0-65535"));
            }
            // The index and two shards, and for the name without '/' the
            // object of that name first (404).
            QCOMPARE(log.size(), size_t(url.back() == '/' ? 4 : 5));
            compareDocuments(*doc, *localDoc);
        }
    }

    // A DCP folder by its prefix: the plan's .metadata (a dot file) found in
    // the listing, each rank's file read by range.
    void dcpFolderUnderAPrefix() {
        const auto doc = Document::open("s3://train/runs/dcp/step-100");
        QCOMPARE(doc->formatModule().name, "dcp");
        compareDocuments(*doc, *Document::open(local("dcp")));
    }

    // A DeepSpeed folder: `latest` read, the tag's folder found in the
    // listing, the ranks' files listed there.
    void deepSpeedFolderUnderAPrefix() {
        const auto doc = Document::open("s3://train/runs/ds/");
        QCOMPARE(doc->formatModule().name, "deepspeed");
        compareDocuments(*doc, *Document::open(local("ds")));
    }

    // A Trainer run: checkpoint-N/ sub-prefixes, each a checkpoint with its
    // step from its trainer_state.json, read from the bucket.
    void trainerRunUnderAPrefix() {
        const testsupport::ShardedFixture f;
        for (int step : {20, 10}) {
            const std::string dir = local("run/checkpoint-" + std::to_string(step));
            std::filesystem::create_directories(dir);
            f.writeSingle(dir + "/model.safetensors");
            testsupport::ShardedFixture::write(
                dir + "/trainer_state.json",
                "{\"global_step\": " + std::to_string(step) + ", \"log_history\": [{\"step\": " +
                    std::to_string(step) + ", \"loss\": " + std::to_string(5 - step / 10) + "}]}");
        }
        QVERIFY(m_server->putFolder(local("run"), "runs/hf"));
        RunOptions options;
        options.useCache = false;
        const Run remote = readRun({"s3://train/runs/hf"}, options);
        const Run here = readRun({local("run")}, options);
        QCOMPARE(remote.checkpoints.size(), size_t(2));
        QVERIFY(remote.skipped.empty());
        for (size_t i = 0; i < 2; ++i) {
            QCOMPARE(remote.checkpoints[i].step, here.checkpoints[i].step);
            QCOMPARE(remote.checkpoints[i].name, here.checkpoints[i].name);
            QCOMPARE(remote.checkpoints[i].stepSource, StepSource::TrainerState);
            QCOMPARE(remote.checkpoints[i].trainerLog, here.checkpoints[i].trainerLog);
        }
        QCOMPARE(*remote.checkpoints[0].step, uint64_t(10));
        QCOMPARE(remote.checkpoints[0].files.front(),
                 std::string("s3://train/runs/hf/checkpoint-10/model.safetensors"));
    }

    // More than 1 000 keys: S3 lists 1 000 a page; the continuation token
    // is followed (sent, like every parameter, in canonical form).
    void listingOfMoreThanAThousandKeys() {
        for (int i = 0; i < 1003; ++i)
            QVERIFY2(m_server->put("many/k" + std::to_string(10000 + i), "x"),
                     qPrintable(m_server->why()));
        QVERIFY(m_server->put("many/sub/inner", "y"));
        m_proxy->clear();
        const std::vector<FolderEntry> entries = listFolder("s3://train/many");
        QCOMPARE(entries.size(), size_t(1004));
        QCOMPARE(entries.front().name, std::string("k10000"));
        QCOMPARE(entries.front().size, uint64_t(1));
        QCOMPARE(entries.back().name, std::string("sub"));
        QVERIFY(entries.back().folder);
        const auto log = m_proxy->requests();
        QCOMPARE(listings(log), size_t(2));
        QVERIFY(log.back().request.path.find("continuation-token=") != std::string::npos);
        QCOMPARE(log.back().status, 200);
    }

    // A prefix holding no model says what it holds; one holding nothing says so.
    void prefixesWithoutAModel() {
        // What it found instead: the count and the first names.
        const std::string plain = testsupport::openError("s3://train/many/");
        QVERIFY2(plain.starts_with("s3://train/many: ") &&
                     plain.find("no sharded model") != std::string::npos &&
                     plain.find("it holds 1003 files (k10000, k10001, k10002, …) and 1 folder "
                                "(sub)") != std::string::npos,
                 plain.c_str());
        const std::string empty = testsupport::openError("s3://train/nothing/");
        QVERIFY2(empty.find("nothing is stored under this prefix") != std::string::npos,
                 empty.c_str());
        // The bucket's root, named without a key, is a folder too. (s3rver's
        // listing at a bucket's root leaves out some of its common prefixes:
        // what it holds is not compared here.)
        const std::string root = testsupport::openError("s3://train");
        QVERIFY2(root.starts_with("s3://train: a folder holding no sharded model") &&
                     root.find("; it holds ") != std::string::npos,
                 root.c_str());
        QVERIFY(!isFolder("s3://train/nothing"));
        QVERIFY(isFolder("s3://train/many"));
        QVERIFY(folderHoldsFile("s3://train/runs/dcp/step-100", ".metadata"));
    }
};

QTEST_GUILESS_MAIN(TestS3Folders)
#include "tst_s3folders.moc"
