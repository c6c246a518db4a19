#pragma once

#include "ckptscope/io/httpsource.h"

#include <memory>
#include <mutex>

namespace ckptscope {

// What an HttpTask's sources share with it (io/httpsource.h).
struct HttpTask::Shared {
    std::mutex mutex;
    const std::atomic<bool>* cancel = nullptr;
    std::function<void(const HttpTraffic&)> onTraffic;
    HttpTraffic total;
    bool ended = false;

    bool cancelled() {
        std::lock_guard lock(mutex);
        return !ended && cancel && cancel->load(std::memory_order_relaxed);
    }
    void add(const HttpTraffic& more) {
        std::lock_guard lock(mutex);
        if (ended)
            return;
        total.requests += more.requests;
        total.bytes += more.bytes;
        if (onTraffic)
            onTraffic(total);
    }
};

// The task of this thread, or null.
std::shared_ptr<HttpTask::Shared> currentHttpTask();

} // namespace ckptscope
