#pragma once

#include <QString>
#include <QTemporaryDir>

#include <string>

// Helpers shared by the test executables.
namespace testsupport {

// ../shared/conformance, or empty when it is not beside the project.
QString conformanceDir();
// Skips the calling test (QSKIP) when the corpus is absent.
#define REQUIRE_CONFORMANCE()                                                                      \
    do {                                                                                           \
        if (testsupport::conformanceDir().isEmpty())                                               \
            QSKIP("../shared/conformance is not beside the project; conformance tests skipped");   \
    } while (0)

std::string readFile(const QString& path);
void writeFile(const QString& path, const std::string& bytes);

} // namespace testsupport
