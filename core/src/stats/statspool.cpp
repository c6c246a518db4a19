#include "stats/statspool.h"

#include <algorithm>

namespace ckptscope::stats {

HelperPool& HelperPool::instance() {
    static HelperPool pool;
    return pool;
}

void HelperPool::offer(const std::shared_ptr<Job>& job, unsigned n) {
    {
        std::lock_guard lock(m_mutex);
        for (unsigned k = 0; k < n; ++k)
            m_queue.push_back(job);
    }
    if (n == 1)
        m_wake.notify_one();
    else
        m_wake.notify_all();
}

HelperPool::HelperPool() {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    try {
        for (unsigned k = 1; k < std::min(cores, 256u); ++k)
            m_threads.emplace_back([this] { loop(); });
    } catch (...) {
        // Fewer helpers (or none): the calling threads do the work.
    }
}

HelperPool::~HelperPool() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (std::thread& t : m_threads)
        t.join();
}

void HelperPool::loop() {
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [&] { return m_stop || !m_queue.empty(); });
        if (m_stop)
            return;
        const std::shared_ptr<Job> job = std::move(m_queue.front());
        m_queue.pop_front();
        lock.unlock();
        job->participate();
        lock.lock();
    }
}

} // namespace ckptscope::stats
