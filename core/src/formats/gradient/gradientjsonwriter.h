#pragma once

#include "ckptscope/formats/gradient/computationgraphstore.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <iosfwd>
#include <string>
#include <string_view>

// Writes gradient checkpoints in serde_json's to_string_pretty layout,
// streaming text without building a DOM.
namespace ckptscope::gradientjson {

// s for an error message: control characters escaped, cut to about maxBytes
// at a UTF-8 boundary ("…" marks the cut), in quotes when quoted is set or s
// is empty.
std::string displayText(std::string_view s, bool quoted, size_t maxBytes = 80);

void writeCheckpoint(std::string& out, const GradientCheckpoint& ckpt); // appends
void writeCheckpoint(std::ostream& out, const GradientCheckpoint& ckpt);
void writeGraph(std::string& out, const ComputationGraphStore& graph); // appends

} // namespace ckptscope::gradientjson
