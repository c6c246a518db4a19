// forEachTask: every job runs once, whole, on at most the workers asked for;
// after a failure no new job starts, and the error rethrown is the one a
// plain loop would have met first.
#include "stats/blockworkers.h"

#include <QTest>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace ckptscope;

class TestBlockWorkers : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyJobOnceOnTheWorkersAskedFor() {
        for (unsigned threads : {1u, 2u, 7u}) {
            std::vector<std::atomic<int>> runs(1000);
            std::mutex mutex;
            std::set<unsigned> workers;
            forEachTask(runs.size(), threads, [&](size_t k, unsigned worker) {
                ++runs[k];
                std::lock_guard lock(mutex);
                workers.insert(worker);
            });
            for (const std::atomic<int>& r : runs)
                QCOMPARE(r.load(), 1);
            QVERIFY(!workers.empty());
            QVERIFY(*workers.rbegin() < threads);
        }
        forEachTask(0, 2, [](size_t, unsigned) { QFAIL("no job to run"); });
    }

    void theFirstFailureInOrderIsRethrown() {
        // Job 60 fails at once; job 30 fails later, on the other worker.
        // A loop would have met job 30 first: that is what comes back.
        for (int round = 0; round < 20; ++round) {
            std::atomic<size_t> highest{0};
            std::vector<std::atomic<int>> runs(100);
            try {
                forEachTask(runs.size(), 2, [&](size_t k, unsigned) {
                    ++runs[k];
                    size_t h = highest.load();
                    while (k > h && !highest.compare_exchange_weak(h, k)) {
                    }
                    if (k == 30) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(2));
                        throw std::runtime_error("job 30");
                    }
                    if (k == 60)
                        throw std::runtime_error("job 60");
                });
                QFAIL("no exception");
            } catch (const std::runtime_error& e) {
                QCOMPARE(std::string(e.what()), std::string("job 30"));
            }
            for (size_t k = 0; k <= 30; ++k) // all before the failure ran
                QCOMPARE(runs[k].load(), 1);
            // No new job after a failure: none past the one that failed.
            QVERIFY(highest.load() <= 60);
            for (size_t k = 61; k < runs.size(); ++k)
                QCOMPARE(runs[k].load(), 0);
        }
    }
};

QTEST_APPLESS_MAIN(TestBlockWorkers)
#include "tst_blockworkers.moc"
