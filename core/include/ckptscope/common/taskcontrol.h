#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace ckptscope {

// Thrown by long computations when the caller's cancel flag became true; the
// partial result is dropped (atomic writes leave no file behind).
struct Cancelled {};

// Cancellation and progress of one long computation: statistics, comparisons,
// run summaries, export and graph layout all take one (their options derive
// from it), so a caller stops and follows each the same way.
struct TaskControl {
    const std::atomic<bool>* cancel = nullptr; // polled between blocks, tensors or phases
    std::function<void(double)> progress;      // 0..1; may be called from worker threads

    TaskControl() = default;
    // (Not explicit: a bare flag is a control without progress.)
    TaskControl(const std::atomic<bool>* cancelFlag, std::function<void(double)> onProgress = {})
        : cancel(cancelFlag), progress(std::move(onProgress)) {}

    bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
    void throwIfCancelled() const;
    void report(double fraction) const {
        if (progress)
            progress(fraction);
    }
    void report(uint64_t done, uint64_t total) const; // done / total; 1 when total is 0
    // The same flag, with this one's progress over [from, from + span] as
    // the new one's 0..1; no progress when this one has none.
    TaskControl part(double from, double span) const;
};

} // namespace ckptscope
