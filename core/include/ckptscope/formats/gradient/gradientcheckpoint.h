#pragma once

#include "ckptscope/formats/gradient/computationgraphstore.h"
#include "ckptscope/formats/gradient/gradienterror.h"

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckptscope {

using OptimizerState = std::map<std::string, std::vector<uint8_t>>;

// A gradient checkpoint: graph, optimizer step, loss CID, raw optimizer-state
// bytes per parameter and a Unix timestamp.
struct GradientCheckpoint {
    ComputationGraphStore graph;
    uint64_t step = 0;
    std::optional<std::string> lossCid;
    OptimizerState optimizerState;
    uint64_t timestamp = 0;

    GradientCheckpoint() = default;
    // Stamps the current time, as the reference `new`.
    GradientCheckpoint(ComputationGraphStore graph, uint64_t step);
    GradientCheckpoint withLossCid(std::string cid) &&;
    void setOptimizerState(std::string name, std::vector<uint8_t> bytes);

    // The node whose outputCid equals lossCid, or nullptr.
    const ComputationNode* lossNode() const;

    // Pretty JSON (two-space indent, serde_json's layout), written to a
    // temporary file and renamed. Throws GradientError (Kind::Io).
    void save(const std::string& path) const;
    // Reads the whole file and parses it with fromJson; the path names the
    // file in messages. Throws GradientError.
    static GradientCheckpoint load(const std::string& path);
    // Field order as the reference writes it; maps in key order. No DOM is
    // built, so a large optimizer state costs only its text.
    std::string toJson() const;
    void writeJson(std::ostream& out) const;
    // Parses with a streaming (SAX) reader: byte arrays go straight into
    // vectors. `name` is used in messages. Throws GradientError whose message
    // is "NAME:LINE:COLUMN: what was expected" (1-based, columns in bytes,
    // after a skipped UTF-8 BOM). Unknown fields are ignored, nesting deeper
    // than 64 levels is refused, a repeated map key keeps the later value and
    // a repeated field is an error (as serde).
    static GradientCheckpoint fromJson(std::string_view json, const std::string& name);

    bool operator==(const GradientCheckpoint&) const = default;
};

} // namespace ckptscope
