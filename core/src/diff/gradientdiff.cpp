#include "ckptscope/diff/gradientdiff.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace ckptscope {

bool GradientDiff::differs() const {
    const bool field = std::any_of(fields.begin(), fields.end(),
                                   [](const FieldDiff& f) { return f.status != DiffStatus::Same; });
    return field || !nodes.empty() || !edgesAdded.empty() || !edgesRemoved.empty() ||
           summary.optimizerChanged > 0;
}

namespace {

FieldValue optionalText(const std::optional<std::string>& s) {
    return s ? FieldValue(*s) : FieldValue(std::monostate{});
}

std::vector<FieldDiff> diffFields(const GradientCheckpoint& a, const GradientCheckpoint& b) {
    std::vector<FieldDiff> out = {
        {"step", DiffStatus::Same, a.step, b.step},
        {"loss_cid", DiffStatus::Same, optionalText(a.lossCid), optionalText(b.lossCid)},
        {"timestamp", DiffStatus::Same, a.timestamp, b.timestamp},
    };
    for (FieldDiff& f : out)
        f.status = f.a == f.b ? DiffStatus::Same : DiffStatus::Changed;
    return out;
}

// Nodes by op, each op's nodes in an order that does not depend on ids.
std::map<std::string, std::vector<const ComputationNode*>>
structuralOrder(const ComputationGraphStore& g) {
    // Depths by node number (a map of 100 000 ids searched in every
    // comparison made the diff of two such graphs take 6.6 s).
    const std::vector<size_t> depth = g.depths();
    std::vector<std::pair<size_t, const ComputationNode*>> all;
    all.reserve(g.nodes().size());
    for (const auto& [id, node] : g.nodes())
        all.emplace_back(depth[all.size()], &node);
    auto key = [](const std::pair<size_t, const ComputationNode*>& x) {
        const ComputationNode* n = x.second;
        return std::tie(x.first, n->op, n->inputCids, n->outputCid, n->gradientCid, n->metadata,
                        n->id);
    };
    std::sort(all.begin(), all.end(),
              [&](const auto& x, const auto& y) { return key(x) < key(y); });
    std::map<std::string, std::vector<const ComputationNode*>> byOp;
    for (const auto& [d, n] : all)
        byOp[n->op].push_back(n);
    return byOp;
}

std::vector<std::string> changedFields(const ComputationNode& a, const ComputationNode& b) {
    std::vector<std::string> out;
    if (a.op != b.op)
        out.push_back("op");
    if (a.inputCids != b.inputCids)
        out.push_back("input_cids");
    if (a.outputCid != b.outputCid)
        out.push_back("output_cid");
    if (a.gradientCid != b.gradientCid)
        out.push_back("gradient_cid");
    if (a.metadata != b.metadata)
        out.push_back("metadata");
    return out;
}

} // namespace

NodeMatching matchNodes(const ComputationGraphStore& a, const ComputationGraphStore& b) {
    // Node keys (the file's keys) are the identities, as everywhere else.
    const auto& nodesA = a.nodes();
    const auto& nodesB = b.nodes();
    size_t common = 0;
    for (const auto& [id, node] : nodesA)
        common += nodesB.count(id);
    NodeMatching m;
    m.byStructure = 2 * common < nodesA.size() || 2 * common < nodesB.size();
    if (!m.byStructure) {
        for (const auto& [id, node] : nodesA)
            if (nodesB.count(id))
                m.pairs.emplace_back(id, id);
        return m;
    }
    const auto orderA = structuralOrder(a), orderB = structuralOrder(b);
    for (const auto& [op, listA] : orderA) {
        const auto it = orderB.find(op);
        if (it == orderB.end())
            continue;
        for (size_t k = 0; k < std::min(listA.size(), it->second.size()); ++k)
            m.pairs.emplace_back(listA[k]->id, it->second[k]->id);
    }
    return m;
}

namespace {

// The matched nodes that differ, the unmatched ones (sorted by id); returns
// the A partner of each matched B node.
std::unordered_map<std::string, std::string>
diffNodes(const GradientCheckpoint& a, const GradientCheckpoint& b, GradientDiff& r) {
    GradientDiffSummary& s = r.summary;
    const auto& nodesA = a.graph.nodes();
    const auto& nodesB = b.graph.nodes();
    const NodeMatching matching = matchNodes(a.graph, b.graph);
    r.structureMatching = matching.byStructure;
    // Hashed, not ordered: 100 000 ids in trees cost a cache miss a level.
    std::unordered_set<std::string_view> matchedA, matchedB;
    std::unordered_map<std::string, std::string> bToA;
    for (const auto& [ka, kb] : matching.pairs) {
        matchedA.insert(ka);
        matchedB.insert(kb);
        bToA[kb] = ka;
        const std::vector<std::string> changed = changedFields(nodesA.at(ka), nodesB.at(kb));
        if (changed.empty()) { // by structure an id of its own is no change
            ++s.nodesSame;
            continue;
        }
        NodeDiff d;
        d.id = ka;
        if (kb != ka)
            d.idB = kb;
        d.status = DiffStatus::Changed;
        d.opA = nodesA.at(ka).op;
        d.opB = nodesB.at(kb).op;
        d.changed = changed;
        r.nodes.push_back(std::move(d));
        ++s.nodesChanged;
    }
    for (const auto& [id, node] : nodesA)
        if (!matchedA.count(id)) {
            r.nodes.push_back({id, std::nullopt, DiffStatus::Removed, node.op, std::nullopt, {}});
            ++s.nodesRemoved;
        }
    for (const auto& [id, node] : nodesB)
        if (!matchedB.count(id)) {
            r.nodes.push_back({id, std::nullopt, DiffStatus::Added, std::nullopt, node.op, {}});
            ++s.nodesAdded;
        }
    std::stable_sort(r.nodes.begin(), r.nodes.end(),
                     [](const NodeDiff& x, const NodeDiff& y) { return x.id < y.id; });
    return bToA;
}

// Edges as multisets; B's ends renamed to their A partners.
struct EdgeHash {
    size_t operator()(const Edge& e) const {
        const size_t h = std::hash<std::string>()(e.first);
        return h ^
               (std::hash<std::string>()(e.second) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
    }
};

void diffEdges(const GradientCheckpoint& a, const GradientCheckpoint& b,
               const std::unordered_map<std::string, std::string>& bToA, GradientDiff& r) {
    std::unordered_map<Edge, long long, EdgeHash> balance; // copies in A minus copies in B
    balance.reserve(a.graph.edges().size());
    for (const Edge& e : a.graph.edges())
        ++balance[e];
    auto rename = [&](const std::string& id) -> const std::string& {
        const auto it = bToA.find(id);
        return it == bToA.end() ? id : it->second;
    };
    for (const Edge& e : b.graph.edges())
        --balance[Edge(rename(e.first), rename(e.second))];
    // In edge order, as a map of edges had listed them.
    std::vector<std::pair<const Edge*, long long>> differing;
    for (const auto& [edge, n] : balance)
        if (n != 0)
            differing.emplace_back(&edge, n);
    std::sort(differing.begin(), differing.end(),
              [](const auto& x, const auto& y) { return *x.first < *y.first; });
    for (const auto& [edge, n] : differing) {
        for (long long k = 0; k < n; ++k)
            r.edgesRemoved.push_back(*edge);
        for (long long k = 0; k < -n; ++k)
            r.edgesAdded.push_back(*edge);
    }
    r.summary.edgesAdded = r.edgesAdded.size();
    r.summary.edgesRemoved = r.edgesRemoved.size();
}

// One optimizer blob on both sides (either may be missing): bytes, and
// values when they can be f32.
BlobDiff diffBlob(const std::string& name, const std::vector<uint8_t>* ba,
                  const std::vector<uint8_t>* bb, ValueComparer& comparer) {
    BlobDiff d;
    d.name = name;
    if (ba)
        d.bytesA = ba->size();
    if (bb)
        d.bytesB = bb->size();
    if (!bb) {
        d.status = DiffStatus::Removed;
    } else if (!ba) {
        d.status = DiffStatus::Added;
    } else if (ba->size() != bb->size()) {
        d.status = DiffStatus::Changed;
    } else {
        uint64_t differing = 0;
        for (size_t i = 0; i < ba->size(); ++i)
            differing += (*ba)[i] != (*bb)[i];
        d.differingBytes = differing;
        if (ba->size() % 4 == 0) {
            auto reader = [](const std::vector<uint8_t>& v) {
                return [&v](uint64_t first, uint64_t n, float* out) {
                    std::memcpy(out, v.data() + first * 4, size_t(n) * 4);
                };
            };
            d.f32 = comparer.compare(ba->size() / 4, reader(*ba), reader(*bb), [](double) {});
            d.status = d.f32->differing == 0 ? DiffStatus::Same : DiffStatus::Changed;
        } else {
            d.status = differing == 0 ? DiffStatus::Same : DiffStatus::Changed;
        }
    }
    return d;
}

// Optimizer state by name.
void diffBlobs(const GradientCheckpoint& a, const GradientCheckpoint& b, const DiffOptions& options,
               const std::vector<std::string>& onlyBlobs, GradientDiff& r) {
    std::set<std::string> names;
    for (const auto& kv : a.optimizerState)
        names.insert(kv.first);
    for (const auto& kv : b.optimizerState)
        names.insert(kv.first);
    for (const std::string& want : onlyBlobs)
        if (!names.count(want))
            throw UnknownTensorError(want);
    if (!onlyBlobs.empty())
        names = std::set<std::string>(onlyBlobs.begin(), onlyBlobs.end());
    ValueComparer comparer(options);
    auto find = [](const GradientCheckpoint& c,
                   const std::string& name) -> const std::vector<uint8_t>* {
        const auto it = c.optimizerState.find(name);
        return it == c.optimizerState.end() ? nullptr : &it->second;
    };
    for (const std::string& name : names) {
        BlobDiff d = diffBlob(name, find(a, name), find(b, name), comparer);
        r.summary.optimizerChanged += d.status != DiffStatus::Same;
        r.optimizerState.push_back(std::move(d));
    }
}

} // namespace

GradientDiff diffGradients(const GradientCheckpoint& a, const GradientCheckpoint& b,
                           const DiffOptions& options, const std::vector<std::string>& onlyBlobs) {
    GradientDiff r;
    r.fields = diffFields(a, b);
    diffEdges(a, b, diffNodes(a, b, r), r);
    diffBlobs(a, b, options, onlyBlobs, r);
    return r;
}

} // namespace ckptscope
