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
// byte for byte what nlohmann's dump(2) of the same fields gives (its
// replacement of bytes that are not UTF-8 included): building a DOM of
// 10 000 node ids cost more than reading them from the file.
void writeGradientInfoJson(const GradientInfo& info, std::string& out);

} // namespace cli
