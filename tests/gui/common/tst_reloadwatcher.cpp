// ReloadWatcher: a change to any file a document reads (the one opened, or
// a shard of a multi-file model) is reported once it settles, whether the
// writer rewrites the file in place or renames a new one over it.
#include "common/reloadwatcher.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>

namespace {

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), bytes.size());
}

// A new file renamed over `path` in one step (rename(2) replaces it).
void renameOver(const QString& path, const QByteArray& bytes) {
    const QString temporary = path + QStringLiteral(".tmp");
    writeFile(temporary, bytes);
    QCOMPARE(
        std::rename(QFile::encodeName(temporary).constData(), QFile::encodeName(path).constData()),
        0);
}

// Two files written into a folder of their own.
struct TwoFiles {
    QTemporaryDir dir;
    QString first, second;
    TwoFiles(const QString& a, const QString& b) : first(dir.filePath(a)), second(dir.filePath(b)) {
        writeFile(first, "one");
        writeFile(second, "two");
    }
};

} // namespace

class TestReloadWatcher : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void shardWrittenInPlaceIsReported() {
        const TwoFiles files(QStringLiteral("model.safetensors.index.json"),
                             QStringLiteral("model-00002-of-00002.safetensors"));
        const QString &index = files.first, &shard = files.second;
        ReloadWatcher watcher;
        QSignalSpy changed(&watcher, &ReloadWatcher::changed);
        watcher.watch(files.dir.path(), {index, shard});
        writeFile(shard, "new bytes");
        QVERIFY(changed.wait(5000));
        QCOMPARE(watcher.path(), files.dir.path());
        QCOMPARE(changed.at(0).at(0).toStringList(), QStringList{shard}); // which one changed
        QTest::qWait(600); // one burst of writes: one report
        QCOMPARE(changed.size(), 1);
    }

    // As a training job saves: a new file renamed over the one open (the
    // document still holds the old one open, so it is never deleted).
    void fileRenamedOverIsReportedAndWatchedAgain() {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("live.oxck"));
        writeFile(file, "one");
        QFile held(file);
        QVERIFY(held.open(QIODevice::ReadOnly));
        ReloadWatcher watcher;
        QSignalSpy changed(&watcher, &ReloadWatcher::changed);
        watcher.watch(file); // no list: the path itself
        renameOver(file, "two");
        QVERIFY(changed.wait(5000));
        watcher.loading(); // the window reloads, then watches the new file
        watcher.watch(file);
        renameOver(file, "three, again");
        QVERIFY(changed.wait(5000));
        QCOMPARE(changed.size(), 2);
    }

    // A write while the reload read the file: no watch saw it (the one
    // renewed came after), yet it is reported.
    void changeDuringTheLoadIsReported() {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("live.oxck"));
        writeFile(file, "one");
        ReloadWatcher watcher;
        QSignalSpy changed(&watcher, &ReloadWatcher::changed);
        watcher.watch(file);
        watcher.loading();
        writeFile(file, "written during the load");
        watcher.watch(file); // before the event loop ran: the watch is renewed
        QVERIFY(changed.wait(5000));
        QCOMPARE(changed.at(0).at(0).toStringList(), QStringList{file});
    }

    void filesOfThePreviousDocumentAreNoLongerWatched() {
        const TwoFiles files(QStringLiteral("a.oxck"), QStringLiteral("b.oxck"));
        const QString &first = files.first, &second = files.second;
        ReloadWatcher watcher;
        QSignalSpy changed(&watcher, &ReloadWatcher::changed);
        watcher.watch(first);
        writeFile(first, "a again"); // settling as the other document opens
        QTest::qWait(100);           // its change seen, the timer running
        watcher.watch(second);
        writeFile(first, "a once more");
        QVERIFY(!changed.wait(1000));
        writeFile(second, "b again");
        QVERIFY(changed.wait(5000));
    }
};

QTEST_MAIN(TestReloadWatcher)
#include "tst_reloadwatcher.moc"
