// Files that change while they are read: rewritten in place (reads stop
// with "changed on disk"), replaced by rename (reads go on from the old
// file), and changed under a running `ckptscope-cli stats`. The 4 GiB+
// sparse file (offsets past 2^32) is tst_document's readsPast4GiBInSparseFile.
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/oxck/checkpoint.h"
#include "ckptscope/io/filesource.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace ckptscope;
using namespace testsupport;

namespace {

bool pidHasFileOpen(qint64 pid, const QString& path) {
    const std::string want = str(QFileInfo(path).canonicalFilePath());
    const QString fdDir = QStringLiteral("/proc/%1/fd").arg(pid);
    for (const QString& fd : QDir(fdDir).entryList(QDir::AllEntries | QDir::System)) {
        char target[4096];
        const ssize_t n =
            ::readlink(qPrintable(fdDir + QLatin1Char('/') + fd), target, sizeof target);
        if (n > 0 && std::string(target, size_t(n)) == want)
            return true;
    }
    return false;
}

} // namespace

class TestChangingFiles : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void sameSizeRewriteIsDetected();
    void replacedByRenameKeepsReadingOldFile();
    void cliStatsWhileFileChanges_data();
    void cliStatsWhileFileChanges();
};

void TestChangingFiles::sameSizeRewriteIsDetected() {
    // A job rewriting a checkpoint in place, to the same size: reads after it
    // stop with "changed on disk" instead of mixing old and new values.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("rewritten.oxck"));
    Checkpoint ck;
    ck.addTensor({"w", {1000}, std::vector<float>(1000, 1.0f)});
    ck.save(str(path));
    const auto doc = Document::open(str(path));
    std::vector<float> values(1000);
    doc->readValues(0, 0, 1000, values.data());
    QCOMPARE(values[999], 1.0f);

    struct stat before {};
    QCOMPARE(::stat(qPrintable(path), &before), 0);
    const std::string rewritten = [] {
        Checkpoint other;
        other.addTensor({"w", {1000}, std::vector<float>(1000, 2.0f)});
        return other.encode();
    }();
    // Rewrite until the filesystem's clock shows a new mtime (coarse clocks).
    for (int attempt = 0; attempt < 100; ++attempt) {
        const int fd = ::open(qPrintable(path), O_WRONLY | O_CLOEXEC);
        QVERIFY(fd >= 0);
        QCOMPARE(::pwrite(fd, rewritten.data(), rewritten.size(), 0), ssize_t(rewritten.size()));
        ::close(fd);
        struct stat after {};
        QCOMPARE(::stat(qPrintable(path), &after), 0);
        QCOMPARE(after.st_size, before.st_size);
        if (after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
            after.st_mtim.tv_nsec != before.st_mtim.tv_nsec)
            break;
        QThread::msleep(20);
    }
    const auto& file = dynamic_cast<const FileSource&>(doc->source());
    QVERIFY(file.contentChanged());
    QVERIFY(file.changedOnDisk());
    try {
        doc->readValues(0, 0, 1000, values.data());
        QFAIL("a read after an in-place rewrite succeeded");
    } catch (const SourceChangedError& e) {
        QCOMPARE(qstr(e.what()),
                 path + QStringLiteral(": file changed on disk while reading — reload"));
    }
    // Reopening reads the new values.
    const auto reopened = Document::open(str(path));
    reopened->readValues(0, 0, 1000, values.data());
    QCOMPARE(values[0], 2.0f);
}

void TestChangingFiles::replacedByRenameKeepsReadingOldFile() {
    // Saving by temporary file + rename (as this project does) leaves the
    // opened file intact: reads go on returning the old values, and
    // changedOnDisk() tells the GUI a newer file is there.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("replaced.oxck"));
    Checkpoint ck;
    ck.addTensor({"w", {4}, {1, 2, 3, 4}});
    ck.save(str(path));
    const auto doc = Document::open(str(path));
    Checkpoint newer;
    newer.addTensor({"w", {4}, {5, 6, 7, 8}});
    newer.save(str(path));

    const auto& file = dynamic_cast<const FileSource&>(doc->source());
    QVERIFY(file.changedOnDisk());
    QVERIFY(!file.contentChanged());
    float v[4] = {};
    doc->readValues(0, 0, 4, v);
    QCOMPARE(v[3], 4.0f);
}

void TestChangingFiles::cliStatsWhileFileChanges_data() {
    QTest::addColumn<bool>("truncate");
    QTest::newRow("truncated") << true;
    QTest::newRow("rewritten in place, same size") << false;
}

void TestChangingFiles::cliStatsWhileFileChanges() {
    // `ckptscope-cli stats` over a large (sparse) file that is truncated or
    // rewritten once the CLI has it open: exit 1 with the reload message,
    // never a signal. Deterministic enough without test hooks: wait until
    // the CLI holds the file open, give it 100 ms, change the file; if the
    // CLI was already done, try again with a file twice as large.
    QFETCH(bool, truncate);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("changing.oxck"));
    for (uint64_t values = uint64_t(1) << 28; values <= uint64_t(1) << 31; values *= 2) {
        std::string head = oxckHeader(1, 2) + "{}";
        putU32(head, 3);
        head += "big";
        putU32(head, 1);
        putU64(head, values);
        putU64(head, values);
        const uint64_t size = head.size() + values * 4;
        if (!writeSparse(path, head, size))
            QSKIP("the filesystem does not keep large sparse files sparse");

        QProcess cli;
        cli.setProgram(QStringLiteral(CKPTSCOPE_CLI_PATH));
        cli.setArguments({QStringLiteral("stats"), path});
        cli.start();
        QVERIFY(cli.waitForStarted(30000));
        const qint64 pid = cli.processId();
        // waitForFinished(1) doubles as the poll interval and notices an exit.
        bool open = false, finished = false;
        QElapsedTimer polling;
        polling.start();
        while (!open && !finished && polling.elapsed() < 60000) {
            open = pidHasFileOpen(pid, path);
            finished = !open && cli.waitForFinished(1);
        }
        if (open) {
            QThread::msleep(100);
            if (truncate) {
                QCOMPARE(::truncate(qPrintable(path), off_t(head.size() + values * 2)), 0);
            } else {
                const int fd = ::open(qPrintable(path), O_WRONLY | O_CLOEXEC);
                QVERIFY(fd >= 0);
                const std::string junk(4096, '\x7f');
                QCOMPARE(::pwrite(fd, junk.data(), junk.size(), off_t(size / 2)),
                         ssize_t(junk.size()));
                ::close(fd);
            }
        }
        QVERIFY(finished || cli.waitForFinished(240000));
        const QString err = QString::fromUtf8(cli.readAllStandardError());
        QVERIFY2(cli.exitStatus() == QProcess::NormalExit,
                 qPrintable(QStringLiteral("the CLI died: ") + err));
        if (cli.exitCode() == 0) {
            qInfo("stats over %s MiB finished before the change; doubling",
                  std::to_string(size >> 20).c_str());
            continue; // done before the change: a larger file
        }
        QCOMPARE(cli.exitCode(), 1);
        QCOMPARE(err.trimmed(),
                 path + QStringLiteral(": error: file changed on disk while reading — reload"));
        return;
    }
    QFAIL("ckptscope-cli stats always finished before the file changed");
}

QTEST_GUILESS_MAIN(TestChangingFiles)
#include "tst_changingfiles.moc"
