#pragma once

#include <nlohmann/json_fwd.hpp>

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

// ckptscope-cli run as a process by the tst_cli* tests, and what they read
// in its output.
namespace clirunner {

struct Run {
    int exitCode = -1; // -1000 - code when the process crashed
    QByteArray out, err;
    QString errText() const { return QString::fromUtf8(err); }
    QString outText() const { return QString::fromUtf8(out); }
};

// Fails the calling test (initTestCase) when ckptscope-cli is not built.
void requireCli();
// Runs CKPTSCOPE_CLI_PATH with args (stdin closed; 4 minutes at most).
Run runCli(const QStringList& args);
// Exit code, stdout and stderr (the first 2000 bytes of each) for a message.
QString describe(const Run& r);
// Parses stdout as JSON; on failure returns a discarded value.
nlohmann::json parseOut(const Run& r);

// One data row "file" per valid corpus file whose expected/NAME.json says
// "format": format — or one "no-corpus" row, for REQUIRE_CONFORMANCE().
void addCorpusRows(const char* format);

// Keys of `obj` that `required` lists but it lacks.
QStringList missingKeys(const nlohmann::json& obj, std::initializer_list<const char*> required);
// Non-empty lines.
QStringList lines(const QString& text);
// Every "<n> <unit>" size in a line in the given unit (B, KiB, MiB, GiB), in bytes.
std::vector<double> sizesIn(const QString& line, const QString& unit);
// The line shows `bytes` in the unit it calls for, to the displayed precision.
bool showsSize(const QString& line, uint64_t bytes);

} // namespace clirunner
