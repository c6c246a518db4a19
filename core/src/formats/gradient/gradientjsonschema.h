#pragma once

#include "ckptscope/formats/gradient/computationgraphstore.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

// The gradient checkpoint's schema, written once for both readers (the SAX
// reader in gradientjsonsax.cpp and the fast path in gradientjsonfast.cpp):
// which fields each struct-like object has and which of them are required.
namespace ckptscope {

namespace detail {
// The readers store nodes under the key they have in the file, which may
// differ from their "id" (validate() reports that).
struct GraphAccess {
    static std::map<std::string, ComputationNode>& nodes(ComputationGraphStore& g) {
        return g.m_nodes;
    }
    static std::vector<Edge>& edges(ComputationGraphStore& g) { return g.m_edges; }
};
} // namespace detail

namespace gradientjson {

// Containers the reader is inside of.
enum class Frame : uint8_t {
    Top,
    Graph,
    Nodes,
    Node,
    InputCids,
    Metadata,
    Edges,
    Edge,
    Optimizer,
    Bytes
};

// Known fields of the three struct-like objects; bit positions in Level::seen.
enum class Field : uint8_t {
    Unknown,
    Graph,
    Step,
    LossCid,
    OptimizerState,
    Timestamp,
    Nodes,
    Edges,
    Id,
    Op,
    InputCids,
    OutputCid,
    GradientCid,
    Metadata,
};

constexpr unsigned bit(Field f) {
    return 1u << unsigned(f);
}
constexpr unsigned kTopRequired =
    bit(Field::Graph) | bit(Field::Step) | bit(Field::OptimizerState) | bit(Field::Timestamp);
constexpr unsigned kGraphRequired = bit(Field::Nodes) | bit(Field::Edges);
// "metadata" is required by the reference; a missing one reads as empty here.
constexpr unsigned kNodeRequired = bit(Field::Id) | bit(Field::Op) | bit(Field::InputCids);

struct FieldName {
    Frame frame;
    Field field;
    std::string_view name;
};
constexpr FieldName kFieldNames[] = {
    {Frame::Top, Field::Graph, "graph"},
    {Frame::Top, Field::Step, "step"},
    {Frame::Top, Field::LossCid, "loss_cid"},
    {Frame::Top, Field::OptimizerState, "optimizer_state"},
    {Frame::Top, Field::Timestamp, "timestamp"},
    {Frame::Graph, Field::Nodes, "nodes"},
    {Frame::Graph, Field::Edges, "edges"},
    {Frame::Node, Field::Id, "id"},
    {Frame::Node, Field::Op, "op"},
    {Frame::Node, Field::InputCids, "input_cids"},
    {Frame::Node, Field::OutputCid, "output_cid"},
    {Frame::Node, Field::GradientCid, "gradient_cid"},
    {Frame::Node, Field::Metadata, "metadata"},
};

inline Field lookupField(Frame frame, std::string_view name) {
    for (const FieldName& f : kFieldNames)
        if (f.frame == frame && f.name == name)
            return f.field;
    return Field::Unknown;
}

inline std::string_view fieldName(Field field) {
    for (const FieldName& f : kFieldNames)
        if (f.field == field)
            return f.name;
    return {};
}

} // namespace gradientjson
} // namespace ckptscope
