#pragma once

// An S3-compatible server for the s3:// tests (s3rver), and a proxy in front
// of it that checks every request's AWS Signature Version 4 as S3 does.
#include "httpservers.h"

#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace testsupport {

// s3rver (npm; packaging/install-deps.sh installs it into build/node) on a
// free port, serving a folder of its own, with one bucket. It checks the
// access key id of a signed request, not the signature (its V4 verifier is
// not written): SigV4Proxy checks signatures. Node runs it with OpenSSL's
// legacy provider: its continuation tokens are DES-encrypted.
class S3Server {
public:
    static constexpr const char* kKey = "S3RVER"; // its built-in account
    explicit S3Server(std::string bucket);
    ~S3Server();
    bool start();
    QString why() const { return m_why; }
    std::string endpoint() const; // http://127.0.0.1:PORT
    int port() const { return m_port; }
    // PUTs bytes as s3://BUCKET/KEY (unsigned: s3rver lets anyone write;
    // one connection kept for all puts); false with why() on failure.
    bool put(const std::string& key, const std::string& bytes);
    // Every file under the local folder `dir`, as PREFIX/relative path.
    bool putFolder(const std::string& dir, const std::string& prefix);

private:
    std::string m_bucket;
    QTemporaryDir m_dir;
    QProcess m_process;
    int m_port = 0;
    int m_putSocket = -1;
    std::string m_putBuffer;
    QString m_why;
};

// A proxy on 127.0.0.1 in front of an S3Server. Each request's SigV4
// signature is recomputed by AWS's published algorithm (canonical request
// with the path and query in canonical form, string to sign, derived key)
// from the secret of its access key: an unknown key gets 403
// InvalidAccessKeyId, a wrong signature 403 SignatureDoesNotMatch, a
// missing or wrong session token 403 InvalidToken, as S3 answers. Good
// requests go on to s3rver unsigned. Faults on demand: a bucket that lives
// in another region (301 PermanentRedirect with x-amz-bucket-region), and
// the next N answers as an error (503 SlowDown).
class SigV4Proxy {
public:
    explicit SigV4Proxy(int upstreamPort);
    ~SigV4Proxy();
    std::string endpoint() const; // http://127.0.0.1:PORT

    // Credentials the proxy knows; a token, when given, must come along.
    void addKey(const std::string& accessKey, const std::string& secret,
                const std::string& sessionToken = {});
    // Requests to the bucket signed for another region are redirected.
    void setBucketRegion(const std::string& bucket, const std::string& region);
    // The next `count` requests answered with this status and S3 error code.
    void failNext(int count, int status, const std::string& code);
    // Allow unsigned requests (a public bucket).
    void allowAnonymous(bool allow);

    struct Logged {
        HttpRequest request;
        int status = 0; // what the client was answered
    };
    std::vector<Logged> requests() const;
    void clear();

private:
    void serve(int fd);
    // The answer for a request refused here, or "" to forward it.
    std::string check(const HttpRequest& request, int& status);
    std::string forward(const HttpRequest& request, int& status) const;

    int m_upstream;
    mutable std::mutex m_mutex;
    struct Key {
        std::string secret, token;
    };
    std::map<std::string, Key> m_keys;
    std::map<std::string, std::string> m_regions;
    int m_failCount = 0, m_failStatus = 0;
    std::string m_failCode;
    bool m_anonymous = false;
    std::vector<Logged> m_log;
    std::unique_ptr<LoopbackListener> m_listener; // last: made when all else is
};

// The S3 error document for a code ("<Error><Code>…").
std::string s3ErrorXml(const std::string& code, const std::string& message,
                       const std::string& extra = {});

} // namespace testsupport
