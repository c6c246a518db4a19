#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

// The statistics' thread pool: helpers that join one computation's phases.
namespace ckptscope::stats {

// Helpers join a computation in one of its phases; the calling thread runs
// every phase itself and never waits for a helper that has not started.
struct Job {
    static constexpr int kBetween = -1; // merging: nobody joins
    static constexpr int kClosed = 0;   // done: `run` must not be called again

    std::mutex mutex;
    std::condition_variable changed;
    int phase = 1; // 1 or 2 while open
    unsigned active = 0;
    std::function<void(int phase)> run; // refers to the caller's stack

    // On a helper thread: each phase once, as long as the job is open.
    void participate() {
        std::unique_lock lock(mutex);
        int last = 0; // the phase this helper ran last; 0: none
        for (;;) {
            changed.wait(lock,
                         [&] { return phase == kClosed || (phase != kBetween && phase != last); });
            if (phase == kClosed)
                return;
            last = phase;
            ++active;
            lock.unlock();
            run(last);
            lock.lock();
            --active;
            changed.notify_all();
        }
    }

    // On the calling thread: no helper joins `next` before this returns,
    // and none is still running an earlier phase.
    void advance(int next) {
        std::unique_lock lock(mutex);
        phase = next == kClosed ? kClosed : kBetween;
        changed.notify_all();
        changed.wait(lock, [&] { return active == 0; });
        phase = next;
        if (next == kClosed)
            run = nullptr;
        changed.notify_all();
    }
};

// Threads kept for the life of the process. computeStats runs once per tensor,
// often hundreds of times in a row: a new thread per call costs its creation,
// and when the other cores are busy it may start only milliseconds later (a
// woken sleeper is scheduled sooner than a new thread).
class HelperPool {
public:
    static HelperPool& instance();

    unsigned size() const { return unsigned(m_threads.size()); }

    // Offers the job to up to n helpers; they join when free.
    void offer(const std::shared_ptr<Job>& job, unsigned n);

private:
    HelperPool();
    ~HelperPool();
    void loop();

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::shared_ptr<Job>> m_queue;
    bool m_stop = false;
    std::vector<std::thread> m_threads;
};

} // namespace ckptscope::stats
