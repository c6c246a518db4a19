#include "io/httpauth.h"

#include <cctype>
#include <cstdlib>
#include <fstream>

namespace ckptscope::http {

std::string environment(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

std::string trimmed(std::string s) {
    const char* space = " \t\r\n";
    s.erase(s.find_last_not_of(space) + 1);
    s.erase(0, s.find_first_not_of(space));
    return s;
}

namespace {

std::string firstLineOf(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    if (in)
        std::getline(in, line);
    return trimmed(line);
}

// "https://hub.example:8443/x" → "hub.example:8443" (the default port added).
std::string endpointHost(const std::string& url) {
    const size_t scheme = url.find("://");
    if (scheme == std::string::npos)
        return {};
    std::string rest = url.substr(scheme + 3);
    rest = rest.substr(0, rest.find('/'));
    for (char& c : rest)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    if (rest.find(':') == std::string::npos)
        rest += url.compare(0, 5, "https") == 0 ? ":443" : ":80";
    return rest;
}

} // namespace

std::string huggingFaceToken() {
    if (std::string token = trimmed(environment("HF_TOKEN")); !token.empty())
        return token;
    if (const std::string path = environment("HF_TOKEN_PATH"); !path.empty())
        return firstLineOf(path);
    if (const std::string home = environment("HF_HOME"); !home.empty())
        return firstLineOf(home + "/token");
    const std::string cache = environment("XDG_CACHE_HOME");
    if (!cache.empty())
        return firstLineOf(cache + "/huggingface/token");
    if (const std::string home = environment("HOME"); !home.empty())
        return firstLineOf(home + "/.cache/huggingface/token");
    return {};
}

bool isHuggingFaceHost(const std::string& hostPort) {
    if (hostPort == "huggingface.co:443")
        return true;
    const std::string endpoint = environment("HF_ENDPOINT");
    return !endpoint.empty() && endpointHost(endpoint) == hostPort;
}

} // namespace ckptscope::http
