#include "stats/blockworkers.h"

#include "stats/statspool.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace ckptscope {

void runOnThreads(unsigned threads, const std::function<void(unsigned)>& work) {
    std::mutex mutex;
    std::exception_ptr error;
    auto guarded = [&](unsigned k) {
        try {
            work(k);
        } catch (...) {
            std::lock_guard lock(mutex);
            if (!error)
                error = std::current_exception();
        }
    };
    stats::HelperPool& pool = stats::HelperPool::instance();
    const unsigned helpers = threads > 1 ? std::min(threads - 1, pool.size()) : 0;
    std::shared_ptr<stats::Job> job;
    std::atomic<unsigned> nextWorker{1};
    if (helpers > 0) {
        job = std::make_shared<stats::Job>();
        // One phase: each helper joins once, with its own worker number.
        job->run = [&](int) { guarded(nextWorker.fetch_add(1)); };
        pool.offer(job, helpers);
    }
    guarded(0);
    if (job)
        job->advance(stats::Job::kClosed); // waits for helpers still working
    if (error)
        std::rethrow_exception(error);
}

void forEachTask(size_t n, unsigned threads,
                 const std::function<void(size_t k, unsigned worker)>& job) {
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex mutex;
    size_t failedAt = n;
    std::exception_ptr error;
    runOnThreads(unsigned(std::min<size_t>(threads, std::max<size_t>(n, 1))), [&](unsigned worker) {
        while (!failed.load(std::memory_order_relaxed)) {
            const size_t k = next.fetch_add(1);
            if (k >= n)
                return;
            try {
                job(k, worker);
            } catch (...) {
                std::lock_guard lock(mutex);
                if (k < failedAt) {
                    failedAt = k;
                    error = std::current_exception();
                }
                failed = true;
            }
        }
    });
    if (error)
        std::rethrow_exception(error);
}

unsigned workerCount(unsigned requested, unsigned long long blocks) {
    const unsigned want = requested ? requested : std::max(1u, std::thread::hardware_concurrency());
    return unsigned(
        std::clamp<unsigned long long>(want, 1, std::max<unsigned long long>(blocks, 1)));
}

} // namespace ckptscope
