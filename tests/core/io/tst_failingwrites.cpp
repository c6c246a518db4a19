// Writes that fail on a file-size limit (a disk filling up): the old file
// stays intact and no temporary is left behind, in the library and the CLI.
#include "testsupport.h"

#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/formats/oxck/checkpoint.h"

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <string>
#include <sys/resource.h>
#include <vector>

using namespace ckptscope;
using namespace testsupport;

namespace {

// Temporary files a failed atomic write might have left in dir.
QStringList leftovers(const QString& dir) {
    return QDir(dir).entryList({QStringLiteral(".*.tmp-*")}, QDir::Files | QDir::Hidden);
}

} // namespace

class TestFailingWrites : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void saveOverFileSizeLimitKeepsOldFile_data();
    void saveOverFileSizeLimitKeepsOldFile();
    void cliGenerateOverFileSizeLimit();
};

void TestFailingWrites::saveOverFileSizeLimitKeepsOldFile_data() {
    QTest::addColumn<bool>("gradient");
    QTest::newRow("Checkpoint::save") << false;
    QTest::newRow("GradientCheckpoint::save") << true;
}

void TestFailingWrites::saveOverFileSizeLimitKeepsOldFile() {
    // A disk that fills up, simulated by RLIMIT_FSIZE = 1 MiB in a child that
    // ignores SIGXFSZ (as the apps do): the save fails with a message naming
    // the file, the old file is intact and no temporary is left behind.
    QFETCH(bool, gradient);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path =
        dir.filePath(gradient ? QStringLiteral("old.json") : QStringLiteral("old.oxck"));
    std::string old;
    if (gradient) {
        GradientCheckpoint g;
        g.step = 7;
        g.setOptimizerState("m", {1, 2, 3});
        g.save(str(path));
    } else {
        Checkpoint ck;
        ck.addTensor({"w", {3}, {1, 2, 3}});
        ck.save(str(path));
    }
    old = testsupport::readFile(path);

    const ChildResult r = inChild(
        [] {
            std::signal(SIGXFSZ, SIG_IGN);
            const rlimit rl{rlim_t(1) << 20, rlim_t(1) << 20};
            ::setrlimit(RLIMIT_FSIZE, &rl);
        },
        [&]() -> std::string {
            try {
                if (gradient) {
                    GradientCheckpoint g;
                    g.setOptimizerState("m", std::vector<uint8_t>(1 << 20, 200)); // ~6 MiB JSON
                    g.save(str(path));
                } else {
                    Checkpoint ck;
                    ck.addTensor({"w", {1 << 20}, std::vector<float>(1 << 20, 0.5f)}); // 4 MiB
                    ck.save(str(path));
                }
                return "saved";
            } catch (const CheckpointError& e) {
                return std::string("CheckpointError ") +
                       (e.kind() == CheckpointError::Kind::Io ? "Io: " : "?: ") + e.what();
            } catch (const GradientError& e) {
                return std::string("GradientError ") +
                       (e.kind() == GradientError::Kind::Io ? "Io: " : "?: ") + e.what();
            }
        });
    QVERIFY2(!r.signalled && r.code == 0, qPrintable(r.describe()));
    const QString msg = qstr(r.text);
    QVERIFY2(msg.startsWith((gradient ? QStringLiteral("GradientError Io: ")
                                      : QStringLiteral("CheckpointError Io: ")) +
                            path + QStringLiteral(": ")),
             qPrintable(msg));
    QVERIFY2(msg.contains(QStringLiteral("the existing file was left untouched")), qPrintable(msg));
    QVERIFY(testsupport::readFile(path) == old);
    QCOMPARE(leftovers(dir.path()), QStringList());
}

void TestFailingWrites::cliGenerateOverFileSizeLimit() {
    // The CLI ignores SIGXFSZ: over a file-size limit `generate` reports the
    // failed write (exit 1) instead of being killed, and keeps the old file.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("model.oxck"));
    testsupport::writeFile(path, "old contents");
    QProcess cli;
    cli.setProgram(QStringLiteral(CKPTSCOPE_CLI_PATH));
    cli.setArguments({QStringLiteral("generate"), QStringLiteral("oxck"), path,
                      QStringLiteral("--size"), QStringLiteral("8M")});
    cli.setChildProcessModifier([] {
        const rlimit rl{rlim_t(1) << 20, rlim_t(1) << 20};
        ::setrlimit(RLIMIT_FSIZE, &rl);
    });
    cli.start();
    QVERIFY(cli.waitForFinished(240000));
    const QString err = QString::fromUtf8(cli.readAllStandardError());
    QVERIFY2(cli.exitStatus() == QProcess::NormalExit,
             qPrintable(QStringLiteral("the CLI died: ") + err));
    QCOMPARE(cli.exitCode(), 1);
    // As every error about a file reads: "FILE: error: ...".
    QVERIFY2(err.startsWith(path + QStringLiteral(": error: write failed")), qPrintable(err));
    QVERIFY(testsupport::readFile(path) == "old contents");
    QCOMPARE(leftovers(dir.path()), QStringList());
}

QTEST_GUILESS_MAIN(TestFailingWrites)
#include "tst_failingwrites.moc"
