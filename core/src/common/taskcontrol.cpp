#include "ckptscope/common/taskcontrol.h"

namespace ckptscope {

void TaskControl::throwIfCancelled() const {
    if (cancelled())
        throw Cancelled{};
}

void TaskControl::report(uint64_t done, uint64_t total) const {
    if (progress)
        progress(total ? double(done) / double(total) : 1.0);
}

TaskControl TaskControl::part(double from, double span) const {
    TaskControl inner(cancel);
    if (progress)
        inner.progress = [outer = progress, from, span](double p) { outer(from + span * p); };
    return inner;
}

} // namespace ckptscope
