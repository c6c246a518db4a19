#include "s3servers.h"

#include <QCryptographicHash>
#include <QFile>
#include <QMessageAuthenticationCode>
#include <QProcessEnvironment>

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <netinet/in.h>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

namespace testsupport {

namespace {

std::string hex(const QByteArray& bytes) {
    return bytes.toHex().toStdString();
}

QByteArray hmac(const QByteArray& key, const std::string& message) {
    return QMessageAuthenticationCode::hash(QByteArray::fromStdString(message), key,
                                            QCryptographicHash::Sha256);
}

std::string percentDecoded(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() &&
            std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
            out += char(std::stoi(s.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

// AWS's UriEncode: every byte but A-Za-z0-9-_.~ (and '/' in a path) as %XX.
std::string uriEncoded(const std::string& s, bool keepSlash) {
    static const char* digits = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
            (keepSlash && c == '/')) {
            out += char(c);
        } else {
            out += '%';
            out += digits[c >> 4];
            out += digits[c & 15];
        }
    }
    return out;
}

std::string trimmed(std::string v) {
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t") + 1);
    std::string out; // inner runs of spaces as one
    for (char c : v)
        if (!(c == ' ' && !out.empty() && out.back() == ' '))
            out += c;
    return out;
}

std::vector<std::string> split(const std::string& s, char by) {
    std::vector<std::string> out;
    std::string part;
    std::istringstream in(s);
    while (std::getline(in, part, by))
        out.push_back(part);
    return out;
}

std::string answer(int status, const std::string& reason, const std::string& body,
                   const std::string& headers = {}) {
    return "HTTP/1.1 " + std::to_string(status) + " " + reason +
           "\r\nContent-Type: application/xml\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n" + headers + "\r\n" + body;
}

} // namespace

std::string s3ErrorXml(const std::string& code, const std::string& message,
                       const std::string& extra) {
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code + "</Code><Message>" +
           message + "</Message>" + extra + "<RequestId>test</RequestId></Error>";
}

S3Server::S3Server(std::string bucket) : m_bucket(std::move(bucket)) {}

S3Server::~S3Server() {
    if (m_putSocket >= 0)
        ::close(m_putSocket);
    if (m_process.state() != QProcess::NotRunning) {
        m_process.kill();
        m_process.waitForFinished(5000);
    }
}

bool S3Server::start() {
    const QString bin =
        qEnvironmentVariableIsSet("CKPTSCOPE_S3RVER")
            ? qEnvironmentVariable("CKPTSCOPE_S3RVER")
            : QStringLiteral(CKPTSCOPE_SOURCE_DIR "/build/node/node_modules/.bin/s3rver");
    if (!QFile::exists(bin)) {
        m_why = QStringLiteral("s3rver is not installed at ") + bin +
                QStringLiteral(" (packaging/install-deps.sh installs it)");
        return false;
    }
    m_port = freePort();
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("NODE_OPTIONS"), QStringLiteral("--openssl-legacy-provider"));
    m_process.setProcessEnvironment(env);
    m_process.setProcessChannelMode(QProcess::MergedChannels);
    m_process.start(bin, {QStringLiteral("--directory"), m_dir.path(), QStringLiteral("--address"),
                          QStringLiteral("127.0.0.1"), QStringLiteral("--port"),
                          QString::number(m_port), QStringLiteral("--configure-bucket"),
                          QString::fromStdString(m_bucket), QStringLiteral("--silent")});
    if (!m_process.waitForStarted(10000)) {
        m_why = QStringLiteral("s3rver did not start: ") + m_process.errorString();
        return false;
    }
    if (waitListening(m_process, m_port, 200))
        return true;
    m_why = QStringLiteral("s3rver did not listen: ") + QString::fromUtf8(m_process.readAll());
    return false;
}

std::string S3Server::endpoint() const {
    return "http://127.0.0.1:" + std::to_string(m_port);
}

bool S3Server::put(const std::string& key, const std::string& bytes) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (m_putSocket < 0) {
            m_putSocket = connectLocal(m_port);
            m_putBuffer.clear();
        }
        const std::string request =
            "PUT /" + m_bucket + "/" + key +
            " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(bytes.size()) +
            "\r\n\r\n";
        // One write: headers then body in two would wait out a delayed ACK
        // (40 ms) each.
        if (m_putSocket >= 0 && sendAll(m_putSocket, request + bytes)) {
            // The answer reads like a request: its status line's first two
            // words land in method and path.
            std::optional<HttpRequest> reply = readRequest(m_putSocket, m_putBuffer);
            if (reply && reply->method == "HTTP/1.1" && reply->path == "200")
                return true;
            if (reply) {
                m_why = QString::fromStdString("PUT " + key + ": HTTP " + reply->path);
                return false;
            }
        }
        ::close(m_putSocket); // s3rver closed the kept connection: once more on a new one
        m_putSocket = -1;
    }
    m_why = QString::fromStdString("PUT " + key + ": no answer from s3rver");
    return false;
}

bool S3Server::putFolder(const std::string& dir, const std::string& prefix) {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file())
            continue;
        std::ifstream in(it->path(), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
        if (!put(prefix + "/" + fs::relative(it->path(), dir).string(), bytes))
            return false;
    }
    return !ec;
}

SigV4Proxy::SigV4Proxy(int upstreamPort)
    : m_upstream(upstreamPort),
      m_listener(std::make_unique<LoopbackListener>([this](int fd) { serve(fd); })) {}

SigV4Proxy::~SigV4Proxy() {
    m_listener->stop();
}

std::string SigV4Proxy::endpoint() const {
    return "http://127.0.0.1:" + std::to_string(m_listener->port());
}

void SigV4Proxy::addKey(const std::string& accessKey, const std::string& secret,
                        const std::string& sessionToken) {
    std::lock_guard lock(m_mutex);
    m_keys[accessKey] = {secret, sessionToken};
}

void SigV4Proxy::setBucketRegion(const std::string& bucket, const std::string& region) {
    std::lock_guard lock(m_mutex);
    m_regions[bucket] = region;
}

void SigV4Proxy::failNext(int count, int status, const std::string& code) {
    std::lock_guard lock(m_mutex);
    m_failCount = count;
    m_failStatus = status;
    m_failCode = code;
}

void SigV4Proxy::allowAnonymous(bool allow) {
    std::lock_guard lock(m_mutex);
    m_anonymous = allow;
}

std::vector<SigV4Proxy::Logged> SigV4Proxy::requests() const {
    std::lock_guard lock(m_mutex);
    return m_log;
}

void SigV4Proxy::clear() {
    std::lock_guard lock(m_mutex);
    m_log.clear();
}

// One request a connection: every answer closes it.
void SigV4Proxy::serve(int fd) {
    std::string buffer;
    if (const std::optional<HttpRequest> request = readRequest(fd, buffer)) {
        int status = 0;
        std::string reply = check(*request, status);
        if (reply.empty())
            reply = forward(*request, status);
        {
            std::lock_guard lock(m_mutex);
            m_log.push_back({*request, status});
        }
        sendAll(fd, reply);
    }
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
}

std::string SigV4Proxy::check(const HttpRequest& r, int& status) {
    std::lock_guard lock(m_mutex);
    const auto header = [&](const char* name) {
        const auto it = r.headers.find(name);
        return it == r.headers.end() ? std::string() : it->second;
    };
    const auto refuse = [&](int code, const std::string& reason, const std::string& s3code,
                            const std::string& message, const std::string& extra = {},
                            const std::string& headers = {}) {
        status = code;
        return answer(code, reason, s3ErrorXml(s3code, message, extra), headers);
    };
    if (m_failCount > 0) {
        --m_failCount;
        return refuse(m_failStatus, m_failStatus == 503 ? "Slow Down" : "Error", m_failCode,
                      "injected by the test proxy");
    }
    const std::string target = r.path;
    const size_t q = target.find('?');
    const std::string path = target.substr(0, q);
    const std::string query = q == std::string::npos ? "" : target.substr(q + 1);
    const std::string bucket =
        split(path.substr(1), '/').empty() ? "" : split(path.substr(1), '/')[0];
    const std::string auth = header("authorization");
    if (auth.empty()) {
        if (m_anonymous)
            return {};
        return refuse(403, "Forbidden", "AccessDenied", "Access Denied");
    }
    // AWS4-HMAC-SHA256 Credential=AK/DATE/REGION/s3/aws4_request,
    // SignedHeaders=a;b, Signature=HEX
    std::map<std::string, std::string> fields;
    const std::string prefix = "AWS4-HMAC-SHA256 ";
    if (auth.compare(0, prefix.size(), prefix) != 0)
        return refuse(400, "Bad Request", "InvalidArgument", "Unsupported Authorization Type");
    for (std::string part : split(auth.substr(prefix.size()), ',')) {
        part = trimmed(part);
        const size_t eq = part.find('=');
        if (eq != std::string::npos)
            fields[part.substr(0, eq)] = part.substr(eq + 1);
    }
    const std::vector<std::string> scope = split(fields["Credential"], '/');
    if (scope.size() != 5 || scope[4] != "aws4_request")
        return refuse(400, "Bad Request", "AuthorizationHeaderMalformed", "bad Credential");
    const auto key = m_keys.find(scope[0]);
    if (key == m_keys.end())
        return refuse(403, "Forbidden", "InvalidAccessKeyId",
                      "The AWS Access Key Id you provided does not exist in our records.");
    if (const auto home = m_regions.find(bucket);
        home != m_regions.end() && home->second != scope[2])
        return refuse(400, "Bad Request", "AuthorizationHeaderMalformed",
                      "the region '" + scope[2] + "' is wrong; expecting '" + home->second + "'",
                      "<Region>" + home->second + "</Region>");
    if (!key->second.token.empty() && header("x-amz-security-token") != key->second.token)
        return refuse(403, "Forbidden", "InvalidToken",
                      "The provided token is malformed or otherwise invalid.");
    const std::string payload = header("x-amz-content-sha256");
    if (payload.empty())
        return refuse(400, "Bad Request", "InvalidRequest",
                      "Missing required header for this request: x-amz-content-sha256");
    // The canonical request, from the request as S3 reads it: path and
    // query decoded and encoded again, the query sorted.
    std::vector<std::pair<std::string, std::string>> params;
    for (const std::string& p : split(query, '&')) {
        if (p.empty())
            continue;
        const size_t eq = p.find('=');
        params.emplace_back(uriEncoded(percentDecoded(p.substr(0, eq)), false),
                            eq == std::string::npos
                                ? std::string()
                                : uriEncoded(percentDecoded(p.substr(eq + 1)), false));
    }
    std::sort(params.begin(), params.end());
    std::string canonicalQuery;
    for (const auto& [n, v] : params)
        canonicalQuery += (canonicalQuery.empty() ? "" : "&") + n + "=" + v;
    std::string canonicalHeaders;
    const std::string signedHeaders = fields["SignedHeaders"];
    bool hostSigned = false;
    for (const std::string& name : split(signedHeaders, ';')) {
        hostSigned = hostSigned || name == "host";
        canonicalHeaders += name + ":" + trimmed(header(name.c_str())) + "\n";
    }
    if (!hostSigned)
        return refuse(400, "Bad Request", "AuthorizationHeaderMalformed", "host is not signed");
    const std::string canonicalRequest = r.method + "\n" + uriEncoded(percentDecoded(path), true) +
                                         "\n" + canonicalQuery + "\n" + canonicalHeaders + "\n" +
                                         signedHeaders + "\n" + payload;
    const std::string stringToSign =
        "AWS4-HMAC-SHA256\n" + header("x-amz-date") + "\n" + scope[1] + "/" + scope[2] + "/" +
        scope[3] + "/aws4_request\n" +
        hex(QCryptographicHash::hash(QByteArray::fromStdString(canonicalRequest),
                                     QCryptographicHash::Sha256));
    QByteArray signingKey = QByteArray::fromStdString("AWS4" + key->second.secret);
    for (const std::string& part : {scope[1], scope[2], scope[3], std::string("aws4_request")})
        signingKey = hmac(signingKey, part);
    if (hex(hmac(signingKey, stringToSign)) != fields["Signature"])
        return refuse(403, "Forbidden", "SignatureDoesNotMatch",
                      "The request signature we calculated does not match the signature you "
                      "provided. Check your key and signing method.");
    return {};
}

std::string SigV4Proxy::forward(const HttpRequest& r, int& status) const {
    const int fd = connectLocal(m_upstream);
    if (fd < 0) {
        status = 502;
        return answer(502, "Bad Gateway", "");
    }
    std::string out = r.method + " " + r.path +
                      " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(m_upstream) +
                      "\r\nConnection: close\r\n";
    for (const auto& [name, value] : r.headers)
        if (name != "authorization" && name != "x-amz-security-token" && name != "host" &&
            name != "connection")
            out += name + ": " + value + "\r\n";
    out += "\r\n" + r.body;
    std::string reply;
    if (sendAll(fd, out)) {
        char chunk[16384];
        ssize_t n;
        while ((n = ::recv(fd, chunk, sizeof chunk, 0)) > 0)
            reply.append(chunk, size_t(n));
    }
    ::close(fd);
    const size_t sp = reply.find(' ');
    status = sp == std::string::npos ? 0 : std::atoi(reply.c_str() + sp + 1);
    return reply;
}

} // namespace testsupport
