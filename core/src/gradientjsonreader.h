#pragma once

#include "ckptscope/computationgraphstore.h"
#include "ckptscope/gradientcheckpoint.h"

#include <string>
#include <string_view>

// Streaming (SAX) reader for gradient checkpoints: no DOM is built, bytes of
// the optimizer state go straight into their vectors. Errors are
// GradientError with "NAME:LINE:COLUMN: message".
namespace ckptscope::gradientjson {

// Deeper nesting is refused before the parser descends any further.
inline constexpr size_t kMaxDepth = 64;

GradientCheckpoint readCheckpoint(std::string_view text, const std::string& name);
// The graph object alone ({"nodes": …, "edges": …}).
ComputationGraphStore readGraph(std::string_view text, const std::string& name);

} // namespace ckptscope::gradientjson
