#pragma once

// The AWS variables of the process set for one scope, as the s3:// tests
// need them: exactly those given, the others unset, HOME an empty folder.
#include <QByteArray>
#include <QTemporaryDir>
#include <QtGlobal>

#include <map>
#include <string>

namespace testsupport {

inline const char* const kAwsVars[] = {"AWS_ACCESS_KEY_ID",
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
        for (const char* v : kAwsVars) {
            m_saved[v] = qgetenv(v);
            m_was[v] = qEnvironmentVariableIsSet(v);
            qunsetenv(v);
        }
        qputenv("HOME", m_home.path().toUtf8());
        for (const auto& [k, v] : vars)
            qputenv(k.c_str(), QByteArray::fromStdString(v));
    }
    ~AwsEnv() {
        for (const char* v : kAwsVars)
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

} // namespace testsupport
