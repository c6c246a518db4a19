#pragma once

#include <functional>

namespace ckptscope {

// Runs work(k) for k = 0..threads-1: k = 0 on the calling thread, the others
// on threads started for this call and joined before it returns (a
// comparison starts them once per tensor, so their start-up cost is small
// beside the megabytes each tensor reads). When a thread cannot be started
// the others do its share. Rethrows the first exception a worker threw.
// The statistics keep their own pool private to tensorstats.cpp; once it is
// public this can run on it.
void runOnThreads(unsigned threads, const std::function<void(unsigned worker)>& work);

// Threads worth using for `blocks` blocks: requested (0: hardware
// concurrency), at least 1, at most one per block.
unsigned workerCount(unsigned requested, unsigned long long blocks);

} // namespace ckptscope
