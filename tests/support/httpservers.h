#pragma once

// Real HTTP servers on 127.0.0.1 for the URL tests, started by the tests at
// a free port: nginx (what people serve files with: Range, ETag) and a small
// server of our own for the faults nginx will not make.
#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace testsupport {

// Sockets of the servers here, on 127.0.0.1.
int freePort();             // a port nothing listens on now
bool accepting(int port);   // something listens there
int connectLocal(int port); // a connected socket, or -1
// Waits (up to `tries` × 50 ms) until `process` listens on `port`; false
// when it ended or never did.
bool waitListening(QProcess& process, int port, int tries);
bool sendAll(int fd, const std::string& data);

struct HttpRequest {
    std::string method, path;                   // path with its query, as sent
    std::map<std::string, std::string> headers; // names lower case
    std::string body;
};
// The next request on the connection (its Content-Length body read too);
// nullopt when the connection ends. `buffer` keeps what was read beyond.
std::optional<HttpRequest> readRequest(int fd, std::string& buffer);

// A socket listening on a free 127.0.0.1 port; each connection is served
// by `serve(fd)` on a thread of its own (which closes fd). stop() (the
// destructor too) stops accepting, shuts the open connections down and
// joins the threads: a server stops it first, while what `serve` uses is
// still there.
class LoopbackListener {
public:
    explicit LoopbackListener(std::function<void(int)> serve);
    ~LoopbackListener();
    LoopbackListener(const LoopbackListener&) = delete;
    LoopbackListener& operator=(const LoopbackListener&) = delete;
    int port() const { return m_port; }
    bool stopping() const { return m_stop; }
    void stop();

private:
    std::function<void(int)> m_serve;
    int m_listen = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::mutex m_mutex;
    std::vector<int> m_clients;
    std::vector<std::thread> m_threads;
    std::thread m_acceptor;
};

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
//   /late-tail      Range; a range from the file's second half on answered
//                   after kDelayMs, any other at once
class FaultServer {
public:
    static constexpr int kDelayMs = 1500;
    FaultServer(std::string content, std::string token);
    ~FaultServer();
    int port() const { return m_listener->port(); }
    std::string url(const std::string& path, const std::string& host = "127.0.0.1") const;

    using Request = HttpRequest;
    std::vector<Request> requests() const;
    // What every path serves from now on (a file changed on the server).
    void setContent(std::string content);

private:
    void serve(int fd);
    bool answer(int fd, const Request& request);
    bool stopping() const { return m_listener->stopping(); }

    std::string m_content;
    std::string m_token;
    std::atomic<int> m_dropOnceCount{0};
    std::atomic<int> m_etagCounter{0};
    std::atomic<int> m_delayedCount{0};
    mutable std::mutex m_mutex;
    std::vector<Request> m_requests;
    std::unique_ptr<LoopbackListener> m_listener; // last: made when all else is
};

} // namespace testsupport
