// ReloadWatcher: a change to any file a document reads (the one opened, or
// a shard of a multi-file model) is reported once it settles, whether the
// writer rewrites the file in place or renames a new one over it.
#include "browser/reloadwatcher.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

namespace {

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), bytes.size());
}

// As a training job saves: a new file renamed over the old one.
void replaceFile(const QString& path, const QByteArray& bytes) {
    writeFile(path + QStringLiteral(".tmp"), bytes);
    QVERIFY(QFile::remove(path));
    QVERIFY(QFile::rename(path + QStringLiteral(".tmp"), path));
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

    void fileRenamedOverIsReportedAndWatchedAgain() {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("live.oxck"));
        writeFile(file, "one");
        ReloadWatcher watcher;
        QSignalSpy changed(&watcher, &ReloadWatcher::changed);
        watcher.watch(file); // no list: the path itself
        replaceFile(file, "two");
        QVERIFY(changed.wait(5000));
        watcher.rearm(); // as the window does on reloading
        writeFile(file, "three");
        QVERIFY(changed.wait(5000));
        QCOMPARE(changed.size(), 2);
    }

    void filesOfThePreviousDocumentAreNoLongerWatched() {
        const TwoFiles files(QStringLiteral("a.oxck"), QStringLiteral("b.oxck"));
        const QString &first = files.first, &second = files.second;
        ReloadWatcher watcher;
        QSignalSpy changed(&watcher, &ReloadWatcher::changed);
        watcher.watch(first);
        watcher.watch(second);
        writeFile(first, "a again");
        QVERIFY(!changed.wait(1000));
        writeFile(second, "b again");
        QVERIFY(changed.wait(5000));
    }
};

QTEST_MAIN(TestReloadWatcher)
#include "tst_reloadwatcher.moc"
