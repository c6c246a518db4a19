// ckptscope-cli run as a process: usage and errors: --help, --version, exit 2 on bad arguments,
// exit 1 with FILE: error: … on invalid or missing files.
#include "clirunner.h"
#include "testsupport.h"

#include "ckptscope/formats/formatmodule.h"

#include <nlohmann/json.hpp>

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using nlohmann::json;
using namespace clirunner;
using testsupport::corpus;

class TestCliUsage : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void help();
    void everyOptionInHelpSynopsisAndReadme();
    void commandHelp_data();
    void commandHelp();
    void version();
    void usageErrors_data();
    void usageErrors();
    void invalidFilesExit1_data();
    void invalidFilesExit1();
    void missingFileExit1();
    void layoutAndGraphNeedAGraph();

private:
    QTemporaryDir m_tmp;
};

void TestCliUsage::initTestCase() {
    requireCli();
    QVERIFY(m_tmp.isValid());
}

void TestCliUsage::help() {
    for (const char* flag : {"--help", "-h"}) {
        const Run r = runCli({QLatin1String(flag)});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const QString text = r.outText();
        QVERIFY2(text.contains(QStringLiteral("info")), qPrintable(describe(r)));
        QVERIFY2(text.contains(QStringLiteral("stats")), qPrintable(describe(r)));
        QVERIFY2(text.contains(QStringLiteral("--json")), qPrintable(describe(r)));
        // Every format read, as the registry names it (issue 22, defect 12).
        for (const ckptscope::FormatModule& m : ckptscope::formatModules())
            QVERIFY2(text.contains(QString::fromLatin1(m.description) + QStringLiteral(" (") +
                                   QString::fromLatin1(m.extension) + QLatin1Char(')')),
                     m.description);
        QVERIFY(!text.contains(QStringLiteral("two OXCK")));
        QVERIFY(!text.contains(QStringLiteral("(OXCK, safetensors)")));
    }
}

// Every option of every command — as its --help lists them, from the
// option parser's table — is in the main help's synopsis of that command
// and in a README synopsis line of it (its long or its short name).
void TestCliUsage::everyOptionInHelpSynopsisAndReadme() {
    const QString main = runCli({QStringLiteral("--help")}).outText();
    const QString commands = main.mid(main.indexOf(QStringLiteral("\nCommands:\n")));
    const QString readme = QString::fromStdString(
        testsupport::readFile(QStringLiteral(CKPTSCOPE_SOURCE_DIR "/README.md")));
    const qsizetype cliAt = readme.indexOf(QStringLiteral("## The command line"));
    QVERIFY(cliAt >= 0);
    const QString cliSection =
        readme.mid(cliAt, readme.indexOf(QStringLiteral("\n## "), cliAt + 1) - cliAt);
    const QRegularExpression commandLine(QStringLiteral("^  ([a-z]+) "));
    QStringList names;
    for (const QString& line : commands.split(QLatin1Char('\n')))
        if (const auto m = commandLine.match(line); m.hasMatch() && !names.contains(m.captured(1)))
            names << m.captured(1);
    QVERIFY(names.size() >= 10);
    size_t checked = 0;
    for (const QString& name : names) {
        const Run r = runCli({name, QStringLiteral("--help")});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const QString help = r.outText();
        const QString options = help.mid(help.indexOf(QStringLiteral("\nOptions:\n")));
        // The command's lines of the main help (generate has three synopses).
        QString block;
        QString current;
        for (const QString& line : commands.split(QLatin1Char('\n'))) {
            if (const auto m = commandLine.match(line); m.hasMatch())
                current = m.captured(1);
            if (current == name)
                block += line + QLatin1Char('\n');
        }
        QVERIFY2(!block.isEmpty(), qPrintable(name));
        // The README's synopsis lines of the command (and their continuations).
        QString readmeLines;
        bool inCommand = false;
        for (const QString& line : cliSection.split(QLatin1Char('\n'))) {
            if (line.startsWith(QStringLiteral("    ckptscope-cli ")))
                inCommand =
                    line.startsWith(QStringLiteral("    ckptscope-cli ") + name + QLatin1Char(' '));
            else if (!line.startsWith(QStringLiteral("        ")))
                inCommand = false;
            if (inCommand)
                readmeLines += line + QLatin1Char('\n');
        }
        const QRegularExpression option(QStringLiteral("^  (?:(-[a-z]), )?(--[a-z0-9-]+)"));
        for (const QString& line : options.split(QLatin1Char('\n'))) {
            const auto m = option.match(line);
            if (!m.hasMatch() || m.captured(2) == QStringLiteral("--help"))
                continue;
            const QString longName = m.captured(2), shortName = m.captured(1);
            const auto named = [&](const QString& text) {
                return text.contains(longName) ||
                       (!shortName.isEmpty() && text.contains(shortName + QLatin1Char(' ')));
            };
            QVERIFY2(named(block), qPrintable(name + QLatin1Char(' ') + longName +
                                              QStringLiteral(": not in the main help")));
            QVERIFY2(named(readmeLines), qPrintable(name + QLatin1Char(' ') + longName +
                                                    QStringLiteral(": not in the README")));
            ++checked;
        }
    }
    QVERIFY(checked >= 30);
}

void TestCliUsage::commandHelp_data() {
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("option"); // one the help must list
    QTest::newRow("info") << QStringLiteral("info") << QStringLiteral("--json");
    QTest::newRow("stats") << QStringLiteral("stats") << QStringLiteral("--bins N");
    QTest::newRow("export") << QStringLiteral("export") << QStringLiteral("-o, --output OUT");
    QTest::newRow("convert") << QStringLiteral("convert") << QStringLiteral("IN OUT");
    QTest::newRow("layout") << QStringLiteral("layout") << QStringLiteral("--json");
    QTest::newRow("graph") << QStringLiteral("graph") << QStringLiteral("--dot");
    QTest::newRow("render") << QStringLiteral("render") << QStringLiteral("--left-right");
    QTest::newRow("diff") << QStringLiteral("diff") << QStringLiteral("--atol X");
    QTest::newRow("timeline") << QStringLiteral("timeline") << QStringLiteral("--no-cache");
    QTest::newRow("generate") << QStringLiteral("generate") << QStringLiteral("--seed S");
}

// `ckptscope-cli COMMAND --help` (or -h, also after other arguments): that
// command's usage on stdout, exit 0, no file needed.
void TestCliUsage::commandHelp() {
    QFETCH(QString, command);
    QFETCH(QString, option);
    for (const QStringList& extra :
         {QStringList{QStringLiteral("--help")}, QStringList{QStringLiteral("-h")},
          QStringList{QStringLiteral("some-file"), QStringLiteral("--help")}}) {
        const Run r = runCli(QStringList{command} + extra);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QVERIFY2(r.err.isEmpty(), qPrintable(describe(r)));
        QVERIFY2(r.outText().startsWith(QStringLiteral("Usage: ckptscope-cli ") + command +
                                        QLatin1Char(' ')),
                 qPrintable(describe(r)));
        QVERIFY2(r.outText().contains(option), qPrintable(describe(r)));
        QVERIFY2(r.outText().contains(QStringLiteral("Exit status")), qPrintable(describe(r)));
    }
}

void TestCliUsage::version() {
    const Run r = runCli({QStringLiteral("--version")});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    QVERIFY2(r.outText().contains(QStringLiteral(CKPTSCOPE_VERSION)), qPrintable(describe(r)));
}

void TestCliUsage::usageErrors_data() {
    QTest::addColumn<QStringList>("args");
    const QString f = corpus(QStringLiteral("valid/mlp.oxck"));
    QTest::newRow("no-args") << QStringList();
    QTest::newRow("unknown-command") << QStringList{QStringLiteral("frobnicate"), f};
    QTest::newRow("info-no-file") << QStringList{QStringLiteral("info")};
    QTest::newRow("info-unknown-option")
        << QStringList{QStringLiteral("info"), f, QStringLiteral("--frob")};
    QTest::newRow("info-two-files") << QStringList{QStringLiteral("info"), f, f};
    QTest::newRow("info-bins-not-allowed")
        << QStringList{QStringLiteral("info"), f, QStringLiteral("--bins"), QStringLiteral("4")};
    QTest::newRow("stats-bins-zero")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins"), QStringLiteral("0")};
    QTest::newRow("stats-bins-negative")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins"), QStringLiteral("-3")};
    QTest::newRow("stats-bins-text")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins"), QStringLiteral("abc")};
    QTest::newRow("stats-bins-suffix")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins"), QStringLiteral("8x")};
    QTest::newRow("stats-bins-missing-value")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins")};
    QTest::newRow("stats-bins-huge")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins"),
                       QStringLiteral("99999999999999999999")};
    // Only --json has a histogram: --bins elsewhere would be ignored.
    QTest::newRow("stats-bins-table")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--bins"), QStringLiteral("4")};
    QTest::newRow("stats-bins-csv")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--csv"),
                       QStringLiteral("--bins"), QStringLiteral("4")};
    QTest::newRow("stats-tensor-missing-value")
        << QStringList{QStringLiteral("stats"), f, QStringLiteral("--tensor")};
    QTest::newRow("layout-no-file") << QStringList{QStringLiteral("layout")};
    QTest::newRow("layout-dot-not-allowed")
        << QStringList{QStringLiteral("layout"), f, QStringLiteral("--dot")};
    QTest::newRow("graph-json-not-allowed")
        << QStringList{QStringLiteral("graph"), f, QStringLiteral("--json")};
}

void TestCliUsage::usageErrors() {
    QFETCH(QStringList, args);
    const Run r = runCli(args);
    QVERIFY2(r.exitCode == 2, qPrintable(describe(r)));
    QVERIFY2(!r.err.trimmed().isEmpty(), qPrintable(describe(r)));
    QVERIFY2(r.out.isEmpty(), qPrintable(describe(r)));
}

void TestCliUsage::invalidFilesExit1_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("command");
    for (const char* f : {"truncated_in_data.oxck", "hostile_tensor_count.oxck",
                          "tiny_file_huge_count.oxck", "hostile_data_len.oxck"})
        for (const char* c : {"info", "stats"})
            QTest::newRow(
                qPrintable(QStringLiteral("%1 %2").arg(QLatin1String(c), QLatin1String(f))))
                << QString::fromLatin1(f) << QString::fromLatin1(c);
}

void TestCliUsage::invalidFilesExit1() {
    REQUIRE_CONFORMANCE();
    QFETCH(QString, file);
    QFETCH(QString, command);
    const QString path = corpus(QStringLiteral("invalid/") + file);
    for (const QStringList& extra : {QStringList(), QStringList{QStringLiteral("--json")}}) {
        const Run r = runCli(QStringList{command, path} + extra);
        QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
        QVERIFY2(r.errText().startsWith(path + QStringLiteral(": error: ")),
                 qPrintable(describe(r)));
        static const QRegularExpression byteRe(QStringLiteral("\\bbyte \\d+"));
        QVERIFY2(r.errText().contains(byteRe), qPrintable(describe(r)));
        QVERIFY2(r.out.isEmpty(), qPrintable(describe(r)));
    }
}

void TestCliUsage::missingFileExit1() {
    const QString path = m_tmp.filePath(QStringLiteral("does_not_exist.oxck"));
    const Run r = runCli({QStringLiteral("info"), path});
    QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
    QVERIFY2(r.errText().startsWith(path + QStringLiteral(": error: ")), qPrintable(describe(r)));

    // Garbage: says what it found.
    const QString garbage = m_tmp.filePath(QStringLiteral("garbage.bin"));
    testsupport::writeFile(garbage, "hello, not a checkpoint");
    const Run g = runCli({QStringLiteral("stats"), garbage, QStringLiteral("--json")});
    QVERIFY2(g.exitCode == 1, qPrintable(describe(g)));
    QVERIFY2(g.errText().startsWith(garbage + QStringLiteral(": error: ")),
             qPrintable(describe(g)));
    QVERIFY2(g.errText().contains(QStringLiteral("hell")), qPrintable(describe(g)));

    // A URL of a scheme not read is said to be one, never looked up as a
    // local path (issue 38 item 8).
    const QString ftp = QStringLiteral("ftp://example.org/model.safetensors");
    const Run f = runCli({QStringLiteral("info"), ftp});
    QVERIFY2(f.exitCode == 1, qPrintable(describe(f)));
    QVERIFY2(f.errText().contains(QStringLiteral("ftp:// is not supported")) &&
                 !f.errText().contains(QStringLiteral("No such file")),
             qPrintable(describe(f)));
}

void TestCliUsage::layoutAndGraphNeedAGraph() {
    REQUIRE_CONFORMANCE();
    const QString path = corpus(QStringLiteral("valid/mlp.oxck"));
    for (const QStringList& args :
         {QStringList{QStringLiteral("layout"), path},
          QStringList{QStringLiteral("layout"), path, QStringLiteral("--json")},
          QStringList{QStringLiteral("graph"), path, QStringLiteral("--dot")}}) {
        const Run r = runCli(args);
        QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
        QVERIFY2(r.errText().startsWith(path + QStringLiteral(": error: ")),
                 qPrintable(describe(r)));
        QVERIFY2(r.errText().contains(QStringLiteral("gradient")), qPrintable(describe(r)));
        QVERIFY2(r.out.isEmpty(), qPrintable(describe(r)));
    }
    // The help names both commands.
    const Run h = runCli({QStringLiteral("--help")});
    QVERIFY(h.outText().contains(QStringLiteral("layout FILE")));
    QVERIFY(h.outText().contains(QStringLiteral("graph FILE")));
}

QTEST_GUILESS_MAIN(TestCliUsage)
#include "tst_cliusage.moc"
