#include "io/s3location.h"

#include "ckptscope/io/filesource.h"
#include "io/httpauth.h"
#include "io/s3xml.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>

namespace ckptscope::s3 {

namespace {

using http::environment;
using http::trimmed;

// One INI file of the AWS CLI: section → key → value. A key of a nested
// block (`s3 =` then indented lines) is stored as "s3.KEY".
using Ini = std::map<std::string, std::map<std::string, std::string>>;

Ini readIni(const std::string& path) {
    Ini ini;
    std::ifstream in(path);
    std::string line, section, nested;
    while (std::getline(in, line)) {
        const bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
        const std::string t = trimmed(line);
        if (t.empty() || t[0] == '#' || t[0] == ';')
            continue;
        if (t.front() == '[' && t.back() == ']') {
            section = trimmed(t.substr(1, t.size() - 2));
            nested.clear();
            continue;
        }
        const size_t eq = t.find('=');
        if (eq == std::string::npos)
            continue;
        const std::string key = trimmed(t.substr(0, eq)), value = trimmed(t.substr(eq + 1));
        if (!indented)
            nested = value.empty() ? key : std::string();
        if (indented && !nested.empty())
            ini[section][nested + "." + key] = value;
        else if (!value.empty())
            ini[section][key] = value;
    }
    return ini;
}

std::string homePath(const char* rest) {
    const std::string home = environment("HOME");
    return home.empty() ? std::string() : home + rest;
}

} // namespace

std::optional<Location> parseUrl(std::string_view url) {
    static constexpr std::string_view scheme = "s3://";
    if (url.size() < scheme.size())
        return std::nullopt;
    for (size_t i = 0; i < scheme.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(url[i])) != scheme[i])
            return std::nullopt;
    const std::string_view rest = url.substr(scheme.size());
    const size_t slash = rest.find('/');
    Location l;
    l.bucket = std::string(rest.substr(0, slash));
    l.key = slash == std::string_view::npos ? std::string() : std::string(rest.substr(slash + 1));
    if (l.bucket.empty())
        throw IoError(std::string(url) + ": an s3:// URL names a bucket (s3://BUCKET/KEY)");
    return l;
}

namespace {
std::string encoded(std::string_view text, bool keepSlash) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
            (keepSlash && c == '/')) {
            out += char(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}
} // namespace

std::string encodeKey(std::string_view key) {
    return encoded(key, true);
}

std::string canonicalQuery(std::vector<std::pair<std::string, std::string>> parameters) {
    for (auto& [name, value] : parameters) {
        name = encoded(name, false);
        value = encoded(value, false);
    }
    std::sort(parameters.begin(), parameters.end());
    std::string out;
    for (const auto& [name, value] : parameters)
        out += (out.empty() ? "" : "&") + name + "=" + value;
    return out;
}

std::optional<std::string> redirectRegion(long status, const std::string& bucketRegion,
                                          const std::string& errorBody, const std::string& region) {
    if (status != 301 && status != 307 && status != 400)
        return std::nullopt;
    std::string to = bucketRegion;
    if (to.empty())
        if (const auto reply = parseError(errorBody))
            to = reply->region;
    // A region is a plain name (eu-west-1): it becomes part of a host name.
    const bool plain =
        !to.empty() && to.size() < 64 && std::all_of(to.begin(), to.end(), [](unsigned char c) {
            return std::islower(c) || std::isdigit(c) || c == '-';
        });
    if (!plain || to == region)
        return std::nullopt;
    return to;
}

Connection connect(const Location& location, const HttpOptions& base, const std::string& region) {
    Connection c{resolve(location, region), {}};
    c.options = requestOptions(base, c.access);
    return c;
}

std::string regionLostMessage(const std::string& name, const std::string& asked,
                              const std::string& said) {
    return name + ": the bucket is in neither " + asked + " nor " + said + ", where it said it was";
}

HttpOptions requestOptions(HttpOptions base, Access& access) {
    const auto unsignedBecause = [&](const char* why) {
        access.signing.reset();
        const size_t where = access.source.find(", region ");
        access.source = std::string("no signature (") + why + ")" +
                        (where == std::string::npos ? "" : access.source.substr(where));
    };
    if (base.noSignRequest)
        unsignedBecause("--no-sign-request");
    else if (isPublicBucket(access.bucket))
        unsignedBecause("a public bucket");
    base.aws = access.signing;
    base.credentialHint =
        access.signing ? "the credentials were refused (AccessDenied or an unknown key)"
                       : "set AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
                         "AWS_PROFILE) for a bucket that is not public";
    return base;
}

Access resolve(const Location& location, const std::string& region) {
    const std::string profile =
        environment("AWS_PROFILE").empty() ? "default" : environment("AWS_PROFILE");
    const std::string credentialsFile = environment("AWS_SHARED_CREDENTIALS_FILE").empty()
                                            ? homePath("/.aws/credentials")
                                            : environment("AWS_SHARED_CREDENTIALS_FILE");
    const std::string configFile = environment("AWS_CONFIG_FILE").empty()
                                       ? homePath("/.aws/config")
                                       : environment("AWS_CONFIG_FILE");
    const Ini credentials = credentialsFile.empty() ? Ini() : readIni(credentialsFile);
    const Ini config = configFile.empty() ? Ini() : readIni(configFile);
    const auto section = [&](const Ini& ini, const std::string& name) {
        const auto it = ini.find(name);
        return it == ini.end() ? std::map<std::string, std::string>() : it->second;
    };
    const auto fromCredentials = section(credentials, profile);
    const auto fromConfig =
        section(config, profile == "default" ? std::string("default") : "profile " + profile);
    const auto value = [](const std::map<std::string, std::string>& m, const char* key) {
        const auto it = m.find(key);
        return it == m.end() ? std::string() : it->second;
    };

    Access a;
    a.bucket = location.bucket;
    AwsSigning signing;
    if (!environment("AWS_ACCESS_KEY_ID").empty() &&
        !environment("AWS_SECRET_ACCESS_KEY").empty()) {
        signing.accessKey = environment("AWS_ACCESS_KEY_ID");
        signing.secretKey = environment("AWS_SECRET_ACCESS_KEY");
        signing.sessionToken = environment("AWS_SESSION_TOKEN");
        a.source = "the credentials of the environment (AWS_ACCESS_KEY_ID)";
    } else {
        for (const auto* m : {&fromCredentials, &fromConfig}) {
            if (value(*m, "aws_access_key_id").empty())
                continue;
            signing.accessKey = value(*m, "aws_access_key_id");
            signing.secretKey = value(*m, "aws_secret_access_key");
            signing.sessionToken = value(*m, "aws_session_token");
            a.source = "the credentials of profile \"" + profile + "\" from " +
                       (m == &fromCredentials ? credentialsFile : configFile);
            break;
        }
        if (a.source.empty()) {
            if (!environment("AWS_PROFILE").empty() && fromConfig.empty() &&
                fromCredentials.empty())
                throw IoError("s3://" + location.bucket + "/" + location.key + ": profile \"" +
                              profile + "\" (AWS_PROFILE) is in neither " + credentialsFile +
                              " nor " + configFile);
            a.source = "no credentials (unsigned, as for a public bucket)";
        }
    }
    signing.region = !region.empty()                      ? region
                     : !environment("AWS_REGION").empty() ? environment("AWS_REGION")
                     : !environment("AWS_DEFAULT_REGION").empty()
                         ? environment("AWS_DEFAULT_REGION")
                     : !value(fromConfig, "region").empty() ? value(fromConfig, "region")
                                                            : std::string("us-east-1");
    std::string endpoint =
        !environment("AWS_ENDPOINT_URL_S3").empty()     ? environment("AWS_ENDPOINT_URL_S3")
        : !environment("AWS_ENDPOINT_URL").empty()      ? environment("AWS_ENDPOINT_URL")
        : !value(fromConfig, "s3.endpoint_url").empty() ? value(fromConfig, "s3.endpoint_url")
                                                        : value(fromConfig, "endpoint_url");
    while (!endpoint.empty() && endpoint.back() == '/')
        endpoint.pop_back();
    const std::string key = encodeKey(location.key);
    if (!endpoint.empty()) // an S3-compatible store: path-style addressing
        a.bucketUrl = endpoint + "/" + location.bucket + "/";
    else if (location.bucket.find('.') != std::string::npos) // dots break the TLS name
        a.bucketUrl = "https://s3." + signing.region + ".amazonaws.com/" + location.bucket + "/";
    else
        a.bucketUrl = "https://" + location.bucket + ".s3." + signing.region + ".amazonaws.com/";
    a.httpUrl = a.bucketUrl + key;
    a.region = signing.region;
    if (!signing.accessKey.empty())
        a.signing = std::move(signing);
    else
        a.signing = std::nullopt;
    a.source += ", region " + a.region;
    if (!endpoint.empty())
        a.source += ", endpoint " + endpoint;
    return a;
}

} // namespace ckptscope::s3
