// s3://BUCKET/KEY: credentials, region and endpoint found as the AWS CLI
// finds them; requests signed by libcurl's SigV4 (their headers checked on a
// server of our own); a model read from a real S3-compatible server
// (s3rver) by range requests, values as from the local file; errors name the
// URL and where the credentials came from, never the secret.
#include "awsenv.h"
#include "clirunner.h"
#include "dcpfixture.h"
#include "s3servers.h"
#include "safetensorsbuilder.h"
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/openerror.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/io/folderlisting.h"
#include "ckptscope/io/httpsource.h"
#include "io/s3location.h"

#include <QDirIterator>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

using namespace ckptscope;
using testsupport::openError;

namespace {

void writeFile(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

std::vector<float> valuesOf(const Document& doc, size_t i) {
    std::vector<float> v(doc.tensors()[i].dataLen);
    doc.readValues(i, 0, v.size(), v.data());
    return v;
}

const std::vector<float> kValues{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

// A server with one model at s3://signed/m/model.safetensors, behind a
// proxy that checks signatures.
struct SignedBucket {
    testsupport::S3Server server{"signed"};
    std::unique_ptr<testsupport::SigV4Proxy> proxy;
    bool start() {
        testsupport::StTensor a;
        a.name = "a";
        a.dtype = "F32";
        a.shape = {3, 4};
        a.bytes = testsupport::leBytes(kValues);
        if (!server.start() || !server.put("m/model.safetensors", testsupport::stFile({a})))
            return false;
        proxy = std::make_unique<testsupport::SigV4Proxy>(server.port());
        return true;
    }
    // The key AKSIGN, known to the proxy, in the environment.
    std::unique_ptr<testsupport::AwsEnv> signedEnv() const {
        proxy->addKey("AKSIGN", "right-secret");
        return std::make_unique<testsupport::AwsEnv>(
            testsupport::AwsEnv::Vars{{"AWS_ACCESS_KEY_ID", "AKSIGN"},
                                      {"AWS_SECRET_ACCESS_KEY", "right-secret"},
                                      {"AWS_ENDPOINT_URL_S3", proxy->endpoint()}});
    }
};

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// The status the proxy gives a listing signed by curl's own SigV4 signer
// with the query exactly as written.
int curlStatus(const testsupport::SigV4Proxy& proxy, const std::string& target) {
    QProcess curl;
    curl.start(QStringLiteral("curl"),
               {QStringLiteral("-sS"), QStringLiteral("-o"), QStringLiteral("/dev/null"),
                QStringLiteral("-w"), QStringLiteral("%{http_code}"), QStringLiteral("--aws-sigv4"),
                QStringLiteral("aws:amz:us-east-1:s3"), QStringLiteral("--user"),
                QStringLiteral("AKSIGN:right-secret"), QStringLiteral("-H"),
                QStringLiteral("x-amz-content-sha256: UNSIGNED-PAYLOAD"),
                QString::fromStdString(proxy.endpoint() + "/" + target)});
    curl.waitForFinished(30000);
    return curl.readAllStandardOutput().toInt();
}

} // namespace

class TestS3 : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        // 503 SlowDown is retried as any 5xx: here without the waits.
        defaultHttpOptions().retryDelays = {std::chrono::milliseconds(5),
                                            std::chrono::milliseconds(5)};
    }

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
            testsupport::AwsEnv env({{"AWS_ACCESS_KEY_ID", "AKENV"},
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
            testsupport::AwsEnv env(testsupport::AwsEnv::Vars{{"AWS_PROFILE", "train"}});
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
            testsupport::AwsEnv env(testsupport::AwsEnv::Vars{});
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
            testsupport::AwsEnv env(testsupport::AwsEnv::Vars{});
            const s3::Access a = s3::resolve(loc);
            QVERIFY(!a.signing);
            QVERIFY(a.source.find("unsigned") != std::string::npos);
        }
        { // a profile named but absent
            testsupport::AwsEnv env(testsupport::AwsEnv::Vars{{"AWS_PROFILE", "nowhere"}});
            QVERIFY_THROWS_EXCEPTION(IoError, s3::resolve(loc));
        }
    }

    // What goes on the wire: libcurl's SigV4 Authorization for the
    // credentials and region, the unsigned payload hash, the session token;
    // never the secret.
    void requestsAreSigned() {
        testsupport::FaultServer server(std::string(100, 'x'), "");
        testsupport::AwsEnv env(
            {{"AWS_ACCESS_KEY_ID", "AKWIRE"},
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
        testsupport::AwsEnv env({{"AWS_ACCESS_KEY_ID", testsupport::S3Server::kKey},
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

    // Signatures computed as S3 computes them (the proxy): the right secret
    // passes for objects and listings; a wrong one is refused with S3's
    // code in the message and never the secret; a query signed as sent but
    // not in canonical form is refused too — why ours sends it sorted.
    void signaturesCheckedAsS3ChecksThem() {
        SignedBucket b;
        QVERIFY2(b.start(), qPrintable(b.server.why()));
        const auto env = b.signedEnv();
        const auto doc = Document::open("s3://signed/m/model.safetensors");
        QCOMPARE(valuesOf(*doc, 0), kValues);
        QCOMPARE(listFolder("s3://signed/m").front().name, std::string("model.safetensors"));
        for (const auto& l : b.proxy->requests())
            QVERIFY2(l.status == 200 || l.status == 206, l.request.path.c_str());

        qputenv("AWS_SECRET_ACCESS_KEY", "wrong-secret");
        const std::string refused = openError("s3://signed/m/model.safetensors");
        QVERIFY2(refused.starts_with("s3://signed/m/model.safetensors: ") &&
                     has(refused, "HTTP 403 Forbidden (SignatureDoesNotMatch: ") &&
                     has(refused, "the credentials of the environment") &&
                     !has(refused, "wrong-secret") && !has(refused, "right-secret"),
                 refused.c_str());
        try {
            listFolder("s3://signed/m");
            QFAIL("a listing with a wrong secret was let through");
        } catch (const IoError& e) {
            QVERIFY2(has(e.what(), "s3://signed/m/: HTTP 403 Forbidden (SignatureDoesNotMatch"),
                     e.what());
        }
        QCOMPARE(curlStatus(*b.proxy, "signed?delimiter=%2F&list-type=2&prefix=m%2F"), 200);
        QCOMPARE(curlStatus(*b.proxy, "signed?prefix=m%2F&list-type=2"), 403);
        QCOMPARE(curlStatus(*b.proxy, "signed?delimiter=/&list-type=2&prefix=m/"), 403);
    }

    // Temporary credentials: the token goes along (and is checked), else
    // S3's InvalidToken.
    void sessionTokens() {
        SignedBucket b;
        QVERIFY2(b.start(), qPrintable(b.server.why()));
        b.proxy->addKey("AKTEMP", "temp-secret", "the-session-token");
        testsupport::AwsEnv env({{"AWS_ACCESS_KEY_ID", "AKTEMP"},
                                 {"AWS_SECRET_ACCESS_KEY", "temp-secret"},
                                 {"AWS_ENDPOINT_URL_S3", b.proxy->endpoint()}});
        const std::string refused = openError("s3://signed/m/model.safetensors");
        QVERIFY2(has(refused, "InvalidToken"), refused.c_str());
        qputenv("AWS_SESSION_TOKEN", "the-session-token");
        QCOMPARE(valuesOf(*Document::open("s3://signed/m/model.safetensors"), 0), kValues);
        QVERIFY(!listFolder("s3://signed/m").empty());
    }

    // A profile's keys from the credentials file and its endpoint from the
    // config file's `s3 =` block; a refusal names the profile and the file.
    void profileFromTheConfigFiles() {
        SignedBucket b;
        QVERIFY2(b.start(), qPrintable(b.server.why()));
        b.proxy->addKey("AKPROFILE", "profile-secret");
        testsupport::AwsEnv env(testsupport::AwsEnv::Vars{{"AWS_PROFILE", "train"}});
        const std::string credentials = env.home() + "/credentials";
        qputenv("AWS_SHARED_CREDENTIALS_FILE", QByteArray::fromStdString(credentials));
        qputenv("AWS_CONFIG_FILE", QByteArray::fromStdString(env.home() + "/config"));
        writeFile(env.home() + "/config",
                  "[profile train]\nregion = us-east-1\ns3 =\n  endpoint_url = " +
                      b.proxy->endpoint() + "\n");
        writeFile(
            credentials,
            "[train]\naws_access_key_id = AKPROFILE\naws_secret_access_key = profile-secret\n");
        QCOMPARE(valuesOf(*Document::open("s3://signed/m/model.safetensors"), 0), kValues);
        writeFile(credentials,
                  "[train]\naws_access_key_id = AKPROFILE\naws_secret_access_key = stale-secret\n");
        const std::string refused = openError("s3://signed/m/model.safetensors");
        QVERIFY2(
            has(refused, "SignatureDoesNotMatch") &&
                has(refused, "with the credentials of profile \"train\" from " + credentials) &&
                !has(refused, "stale-secret"),
            refused.c_str());
    }

    // A bucket in another region than the one signed for: S3 says where it
    // is (400 AuthorizationHeaderMalformed with <Region>), and the request
    // is made again there, once — for an object and for a listing.
    void bucketInAnotherRegion() {
        SignedBucket b;
        QVERIFY2(b.start(), qPrintable(b.server.why()));
        b.proxy->setBucketRegion("signed", "eu-west-1");
        const auto env = b.signedEnv();
        QCOMPARE(valuesOf(*Document::open("s3://signed/m/model.safetensors"), 0), kValues);
        auto log = b.proxy->requests();
        QVERIFY(log.size() >= 2);
        QCOMPARE(log[0].status, 400);
        QVERIFY(has(log[0].request.headers.at("authorization"), "/us-east-1/s3/"));
        QCOMPARE(log[1].status, 206);
        QVERIFY(has(log[1].request.headers.at("authorization"), "/eu-west-1/s3/"));
        b.proxy->clear();
        QVERIFY(!listFolder("s3://signed/m").empty());
        log = b.proxy->requests();
        QCOMPARE(log.size(), size_t(2));
        QCOMPARE(log[1].status, 200);
    }

    // 503 SlowDown is retried with backoff as any 5xx; past the retries the
    // error names it.
    void slowDownIsRetried() {
        SignedBucket b;
        QVERIFY2(b.start(), qPrintable(b.server.why()));
        const auto env = b.signedEnv();
        b.proxy->failNext(2, 503, "SlowDown");
        QCOMPARE(valuesOf(*Document::open("s3://signed/m/model.safetensors"), 0), kValues);
        QCOMPARE(b.proxy->requests().front().status, 503);
        b.proxy->failNext(2, 503, "SlowDown");
        QVERIFY(!listFolder("s3://signed/m").empty());
        b.proxy->failNext(10, 503, "SlowDown");
        const std::string refused = openError("s3://signed/m/model.safetensors");
        QVERIFY2(has(refused, "HTTP 503 Service Unavailable (SlowDown: "), refused.c_str());
    }

    // The secret and the token appear nowhere: not in the CLI's output or
    // errors (refused or not), not in the summary cache a timeline writes.
    void noSecretAnywhere() {
        clirunner::requireCli();
        SignedBucket b;
        QVERIFY2(b.start(), qPrintable(b.server.why()));
        b.proxy->addKey("AKSIGN", "right-secret-0xC0FFEE", "token-0xBADC0DE");
        QTemporaryDir cache;
        testsupport::AwsEnv env({{"AWS_ACCESS_KEY_ID", "AKSIGN"},
                                 {"AWS_SECRET_ACCESS_KEY", "right-secret-0xC0FFEE"},
                                 {"AWS_SESSION_TOKEN", "token-0xBADC0DE"},
                                 {"AWS_ENDPOINT_URL_S3", b.proxy->endpoint()}});
        qputenv("XDG_CACHE_HOME", cache.path().toUtf8());
        std::string seen;
        const auto cli = [](std::initializer_list<const char*> words) {
            QStringList out;
            for (const char* w : words)
                out << QString::fromUtf8(w);
            return out;
        };
        for (const QStringList& args : {cli({"info", "s3://signed/m/model.safetensors"}),
                                        cli({"info", "--json", "s3://signed/m/model.safetensors"}),
                                        cli({"stats", "s3://signed/m/model.safetensors"}),
                                        cli({"timeline", "s3://signed/m/model.safetensors"}),
                                        cli({"info", "s3://signed/m/none.safetensors"})}) {
            const clirunner::Run r = clirunner::runCli(args);
            QVERIFY2(args.last().contains(QStringLiteral("none")) ? r.exitCode == 1
                                                                  : r.exitCode == 0,
                     qPrintable(clirunner::describe(r)));
            seen += r.out.toStdString() + r.err.toStdString();
        }
        qputenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-0xFACADE");
        const clirunner::Run refused = clirunner::runCli(cli({"info", "s3://signed/m/"}));
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.errText().contains(QStringLiteral("SignatureDoesNotMatch")),
                 qPrintable(refused.errText()));
        seen += refused.out.toStdString() + refused.err.toStdString();
        qunsetenv("XDG_CACHE_HOME");
        size_t cacheFiles = 0;
        for (QDirIterator it(cache.path(), QDir::Files, QDirIterator::Subdirectories);
             it.hasNext();) {
            QFile f(it.next());
            QVERIFY(f.open(QIODevice::ReadOnly));
            seen += f.readAll().toStdString();
            ++cacheFiles;
        }
        QVERIFY(cacheFiles > 0); // the timeline did write its summary
        for (const char* secret : {"0xC0FFEE", "0xBADC0DE", "0xFACADE"})
            QVERIFY2(!has(seen, secret), secret);
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
        testsupport::AwsEnv env({{"AWS_ACCESS_KEY_ID", testsupport::S3Server::kKey},
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
