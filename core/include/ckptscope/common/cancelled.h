#pragma once

namespace ckptscope {

// Thrown by long computations (statistics, graph layout) when the caller's
// cancel flag became true; the partial result is dropped.
struct Cancelled {};

} // namespace ckptscope
