// s3://BUCKET/KEY: credentials, region and endpoint found as the AWS CLI
// finds them; requests signed by libcurl's SigV4 (their headers checked on a
// server of our own); a model read from a real S3-compatible server
// (s3rver) by range requests, values as from the local file; errors name the
// URL and where the credentials came from, never the secret.
#include "dcpfixture.h"
#include "httpservers.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/openerror.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/httpsource.h"
#include "io/s3location.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

using namespace ckptscope;

namespace {

const char* const kVars[] = {"AWS_ACCESS_KEY_ID",
                             "AWS_SECRET_ACCESS_KEY",
                             "AWS_SESSION_TOKEN",
                             "AWS_PROFILE",
                             "AWS_SHARED_CREDENTIALS_FILE",
                             "AWS_CONFIG_FILE",
                             "AWS_REGION",
                             "AWS_DEFAULT_REGION",
                             "AWS_ENDPOINT_URL_S3",
                             "AWS_ENDPOINT_URL",
                             "HOME"};

// Sets exactly these AWS variables (the rest unset) for one scope; HOME
// points to an empty folder unless given.
class AwsEnv {
public:
    using Vars = std::map<std::string, std::string>;
    explicit AwsEnv(const Vars& vars) {
        for (const char* v : kVars) {
            m_saved[v] = qgetenv(v);
            m_was[v] = qEnvironmentVariableIsSet(v);
            qunsetenv(v);
        }
        qputenv("HOME", m_home.path().toUtf8());
        for (const auto& [k, v] : vars)
            qputenv(k.c_str(), QByteArray::fromStdString(v));
    }
    ~AwsEnv() {
        for (const char* v : kVars)
            if (m_was[v])
                qputenv(v, m_saved[v]);
            else
                qunsetenv(v);
    }
    std::string home() const { return m_home.path().toStdString(); }

private:
    QTemporaryDir m_home;
    std::map<std::string, QByteArray> m_saved;
    std::map<std::string, bool> m_was;
};

void writeFile(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

std::vector<float> valuesOf(const Document& doc, size_t i) {
    std::vector<float> v(doc.tensors()[i].dataLen);
    doc.readValues(i, 0, v.size(), v.data());
    return v;
}

} // namespace

class TestS3 : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void urlsAndKeys() {
        const auto l = s3::parseUrl("S3://my-bucket/runs/step 1/model+x.safetensors");
        QVERIFY(l);
        QCOMPARE(l->bucket, std::string("my-bucket"));
        QCOMPARE(l->key, std::string("runs/step 1/model+x.safetensors"));
        QCOMPARE(s3::encodeKey(l->key), std::string("runs/step%201/model%2Bx.safetensors"));
        QCOMPARE(s3::encodeKey("é~_-."), std::string("%C3%A9~_-."));
        QVERIFY(!s3::parseUrl("https://x/y"));
        QVERIFY_THROWS_EXCEPTION(IoError, s3::parseUrl("s3:///key"));
        QVERIFY(isUrl("s3://b/k"));
    }

    // The AWS CLI's order: the environment, else the profile's credentials
    // file, else its config; region and endpoint likewise.
    void credentialsAsTheAwsCliFindsThem() {
        const s3::Location loc{"bucket", "a/b.safetensors"};
        {
            AwsEnv env({{"AWS_ACCESS_KEY_ID", "AKENV"},
                        {"AWS_SECRET_ACCESS_KEY", "secret-env"},
                        {"AWS_SESSION_TOKEN", "tok"},
                        {"AWS_REGION", "eu-west-3"}});
            const s3::Access a = s3::resolve(loc);
            QVERIFY(a.signing);
            QCOMPARE(a.signing->accessKey, std::string("AKENV"));
            QCOMPARE(a.signing->sessionToken, std::string("tok"));
            QCOMPARE(a.signing->region, std::string("eu-west-3"));
            QCOMPARE(a.httpUrl,
                     std::string("https://bucket.s3.eu-west-3.amazonaws.com/a/b.safetensors"));
            QVERIFY(a.source.find("environment") != std::string::npos);
            QVERIFY(a.source.find("secret-env") == std::string::npos);
        }
        {
            AwsEnv env(AwsEnv::Vars{{"AWS_PROFILE", "train"}});
            writeFile(env.home() + "/credentials", "[default]\naws_access_key_id = AKDEF\n"
                                                   "aws_secret_access_key = s0\n"
                                                   "[train]\naws_access_key_id = AKTRAIN\n"
                                                   "aws_secret_access_key = s1\n");
            writeFile(env.home() + "/config", "[profile train]\nregion = ap-south-1\ns3 =\n"
                                              "  endpoint_url = http://minio.local:9000/\n");
            qputenv("AWS_SHARED_CREDENTIALS_FILE",
                    QByteArray::fromStdString(env.home() + "/credentials"));
            qputenv("AWS_CONFIG_FILE", QByteArray::fromStdString(env.home() + "/config"));
            const s3::Access a = s3::resolve(loc);
            QVERIFY(a.signing);
            QCOMPARE(a.signing->accessKey, std::string("AKTRAIN"));
            QCOMPARE(a.signing->region, std::string("ap-south-1"));
            // An S3-compatible endpoint: path-style.
            QCOMPARE(a.httpUrl, std::string("http://minio.local:9000/bucket/a/b.safetensors"));
            QVERIFY2(a.source.find("profile \"train\" from " + env.home() + "/credentials") !=
                         std::string::npos,
                     a.source.c_str());
        }
        { // ~/.aws by default; a bucket with dots is addressed path-style
            AwsEnv env(AwsEnv::Vars{});
            std::filesystem::create_directories(env.home() + "/.aws");
            writeFile(env.home() + "/.aws/config",
                      "[default]\nregion = us-west-2\naws_access_key_id = AKCFG\n"
                      "aws_secret_access_key = s2\n");
            const s3::Access a = s3::resolve({"my.bucket", "k"});
            QVERIFY(a.signing);
            QCOMPARE(a.signing->accessKey, std::string("AKCFG"));
            QCOMPARE(a.httpUrl, std::string("https://s3.us-west-2.amazonaws.com/my.bucket/k"));
        }
        { // no credentials: unsigned, said so
            AwsEnv env(AwsEnv::Vars{});
            const s3::Access a = s3::resolve(loc);
            QVERIFY(!a.signing);
            QVERIFY(a.source.find("unsigned") != std::string::npos);
        }
        { // a profile named but absent
            AwsEnv env(AwsEnv::Vars{{"AWS_PROFILE", "nowhere"}});
            QVERIFY_THROWS_EXCEPTION(IoError, s3::resolve(loc));
        }
    }

    // What goes on the wire: libcurl's SigV4 Authorization for the
    // credentials and region, the unsigned payload hash, the session token;
    // never the secret.
    void requestsAreSigned() {
        testsupport::FaultServer server(std::string(100, 'x'), "");
        AwsEnv env({{"AWS_ACCESS_KEY_ID", "AKWIRE"},
                    {"AWS_SECRET_ACCESS_KEY", "never-sent"},
                    {"AWS_SESSION_TOKEN", "session-tok"},
                    {"AWS_REGION", "eu-central-1"},
                    {"AWS_ENDPOINT_URL_S3", "http://127.0.0.1:" + std::to_string(server.port())}});
        try {
            HttpSource source("s3://bucket/file");
        } catch (const IoError& e) { // the server knows no /bucket/file
            QVERIFY(std::string(e.what()).find("never-sent") == std::string::npos);
            QVERIFY(std::string(e.what()).starts_with("s3://bucket/file: "));
        }
        const auto requests = server.requests();
        QVERIFY(!requests.empty());
        const auto& h = requests.front().headers;
        QCOMPARE(requests.front().path, std::string("/bucket/file"));
        QVERIFY2(h.count("authorization") &&
                     h.at("authorization").starts_with("AWS4-HMAC-SHA256 Credential=AKWIRE/") &&
                     h.at("authorization").find("/eu-central-1/s3/aws4_request") !=
                         std::string::npos,
                 h.count("authorization") ? h.at("authorization").c_str() : "none");
        QCOMPARE(h.at("x-amz-content-sha256"), std::string("UNSIGNED-PAYLOAD"));
        QCOMPARE(h.at("x-amz-security-token"), std::string("session-tok"));
        QVERIFY(h.count("x-amz-date"));
        for (const auto& [k, v] : h)
            QVERIFY(v.find("never-sent") == std::string::npos);
        // --no-sign-request: the same object asked for without a signature.
        HttpOptions unsignedOptions;
        unsignedOptions.noSignRequest = true;
        try {
            HttpSource source("s3://bucket/file", unsignedOptions);
        } catch (const IoError& e) {
            QVERIFY2(std::string(e.what()).find("--no-sign-request") != std::string::npos,
                     e.what());
        }
        const auto again = server.requests();
        QVERIFY(again.size() > requests.size());
        QVERIFY(!again.back().headers.count("authorization"));
        QVERIFY(!again.back().headers.count("x-amz-security-token"));
    }

    // A real S3-compatible server: a model put there opens by s3:// in every
    // reader, its values as from the local file; an access key it does not
    // know and a missing key are errors naming the URL.
    void modelFromAnS3Server() {
        testsupport::S3Server server("models");
        QVERIFY2(server.start(), qPrintable(server.why()));
        const std::string bytes = testsupport::stFile(
            {{"a",
              "F32",
              {3, 4},
              testsupport::leBytes(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})},
             {"b", "F32", {2}, testsupport::leBytes(std::vector<float>{-1.5f, 0.25f})}});
        QVERIFY2(server.put("run/step-1/model.safetensors", bytes), qPrintable(server.why()));
        AwsEnv env({{"AWS_ACCESS_KEY_ID", testsupport::S3Server::kKey},
                    {"AWS_SECRET_ACCESS_KEY", "S3RVER"},
                    {"AWS_ENDPOINT_URL_S3", server.endpoint()}});
        const auto doc = Document::open("s3://models/run/step-1/model.safetensors");
        QCOMPARE(doc->path(), std::string("s3://models/run/step-1/model.safetensors"));
        QCOMPARE(doc->tensors().size(), size_t(2));
        QCOMPARE(valuesOf(*doc, 0), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
        QCOMPARE(valuesOf(*doc, 1), (std::vector<float>{-1.5f, 0.25f}));
        try {
            Document::open("s3://models/run/none.safetensors");
            QFAIL("a missing key opened");
        } catch (const OpenError& e) {
            const std::string w = e.what();
            QVERIFY2(w.find("s3://models/run/none.safetensors") != std::string::npos &&
                         w.find("404") != std::string::npos,
                     e.what());
        }
        qputenv("AWS_ACCESS_KEY_ID", "UNKNOWNKEY");
        qputenv("AWS_SECRET_ACCESS_KEY", "top-secret");
        try {
            Document::open("s3://models/run/step-1/model.safetensors");
            QFAIL("an unknown access key was let in");
        } catch (const OpenError& e) {
            const std::string w = e.what();
            QVERIFY2(w.find("403") != std::string::npos &&
                         w.find("the credentials of the environment") != std::string::npos &&
                         w.find("were refused") != std::string::npos &&
                         w.find("--header") == std::string::npos &&
                         w.find("top-secret") == std::string::npos,
                     e.what());
        }
    }

    // A DCP folder on the server opens by its .metadata (a prefix cannot be
    // listed yet): the ranks' files named by the plan, chunks read on demand.
    void dcpByItsMetadata() {
        testsupport::S3Server server("ckpts");
        QVERIFY2(server.start(), qPrintable(server.why()));
        const testsupport::DcpFixture f = testsupport::DcpFixture::make(2, {{5, 3}, {7}});
        QTemporaryDir dir;
        f.write(dir.path().toStdString());
        for (const auto& e : std::filesystem::directory_iterator(dir.path().toStdString())) {
            std::ifstream in(e.path(), std::ios::binary);
            const std::string bytes((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
            QVERIFY2(server.put("run/step-10/" + e.path().filename().string(), bytes),
                     qPrintable(server.why()));
        }
        AwsEnv env({{"AWS_ACCESS_KEY_ID", testsupport::S3Server::kKey},
                    {"AWS_SECRET_ACCESS_KEY", "S3RVER"},
                    {"AWS_ENDPOINT_URL_S3", server.endpoint()}});
        const auto doc = Document::open("s3://ckpts/run/step-10/.metadata");
        QCOMPARE(doc->formatModule().name, "dcp");
        QCOMPARE(doc->tensors().size(), f.tensors.size());
        for (size_t i = 0; i < f.tensors.size(); ++i) {
            QCOMPARE(doc->tensors()[i].name, f.tensors[i].fqn);
            QCOMPARE(valuesOf(*doc, i), f.tensors[i].values);
        }
    }
};

QTEST_GUILESS_MAIN(TestS3)
#include "tst_s3.moc"
