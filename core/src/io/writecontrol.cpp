#include "ckptscope/io/writecontrol.h"

#include "ckptscope/stats/tensorstats.h"

namespace ckptscope {

void WriteControl::check() const {
    if (cancel && cancel->load(std::memory_order_relaxed))
        throw Cancelled{};
}

void WriteControl::report(uint64_t done, uint64_t total) const {
    if (progress)
        progress(total ? double(done) / double(total) : 1.0);
}

} // namespace ckptscope
