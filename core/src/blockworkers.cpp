#include "blockworkers.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

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
    std::vector<std::thread> started;
    for (unsigned k = 1; k < threads; ++k) {
        try {
            started.emplace_back(guarded, k);
        } catch (const std::system_error&) {
            break; // fewer threads: the workers take blocks from a shared counter
        }
    }
    guarded(0);
    for (std::thread& t : started)
        t.join();
    if (error)
        std::rethrow_exception(error);
}

unsigned workerCount(unsigned requested, unsigned long long blocks) {
    const unsigned want = requested ? requested : std::max(1u, std::thread::hardware_concurrency());
    return unsigned(
        std::clamp<unsigned long long>(want, 1, std::max<unsigned long long>(blocks, 1)));
}

} // namespace ckptscope
