#pragma once

#include "ckptscope/diff/tensordiff.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ckptscope {

// step and timestamp are numbers, loss_cid a string or null.
using FieldValue = std::variant<std::monostate, uint64_t, std::string>;

struct FieldDiff {
    std::string field;                    // "step", "loss_cid", "timestamp"
    DiffStatus status = DiffStatus::Same; // same or changed
    FieldValue a, b;
};

struct NodeDiff {
    // A's id for removed and changed nodes, B's for added ones.
    std::string id;
    // The id of the B node this one was matched with, when matched by
    // structure and the ids differ.
    std::optional<std::string> idB;
    DiffStatus status = DiffStatus::Changed; // added, removed or changed
    std::optional<std::string> opA, opB;
    // Of "op", "input_cids", "output_cid", "gradient_cid", "metadata" in
    // that order; empty for added and removed nodes.
    std::vector<std::string> changed;
};

struct BlobDiff {
    std::string name;
    DiffStatus status = DiffStatus::Same; // same, changed, added or removed
    std::optional<uint64_t> bytesA, bytesB;
    std::optional<uint64_t> differingBytes; // when both have the same length
    std::optional<ElementDiff> f32;         // same length, a multiple of 4
};

struct GradientDiffSummary {
    uint64_t nodesSame = 0, nodesChanged = 0, nodesAdded = 0, nodesRemoved = 0;
    uint64_t edgesAdded = 0, edgesRemoved = 0, optimizerChanged = 0;
};

// Two gradient checkpoints compared, A the reference.
struct GradientDiff {
    std::vector<FieldDiff> fields;
    std::vector<NodeDiff> nodes; // differing nodes only, sorted by id
    // Multisets: a repeated edge counts once per copy. Sorted by (producer,
    // consumer). Matched by structure, B's ids are replaced by the ids of
    // the A nodes they matched.
    std::vector<Edge> edgesAdded, edgesRemoved;
    std::vector<BlobDiff> optimizerState; // sorted by name
    bool structureMatching = false;
    GradientDiffSummary summary;
    bool differs() const;
};

// Which node of A is which node of B (node keys), by id or by structure as
// diffGradients describes; unmatched nodes are removed (A) or added (B).
struct NodeMatching {
    bool byStructure = false;
    std::vector<std::pair<std::string, std::string>> pairs; // (A key, B key)
};
NodeMatching matchNodes(const ComputationGraphStore& a, const ComputationGraphStore& b);

// Nodes match by id, unless fewer than half of either graph's nodes find
// their id in the other (a graph rebuilt with fresh ids): then by op and
// position in a topological order that does not depend on ids (depth, then
// the node's content), the k-th node of an op in A with the k-th of that op
// in B. Optimizer blobs: status same when bytewise equal, or — for blobs of
// equal length, a multiple of 4 — when no f32 element differs under the
// tolerances. `onlyBlobs` (when not empty) limits the blobs compared.
// Throws UnknownTensorError for a blob name in neither, and Cancelled.
GradientDiff diffGradients(const GradientCheckpoint& a, const GradientCheckpoint& b,
                           const DiffOptions& options,
                           const std::vector<std::string>& onlyBlobs = {});

} // namespace ckptscope
