#include "clirunner.h"

#include "testsupport.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTest>

#include <cmath>

namespace clirunner {

using nlohmann::json;

void requireCli() {
    QVERIFY2(QFileInfo::exists(QStringLiteral(CKPTSCOPE_CLI_PATH)),
             "ckptscope-cli is not built: " CKPTSCOPE_CLI_PATH);
}

Run runCli(const QStringList& args) {
    QProcess p;
    p.setProgram(QStringLiteral(CKPTSCOPE_CLI_PATH));
    p.setArguments(args);
    p.start();
    Run r;
    if (!p.waitForStarted(30000)) {
        r.err = "could not start " CKPTSCOPE_CLI_PATH;
        return r;
    }
    p.closeWriteChannel();
    if (!p.waitForFinished(240000)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out";
        return r;
    }
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1000 - p.exitCode();
    return r;
}

QString describe(const Run& r) {
    return QStringLiteral("exit %1\n--- stdout:\n%2\n--- stderr:\n%3")
        .arg(r.exitCode)
        .arg(QString::fromUtf8(r.out.left(2000)), QString::fromUtf8(r.err.left(2000)));
}

json parseOut(const Run& r) {
    return json::parse(r.out.constData(), r.out.constData() + r.out.size(), nullptr, false);
}

void addCorpusRows(const char* format) {
    QTest::addColumn<QString>("file");
    if (testsupport::conformanceDir().isEmpty()) {
        QTest::newRow("no-corpus") << QString();
        return;
    }
    using testsupport::corpus;
    for (const QString& f :
         QDir(corpus(QStringLiteral("valid"))).entryList(QDir::Files, QDir::Name))
        if (testsupport::loadJson(corpus(QStringLiteral("expected/") + f + QStringLiteral(".json")))
                .at("format") == format)
            QTest::newRow(qPrintable(f)) << f;
}

QStringList missingKeys(const json& obj, std::initializer_list<const char*> required) {
    QStringList missing;
    for (const char* k : required)
        if (!obj.is_object() || !obj.contains(k))
            missing << QLatin1String(k);
    return missing;
}

QStringList lines(const QString& text) {
    return text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

std::vector<double> sizesIn(const QString& line, const QString& unit) {
    static const QRegularExpression re(QStringLiteral("(\\d+(?:\\.\\d+)?) ?(B|KiB|MiB|GiB)\\b"));
    std::vector<double> out;
    auto it = re.globalMatch(line);
    while (it.hasNext()) {
        const auto m = it.next();
        if (m.captured(2) != unit)
            continue;
        const double scale = unit == QStringLiteral("KiB")   ? 1024.0
                             : unit == QStringLiteral("MiB") ? 1048576.0
                             : unit == QStringLiteral("GiB") ? 1073741824.0
                                                             : 1.0;
        out.push_back(m.captured(1).toDouble() * scale);
    }
    return out;
}

bool showsSize(const QString& line, uint64_t bytes) {
    const QString unit = bytes < 1024                  ? QStringLiteral("B")
                         : bytes < (1u << 20)          ? QStringLiteral("KiB")
                         : bytes < (uint64_t(1) << 30) ? QStringLiteral("MiB")
                                                       : QStringLiteral("GiB");
    for (double v : sizesIn(line, unit))
        if (std::fabs(v - double(bytes)) <= 0.06 * double(bytes))
            return true;
    return false;
}

} // namespace clirunner
