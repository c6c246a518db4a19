#pragma once

#include "ckptscope/document/document.h"

#include <map>
#include <string>
#include <vector>

namespace cli {

// The fields of `info --json` for a gradient checkpoint.
struct GradientInfo {
    const ckptscope::Document& doc;
    const ckptscope::ComputationGraphStore::TopologicalSplit& split; // the document's
    std::map<std::string, size_t> ops;                               // op → node count
};

// Writes `info` of a gradient checkpoint as pretty JSON straight into out,
// byte for byte what nlohmann's dump(2) of the same fields gives: building
// a DOM of 10 000 node ids cost more than reading them from the file.
// Returns false, having written nothing, when a string is not valid UTF-8:
// then nlohmann's replacement rules must apply (only a checkpoint built in
// memory can hold such a string; both JSON readers refuse it).
bool writeGradientInfoJson(const GradientInfo& info, std::string& out);

} // namespace cli
