#pragma once

#include "ckptscope/formats/gradient/computationgraphstore.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <optional>
#include <string>
#include <string_view>

// Reader for gradient checkpoints: no DOM is built, bytes of the optimizer
// state go straight into their vectors. Errors are GradientError with
// "NAME:LINE:COLUMN: message".
namespace ckptscope::gradientjson {

// Deeper nesting is refused before the parser descends any further.
inline constexpr size_t kMaxDepth = 64;

GradientCheckpoint readCheckpoint(std::string_view text, const std::string& name);
// The graph object alone ({"nodes": …, "edges": …}).
ComputationGraphStore readGraph(std::string_view text, const std::string& name);

// The two readers behind those, for tests that compare them (text without
// a leading byte order mark; graphOnly: the graph object alone):
// the fast path (gradientjsonfast.cpp) — nullopt when it gives up …
std::optional<GradientCheckpoint> readFast(std::string_view text, bool graphOnly);
// … and the SAX reader (gradientjsonsax.cpp), which throws GradientError.
GradientCheckpoint readSax(std::string_view text, const std::string& name, bool graphOnly);
// The text after one UTF-8 byte order mark, if it starts with one.
std::string_view withoutBom(std::string_view text);

} // namespace ckptscope::gradientjson
