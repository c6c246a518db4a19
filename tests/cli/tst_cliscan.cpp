// ckptscope-cli scan: every malicious file of the PyTorch corpus is found
// (exit 1) with its payload's arguments, nothing runs, a Trainer folder is
// clean (exit 0), an unreadable pickle is exit 2, and files without a pickle
// are skipped and counted.
#include "clirunner.h"
#include "picklewriter.h"
#include "testsupport.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace clirunner;

namespace {

QString pt(const QString& relative) {
    return testsupport::corpus(QStringLiteral("pytorch/") + relative);
}

nlohmann::json verdicts() {
    QFile f(pt(QStringLiteral("invalid/EXPECTED.json")));
    return f.open(QIODevice::ReadOnly) ? nlohmann::json::parse(f.readAll().toStdString())
                                       : nlohmann::json();
}

} // namespace

class TestCliScan : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { requireCli(); }

    // Each malicious file: exit 1, every unsafe import named unsafe, every
    // argument string of the payload in the calls; the payload's file never
    // appears.
    void maliciousFilesAreFound_data() {
        QTest::addColumn<QString>("file");
        if (testsupport::conformanceDir().isEmpty())
            return;
        const nlohmann::json v = verdicts();
        for (auto it = v.begin(); it != v.end(); ++it)
            if (it.value().contains("unsafe_imports"))
                QTest::newRow(it.key().c_str()) << QString::fromStdString(it.key());
    }
    void maliciousFilesAreFound() {
        REQUIRE_CONFORMANCE();
        QFETCH(QString, file);
        const nlohmann::json v = verdicts()[file.toStdString()];
        const bool markerBefore = QFile::exists(QStringLiteral("/tmp/x"));
        const Run r = runCli({QStringLiteral("scan"), QStringLiteral("--json"),
                              pt(QStringLiteral("invalid/") + file)});
        QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
        QCOMPARE(QFile::exists(QStringLiteral("/tmp/x")), markerBefore);
        const nlohmann::json j = parseOut(r);
        QVERIFY2(!j.is_discarded() && j["files"].size() == 1, qPrintable(describe(r)));
        const nlohmann::json& f = j["files"][0];
        QVERIFY(f["unsafe"].get<bool>());
        const std::string calls = f["imports"].dump();
        for (const auto& name : v["unsafe_imports"]) {
            bool found = false;
            for (const auto& imp : f["imports"])
                found = found || (imp["name"] == name && imp["risk"] == "unsafe");
            QVERIFY2(found, name.get<std::string>().c_str());
        }
        for (const auto& arg : v["argument_strings"])
            QVERIFY2(calls.find(nlohmann::json(arg).dump()) != std::string::npos,
                     (arg.get<std::string>() + " not in " + calls).c_str());
    }

    // A Trainer checkpoint folder: pickles with safe and unknown imports
    // (TrainingArguments), JSON files skipped: exit 0.
    void trainerFolderIsClean() {
        REQUIRE_CONFORMANCE();
        const Run r = runCli({QStringLiteral("scan"), pt(QStringLiteral("valid/checkpoint-50"))});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QVERIFY2(r.outText().contains(QStringLiteral("scanned 5 pickles, skipped 2 files")),
                 qPrintable(describe(r)));
        QVERIFY2(r.outText().contains(
                     QStringLiteral("unknown transformers.training_args.TrainingArguments")),
                 qPrintable(describe(r)));
        QVERIFY(!r.outText().contains(QStringLiteral("UNSAFE")));
    }

    // A pickle cut short: the imports before the cut are listed, the error
    // names the file, and the exit status is 2 (nothing unsafe seen).
    void unreadablePickleIsExitTwo() {
        REQUIRE_CONFORMANCE();
        const QString file = pt(QStringLiteral("invalid/data-pkl-truncated.pt"));
        const Run r = runCli({QStringLiteral("scan"), QStringLiteral("--json"), file});
        QVERIFY2(r.exitCode == 2, qPrintable(describe(r)));
        const nlohmann::json j = parseOut(r);
        QVERIFY(j["files"][0]["error"].get<std::string>().find("truncated") != std::string::npos);
        QVERIFY(!j["files"][0]["imports"].empty());
        QVERIFY2(r.errText().startsWith(file + QStringLiteral(": error: ")),
                 qPrintable(describe(r)));
    }

    // Unsafe wins over unreadable: a folder holding both is exit 1.
    void unsafeWinsOverUnreadable() {
        REQUIRE_CONFORMANCE();
        const Run r = runCli({QStringLiteral("scan"), pt(QStringLiteral("invalid/no-stop.pt")),
                              pt(QStringLiteral("invalid/malicious-os-system.pt"))});
        QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
    }

    // A file that is no pickle is skipped, not an error: exit 0.
    void filesWithoutPickleAreSkipped() {
        QTemporaryDir dir;
        QFile f(dir.filePath(QStringLiteral("notes.txt")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("hello\n");
        f.close();
        const Run r = runCli({QStringLiteral("scan"), QStringLiteral("--json"), dir.path()});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const nlohmann::json j = parseOut(r);
        QCOMPARE(j["skipped"].get<int>(), 1);
        QVERIFY(j["files"].empty());
    }

    // A pickle may name what it imports with any bytes. `posix` with a
    // name that is not UTF-8 (a character cut short): still found unsafe,
    // its JSON valid, the bad bytes as one U+FFFD. (A strict dump refused
    // the name: no verdict was printed at all.)
    void importNamesThatAreNotUtf8() {
        // PROTO 2, GLOBAL "posix" "syst\xe6\x97m", BINPUT, a string
        // argument, TUPLE1, REDUCE, STOP (literals split where a hex escape
        // would run on).
        const std::string pickle = std::string("\x80\x02"
                                               "cposix\nsyst\xe6\x97"
                                               "m\nq\x00X\x07\x00\x00\x00"
                                               "echo hiq\x01\x85q\x02Rq\x03.",
                                               40);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("model.pt"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        const std::string zip = picklewriter::torchZip("archive", pickle, {});
        f.write(zip.data(), qint64(zip.size()));
        f.close();
        const Run r = runCli({QStringLiteral("scan"), QStringLiteral("--json"), path});
        QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
        const nlohmann::json j = parseOut(r);
        QVERIFY2(!j.is_discarded() && j["files"].size() == 1, qPrintable(describe(r)));
        QVERIFY(j["files"][0]["unsafe"].get<bool>());
        QCOMPARE(QString::fromStdString(j["files"][0]["imports"][0]["name"].get<std::string>()),
                 QStringLiteral("posix.syst\uFFFDm"));
        QCOMPARE(QString::fromStdString(j["files"][0]["imports"][0]["risk"].get<std::string>()),
                 QStringLiteral("unsafe"));
    }

    void missingPathIsUsage() {
        const Run r = runCli({QStringLiteral("scan")});
        QCOMPARE(r.exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestCliScan)
#include "tst_cliscan.moc"
