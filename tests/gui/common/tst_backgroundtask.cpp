#include "common/backgroundtask.h"

#include "ckptscope/stats/tensorstats.h"

#include <QCoreApplication>
#include <QSemaphore>
#include <QTest>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

// Lets the GUI thread run what workers posted.
void drain() {
    for (int i = 0; i < 5; ++i) {
        QCoreApplication::processEvents();
        QTest::qWait(10);
    }
}

} // namespace

class TestBackgroundTask : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void finishedRunDeliversOnTheGuiThread() {
        QObject receiver;
        BackgroundTask task(&receiver);
        QThread* delivered = nullptr;
        int value = 0;
        task.start([&](BackgroundTask::Run& run) {
            run.finish([&] {
                delivered = QThread::currentThread();
                value = 42;
            });
        });
        QVERIFY(task.isRunning());
        QVERIFY(QTest::qWaitFor([&] { return value == 42; }, 5000));
        QCOMPARE(delivered, QCoreApplication::instance()->thread());
        QVERIFY(!task.isRunning());
    }

    void cancelStopsTheWorkerAndDropsItsPosts() {
        QObject receiver;
        BackgroundTask task(&receiver);
        std::atomic<bool> started{false}, sawCancel{false};
        bool delivered = false;
        task.start([&](BackgroundTask::Run& run) {
            started = true;
            while (!run.cancelled())
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            sawCancel = run.cancelFlag()->load(); // core routines see it through the flag
            run.finish([&] { delivered = true; });
        });
        QVERIFY(QTest::qWaitFor([&] { return started.load(); }, 5000));
        task.cancel();
        QVERIFY(!task.isRunning());
        task.waitForFinished();
        QVERIFY(sawCancel);
        drain();
        QVERIFY(!delivered);
    }

    void staleResultsAreDropped() {
        QObject receiver;
        BackgroundTask task(&receiver);
        QSemaphore releaseOld;
        std::atomic<bool> oldDone{false};
        QStringList delivered;
        task.start([&](BackgroundTask::Run& run) {
            releaseOld.acquire(); // finishes only after the newer run started
            run.post([&] { delivered << QStringLiteral("old progress"); });
            run.finish([&] { delivered << QStringLiteral("old"); });
            oldDone = true;
        });
        task.start([&](BackgroundTask::Run& run) {
            run.finish([&] { delivered << QStringLiteral("new"); });
        });
        QVERIFY(QTest::qWaitFor([&] { return !delivered.isEmpty(); }, 5000));
        releaseOld.release();
        QVERIFY(QTest::qWaitFor([&] { return oldDone.load(); }, 5000));
        drain();
        QCOMPARE(delivered, QStringList{QStringLiteral("new")});
    }

    void postsAlreadyQueuedAreDroppedByANewerRun() {
        QObject receiver;
        BackgroundTask task(&receiver);
        std::atomic<bool> posted{false};
        bool delivered = false;
        task.start([&](BackgroundTask::Run& run) {
            run.finish([&] { delivered = true; });
            posted = true;
        });
        task.waitForFinished(); // no event processing: the post sits in the queue
        QVERIFY(posted);
        // A newer start must void it.
        task.start([](BackgroundTask::Run&) {});
        drain();
        QVERIFY(!delivered);
    }

    void progressIsThrottledToWholePercents() {
        QObject receiver;
        BackgroundTask task(&receiver);
        QList<double> reports;
        bool done = false;
        constexpr int kSteps = 100000;
        task.start(
            [&](BackgroundTask::Run& run) {
                for (int i = 0; i <= kSteps; ++i)
                    run.progress(double(i) / kSteps);
                run.finish([&] { done = true; });
            },
            {[&](double p) { reports << p; }, {}});
        QVERIFY(QTest::qWaitFor([&] { return done; }, 10000));
        QVERIFY2(reports.size() <= 101, qPrintable(QString::number(reports.size())));
        QVERIFY(reports.size() >= 50); // throttled, not silenced
        QCOMPARE(reports.first(), 0.0);
        QCOMPARE(reports.last(), 1.0);
        for (int i = 1; i < reports.size(); ++i)
            QVERIFY(int(reports[i] * 100) != int(reports[i - 1] * 100));
    }

    void exceptionsReachTheFailedHandler() {
        QObject receiver;
        BackgroundTask task(&receiver);
        QString message;
        bool failed = false;
        task.start([](BackgroundTask::Run&) { throw std::runtime_error("disk on fire"); },
                   {{}, [&](const QString& m) {
                        message = m;
                        failed = true;
                    }});
        QVERIFY(QTest::qWaitFor([&] { return failed; }, 5000));
        QCOMPARE(message, QStringLiteral("disk on fire"));
        QVERIFY(!task.isRunning());

        // Cancelled is how core routines stop: silent, and the task is idle.
        failed = false;
        task.start([](BackgroundTask::Run&) { throw ckptscope::Cancelled{}; },
                   {{}, [&](const QString&) { failed = true; }});
        task.waitForFinished();
        drain();
        QVERIFY(!failed);
    }

    void destructionWaitsForTheWorkers() {
        std::atomic<bool> finished{false};
        {
            QObject receiver;
            BackgroundTask task(&receiver);
            task.start([&](BackgroundTask::Run&) {
                // Ignores cancellation on purpose: the destructor must still wait.
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
                finished = true;
            });
        }
        QVERIFY(finished);
    }

    void detachedTaskDoesNotWaitAndItsPostsFindNoReceiver() {
        QSemaphore release;
        std::atomic<bool> finished{false};
        bool delivered = false;
        {
            QObject receiver;
            BackgroundTask task(&receiver, BackgroundTask::OnDestroy::Detach);
            task.start([&](BackgroundTask::Run& run) {
                release.acquire();
                run.finish([&] { delivered = true; });
                finished = true;
            });
        } // returns at once, the worker still blocked
        QVERIFY(!finished);
        release.release();
        QVERIFY(QTest::qWaitFor([&] { return finished.load(); }, 5000));
        drain();
        QVERIFY(!delivered);
    }

    void postsAfterTheReceiverDiedAreDropped() {
        auto* receiver = new QObject;
        auto task = std::make_unique<BackgroundTask>(receiver);
        std::atomic<bool> posted{false};
        bool delivered = false;
        task->start([&](BackgroundTask::Run& run) {
            run.post([&] { delivered = true; });
            posted = true;
        });
        task->waitForFinished();
        QVERIFY(posted);
        delete receiver; // the post is still queued
        drain();
        QVERIFY(!delivered);
    }
    // A job with a result: typed from the worker to the GUI thread, moved
    // (a move-only result works), never cast.
    void typedResultArrivesOnTheGuiThread() {
        QObject receiver;
        BackgroundTask task(&receiver);
        QThread* worker = nullptr;
        QThread* delivered = nullptr;
        std::unique_ptr<std::vector<int>> got;
        task.start(
            [&](BackgroundTask::Run&) {
                worker = QThread::currentThread();
                return std::make_unique<std::vector<int>>(std::vector<int>{1, 2, 3});
            },
            [&](std::unique_ptr<std::vector<int>> result) {
                delivered = QThread::currentThread();
                got = std::move(result);
            });
        QVERIFY(task.isRunning());
        QVERIFY(QTest::qWaitFor([&] { return got != nullptr; }, 5000));
        QCOMPARE(*got, (std::vector<int>{1, 2, 3}));
        QCOMPARE(delivered, QCoreApplication::instance()->thread());
        QVERIFY(worker != delivered);
        QVERIFY(!task.isRunning());
    }

    void staleTypedResultsAreDropped() {
        QObject receiver;
        BackgroundTask task(&receiver);
        QSemaphore releaseOld;
        std::atomic<bool> oldDone{false};
        QStringList delivered;
        task.start(
            [&](BackgroundTask::Run&) {
                releaseOld.acquire(); // returns only after the newer run started
                oldDone = true;
                return QStringLiteral("old");
            },
            [&](const QString& r) { delivered << r; });
        task.start([](BackgroundTask::Run&) { return QStringLiteral("new"); },
                   [&](const QString& r) { delivered << r; });
        releaseOld.release();
        QVERIFY(QTest::qWaitFor([&] { return oldDone.load() && !delivered.isEmpty(); }, 5000));
        task.waitForFinished();
        drain();
        QCOMPARE(delivered, QStringList{QStringLiteral("new")});
    }

    void typedJobFailureAndProgressReachTheHandlers() {
        QObject receiver;
        BackgroundTask task(&receiver);
        QString failure;
        QList<double> reports;
        bool done = false;
        BackgroundTask::Handlers handlers;
        handlers.progress = [&](double p) { reports << p; };
        handlers.failed = [&](const QString& message) { failure = message; };
        task.start(
            [](BackgroundTask::Run& run) -> int {
                run.progress(0.5);
                throw std::runtime_error("no such tensor");
            },
            [&](int) { done = true; }, std::move(handlers));
        QVERIFY(QTest::qWaitFor([&] { return !failure.isEmpty(); }, 5000));
        QCOMPARE(failure, QStringLiteral("no such tensor"));
        QCOMPARE(reports, QList<double>{0.5});
        QVERIFY(!done);
        QVERIFY(!task.isRunning());
    }
};

QTEST_MAIN(TestBackgroundTask)
#include "tst_backgroundtask.moc"
