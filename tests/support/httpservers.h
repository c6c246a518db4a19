#pragma once

// Real HTTP servers on 127.0.0.1 for the URL tests, started by the tests at
// a free port: nginx (what people serve files with: Range, ETag) and a small
// server of our own for the faults nginx will not make.
#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace testsupport {

// nginx serving `root` with a config written here; no root privileges needed.
// Its access log records, per request, the status, the body bytes sent, the
// Range asked for and the protocol. With `tls`, https with HTTP/2 offered
// (ALPN), under a certificate for 127.0.0.1 made at start (caFile()).
class NginxServer {
public:
    explicit NginxServer(const QString& root, bool tls = false);
    ~NginxServer();
    // False (with why()) when nginx is missing or did not start.
    bool start();
    QString why() const { return m_why; }
    std::string url(const std::string& file) const;

    struct Logged {
        int status = 0;
        uint64_t bodyBytes = 0;
        std::string range;
        std::string path;
        std::string protocol; // "HTTP/1.1", "HTTP/2.0"
    };
    // The requests served so far (the log is written as each one ends).
    std::vector<Logged> requests() const;
    void clearLog() const;
    // The certificate to trust (tls only).
    std::string caFile() const;

private:
    bool makeCertificate();

    QString m_root;
    bool m_tls = false;
    QTemporaryDir m_prefix;
    QProcess m_process;
    int m_port = 0;
    QString m_why;
};

// A file server with misbehaviours chosen by path:
//   /file           Range, a fixed ETag
//   /drop-once      the first answer is cut off half-way, later ones are whole
//   /always-drop    every answer is cut off half-way
//   /no-range       ignores Range: 200 with the whole file
//   /auth           401 unless "Authorization: Bearer <token>"
//   /slow           headers, then no byte at all
//   /etag-changes   a new ETag on every request
//   /redirect-away  302 to /auth on "localhost" (another host name)
//   /no-validator   Range, but neither ETag nor Last-Modified
//   /delayed        Range; the first answer at once (a model's index), every
//                   later one (its values) after kDelayMs
class FaultServer {
public:
    static constexpr int kDelayMs = 1500;
    FaultServer(std::string content, std::string token);
    ~FaultServer();
    int port() const { return m_port; }
    std::string url(const std::string& path, const std::string& host = "127.0.0.1") const;

    struct Request {
        std::string path;
        std::map<std::string, std::string> headers; // names lower case
    };
    std::vector<Request> requests() const;
    // What every path serves from now on (a file changed on the server).
    void setContent(std::string content);

private:
    void acceptLoop();
    void serve(int fd);
    bool answer(int fd, const Request& request);

    std::string m_content;
    std::string m_token;
    int m_listen = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_dropOnceCount{0};
    std::atomic<int> m_etagCounter{0};
    std::atomic<int> m_delayedCount{0};
    mutable std::mutex m_mutex;
    std::vector<Request> m_requests;
    std::vector<int> m_clients;
    std::vector<std::thread> m_threads;
    std::thread m_acceptor;
};

// s3rver (npm; packaging/install-deps.sh installs it into build/node) on a
// free port, serving a folder of its own, with one bucket. Objects are put
// with the curl command's own SigV4 signer, as the AWS CLI would upload
// them. s3rver checks the access key id, not the signature (its V4
// verifier is not written): the signature's form is checked against
// FaultServer's record of headers instead.
class S3Server {
public:
    static constexpr const char* kKey = "S3RVER"; // its built-in account
    explicit S3Server(std::string bucket);
    ~S3Server();
    bool start();
    QString why() const { return m_why; }
    std::string endpoint() const; // http://127.0.0.1:PORT
    // PUTs bytes as s3://BUCKET/KEY; false with why() on failure.
    bool put(const std::string& key, const std::string& bytes);

private:
    std::string m_bucket;
    QTemporaryDir m_dir;
    QProcess m_process;
    int m_port = 0;
    QString m_why;
};

} // namespace testsupport
