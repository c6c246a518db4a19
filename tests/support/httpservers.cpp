#include "httpservers.h"

#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QThread>

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <chrono>
#include <netinet/in.h>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

namespace testsupport {

// A port nothing listens on now (the kernel's pick for an ephemeral bind).
int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        port = ntohs(addr.sin_port);
    ::close(fd);
    return port;
}

int connectLocal(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(uint16_t(port));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

bool accepting(int port) {
    const int fd = connectLocal(port);
    if (fd >= 0)
        ::close(fd);
    return fd >= 0;
}

bool waitListening(QProcess& process, int port, int tries) {
    for (int i = 0; i < tries; ++i) {
        if (accepting(port))
            return true;
        if (process.state() == QProcess::NotRunning)
            return false;
        QThread::msleep(50);
    }
    return false;
}

std::optional<HttpRequest> readRequest(int fd, std::string& buffer) {
    char chunk[4096];
    size_t end;
    while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0)
            return std::nullopt;
        buffer.append(chunk, size_t(n));
    }
    HttpRequest request;
    std::istringstream in(buffer.substr(0, end));
    buffer.erase(0, end + 4);
    std::string line;
    std::getline(in, line);
    std::istringstream(line) >> request.method >> request.path;
    while (std::getline(in, line)) {
        const size_t colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        std::string key = line.substr(0, colon);
        std::transform(key.begin(), key.end(), key.begin(),
                       [](unsigned char c) { return char(std::tolower(c)); });
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        value.erase(value.find_last_not_of("\r ") + 1);
        request.headers[key] = value;
    }
    const auto length = request.headers.find("content-length");
    const size_t want = length == request.headers.end() ? 0 : std::stoul(length->second);
    while (buffer.size() < want) {
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0)
            return std::nullopt;
        buffer.append(chunk, size_t(n));
    }
    request.body = buffer.substr(0, want);
    buffer.erase(0, want);
    return request;
}

namespace {

QString nginxBinary() {
    for (const QString& p : {QStringLiteral("/usr/sbin/nginx"), QStringLiteral("/usr/bin/nginx")})
        if (QFile::exists(p))
            return p;
    return QStandardPaths::findExecutable(QStringLiteral("nginx"));
}

} // namespace

bool sendAll(int fd, const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
        const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        sent += size_t(n);
    }
    return true;
}

NginxServer::NginxServer(const QString& root, bool tls) : m_root(root), m_tls(tls) {}

std::string NginxServer::caFile() const {
    return (m_prefix.path() + QStringLiteral("/cert.pem")).toStdString();
}

// A self-signed certificate for 127.0.0.1 (openssl, part of every system
// that has libcurl4-openssl-dev's runtime).
bool NginxServer::makeCertificate() {
    QProcess openssl;
    openssl.setProcessChannelMode(QProcess::MergedChannels);
    openssl.setWorkingDirectory(m_prefix.path());
    openssl.start(QStringLiteral("openssl"),
                  {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"),
                   QStringLiteral("rsa:2048"), QStringLiteral("-nodes"), QStringLiteral("-keyout"),
                   QStringLiteral("key.pem"), QStringLiteral("-out"), QStringLiteral("cert.pem"),
                   QStringLiteral("-days"), QStringLiteral("2"), QStringLiteral("-subj"),
                   QStringLiteral("/CN=127.0.0.1"), QStringLiteral("-addext"),
                   QStringLiteral("subjectAltName=IP:127.0.0.1")});
    if (!openssl.waitForFinished(30000) || openssl.exitCode() != 0) {
        m_why = QStringLiteral("openssl could not make a certificate: ") +
                QString::fromUtf8(openssl.readAll()) + openssl.errorString();
        return false;
    }
    return true;
}

NginxServer::~NginxServer() {
    if (m_process.state() != QProcess::NotRunning) {
        m_process.terminate();
        if (!m_process.waitForFinished(5000))
            m_process.kill();
        m_process.waitForFinished(2000);
    }
}

bool NginxServer::start() {
    const QString nginx = nginxBinary();
    if (nginx.isEmpty()) {
        m_why = QStringLiteral(
            "nginx is not installed (packaging/install-deps.sh installs nginx-light)");
        return false;
    }
    m_port = freePort();
    const QString prefix = m_prefix.path();
    QDir(prefix).mkpath(QStringLiteral("tmp"));
    if (m_tls && !makeCertificate())
        return false;
    // One process, in the foreground, logging what each test counts.
    const QString conf = QStringLiteral(R"(daemon off; master_process off; worker_processes 1;
pid %1/nginx.pid; error_log %1/error.log;
events { worker_connections 64; }
http {
  log_format counted '$status $body_bytes_sent "$http_range" $uri $server_protocol';
  access_log %1/access.log counted;
  client_body_temp_path %1/tmp; proxy_temp_path %1/tmp; fastcgi_temp_path %1/tmp;
  uwsgi_temp_path %1/tmp; scgi_temp_path %1/tmp;
  default_type application/octet-stream; gzip off; etag on;
  server { listen 127.0.0.1:%2%4; root %3; }
}
)")
                             .arg(prefix)
                             .arg(m_port)
                             .arg(m_root)
                             .arg(m_tls ? QStringLiteral(" ssl http2; ssl_certificate %1/cert.pem; "
                                                         "ssl_certificate_key %1/key.pem")
                                              .arg(prefix)
                                        : QString());
    QFile f(prefix + QStringLiteral("/nginx.conf"));
    if (!f.open(QIODevice::WriteOnly) || f.write(conf.toUtf8()) < 0) {
        m_why = QStringLiteral("cannot write the nginx config");
        return false;
    }
    f.close();
    m_process.setProcessChannelMode(QProcess::MergedChannels);
    m_process.start(nginx, {QStringLiteral("-p"), prefix, QStringLiteral("-c"),
                            prefix + QStringLiteral("/nginx.conf")});
    if (!m_process.waitForStarted(5000)) {
        m_why = QStringLiteral("nginx did not start: ") + m_process.errorString();
        return false;
    }
    if (waitListening(m_process, m_port, 100))
        return true;
    m_why = QStringLiteral("nginx did not listen: ") + QString::fromUtf8(m_process.readAll());
    return false;
}

std::string NginxServer::url(const std::string& file) const {
    return (m_tls ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(m_port) + "/" +
           file;
}

namespace {

constexpr const char* kSentinelPath = "/.ckptscope-log-sentinel";

// One HTTP/1.0 request on a connection of its own, its answer read to the end.
void roundTrip(int port, const std::string& path) {
    const int fd = connectLocal(port);
    if (fd < 0)
        return;
    if (sendAll(fd, "GET " + path + " HTTP/1.0\r\n\r\n")) {
        char buffer[4096];
        while (::recv(fd, buffer, sizeof buffer, 0) > 0) {
        }
    }
    ::close(fd);
}

} // namespace

std::vector<NginxServer::Logged> NginxServer::requests() const {
    // nginx logs a request after its last byte went out, so a client can be
    // done before the line is written. Its one worker handles events in
    // order: once a request made now is answered, every earlier one is logged.
    roundTrip(m_port, kSentinelPath);
    std::vector<Logged> out;
    QFile f(m_prefix.path() + QStringLiteral("/access.log"));
    if (!f.open(QIODevice::ReadOnly))
        return out;
    for (const QByteArray& line : f.readAll().split('\n')) {
        if (line.isEmpty())
            continue;
        std::istringstream in(line.toStdString());
        Logged l;
        in >> l.status >> l.bodyBytes >> std::quoted(l.range) >> l.path >> l.protocol;
        if (l.path != kSentinelPath)
            out.push_back(l);
    }
    return out;
}

void NginxServer::clearLog() const {
    // Wait for the lines of the requests already answered (see requests()),
    // else one of them may be written after the truncation.
    roundTrip(m_port, kSentinelPath);
    QFile f(m_prefix.path() + QStringLiteral("/access.log"));
    if (f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        f.close();
}

LoopbackListener::LoopbackListener(std::function<void(int)> serve) : m_serve(std::move(serve)) {
    m_listen = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(m_listen, 16);
    ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len);
    m_port = ntohs(addr.sin_port);
    m_acceptor = std::thread([this] {
        while (!stopping()) {
            const int fd = ::accept(m_listen, nullptr, nullptr);
            if (fd < 0)
                return;
            std::lock_guard lock(m_mutex);
            m_clients.push_back(fd);
            m_threads.emplace_back([this, fd] { m_serve(fd); });
        }
    });
}

LoopbackListener::~LoopbackListener() {
    stop();
}

void LoopbackListener::stop() {
    if (m_stop.exchange(true))
        return;
    ::shutdown(m_listen, SHUT_RDWR);
    ::close(m_listen);
    m_acceptor.join();
    {
        std::lock_guard lock(m_mutex);
        for (int fd : m_clients)
            ::shutdown(fd, SHUT_RDWR);
    }
    for (std::thread& t : m_threads)
        t.join();
}

FaultServer::FaultServer(std::string content, std::string token)
    : m_content(std::move(content)), m_token(std::move(token)),
      m_listener(std::make_unique<LoopbackListener>([this](int fd) { serve(fd); })) {}

FaultServer::~FaultServer() {
    m_listener->stop();
}

std::string FaultServer::url(const std::string& path, const std::string& host) const {
    return "http://" + host + ":" + std::to_string(port()) + path;
}

std::vector<FaultServer::Request> FaultServer::requests() const {
    std::lock_guard lock(m_mutex);
    return m_requests;
}

void FaultServer::serve(int fd) {
    std::string buffer;
    while (!stopping()) {
        const std::optional<Request> request = readRequest(fd, buffer);
        if (!request)
            break;
        {
            std::lock_guard lock(m_mutex);
            m_requests.push_back(*request);
        }
        if (!answer(fd, *request))
            break;
    }
    ::close(fd);
}

void FaultServer::setContent(std::string content) {
    std::lock_guard lock(m_mutex);
    m_content = std::move(content);
}

// Writes the answer; false closes the connection.
bool FaultServer::answer(int fd, const Request& request) {
    const auto header = [&](const char* name) {
        const auto it = request.headers.find(name);
        return it == request.headers.end() ? std::string() : it->second;
    };
    const std::string& p = request.path;
    if (p == "/auth" && header("authorization") != "Bearer " + m_token)
        return sendAll(fd, "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n");
    if (p == "/redirect-away") {
        return sendAll(fd, "HTTP/1.1 302 Found\r\nLocation: " + url("/auth", "localhost") +
                               "\r\nContent-Length: 0\r\n\r\n");
    }
    std::string content;
    {
        std::lock_guard lock(m_mutex);
        content = m_content;
    }
    const uint64_t size = content.size();
    uint64_t first = 0;
    uint64_t last = size ? size - 1 : 0;
    const auto range = request.headers.find("range");
    const bool ranged = range != request.headers.end() && p != "/no-range";
    if (ranged && std::sscanf(range->second.c_str(), "bytes=%lu-%lu", &first, &last) < 1)
        return sendAll(fd, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    last = std::min(last, size - 1);
    if (first > last)
        return sendAll(fd, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */" +
                               std::to_string(size) + "\r\nContent-Length: 0\r\n\r\n");
    std::string etag = "\"v1\"";
    if (p == "/etag-changes")
        etag = "\"v" + std::to_string(++m_etagCounter) + "\"";
    std::string head = ranged ? "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " +
                                    std::to_string(first) + "-" + std::to_string(last) + "/" +
                                    std::to_string(size) + "\r\n"
                              : "HTTP/1.1 200 OK\r\n";
    const std::string body = content.substr(first, last - first + 1);
    if (p != "/no-validator")
        head += "ETag: " + etag + "\r\n";
    head += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    if (p == "/slow") {
        sendAll(fd, head);
        while (!stopping())
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return false;
    }
    if (p == "/late-tail" && ranged && first >= size / 2)
        for (int waited = 0; waited < kDelayMs && !stopping(); waited += 20)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (p == "/delayed" && m_delayedCount++ > 0) // the index at once, values late
        for (int waited = 0; waited < kDelayMs && !stopping(); waited += 20)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const bool drop = p == "/always-drop" || (p == "/drop-once" && m_dropOnceCount++ == 0);
    if (drop) {
        sendAll(fd, head + body.substr(0, body.size() / 2));
        return false;
    }
    return sendAll(fd, head + body);
}

} // namespace testsupport
