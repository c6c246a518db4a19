#pragma once

#include <cstddef>
#include <functional>

namespace ckptscope {

// Runs work(k) for k = 0..threads-1: k = 0 on the calling thread, the others
// on the statistics' helper pool (statspool.h), joined before it returns:
// a comparison runs this twice per tensor, and a thread started per call
// costs its creation and may start late on a busy machine. Workers that the
// pool cannot give (fewer helpers, all busy) simply do not run: callers share
// blocks through a counter, so the others do their share. Rethrows the first
// exception a worker threw.
void runOnThreads(unsigned threads, const std::function<void(unsigned worker)>& work);

// Runs job(k, worker) for k = 0..n-1, each job whole on one of up to
// `threads` workers (runOnThreads), taken in index order. For many tensors,
// a tensor per worker beats sharing each tensor's blocks: no hand-over
// between a tensor's passes, nobody waiting for the last block. After a job
// throws, no new one starts; the exception of the lowest k that threw is
// rethrown, as a loop over k would have thrown it.
void forEachTask(size_t n, unsigned threads,
                 const std::function<void(size_t k, unsigned worker)>& job);

// Threads worth using for `blocks` blocks: requested (0: hardware
// concurrency), at least 1, at most one per block.
unsigned workerCount(unsigned requested, unsigned long long blocks);

} // namespace ckptscope
