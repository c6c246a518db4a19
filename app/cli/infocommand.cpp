#include "clicommon.h"
#include "textformat.h"

#include "ckptscope/numberformat.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <map>

namespace cli {

using nlohmann::ordered_json;
using namespace ckptscope;

namespace {

ordered_json warningsJson(const Document& doc) {
    ordered_json w = ordered_json::array();
    for (const auto& warning : doc.warnings())
        w.push_back(warning.message);
    return w;
}

ordered_json oxckJson(const Document& doc) {
    ordered_json j;
    j["format"] = "oxck";
    j["file_size"] = doc.fileSize();
    j["version"] = doc.version();
    j["flags"] = doc.flags();
    j["metadata"] = ordered_json::object();
    for (const auto& [k, v] : doc.metadata())
        j["metadata"][k] = v;
    // A shape whose product overflows makes the sums meaningless: null, not
    // a saturated number a script could mistake for a count.
    const bool overflow = std::any_of(doc.tensors().begin(), doc.tensors().end(),
                                      [](const TensorEntry& t) { return !t.elementCount; });
    const bool bytesOverflow = overflow || doc.numParams() > UINT64_MAX / 4;
    j["num_params"] = overflow ? ordered_json() : ordered_json(doc.numParams());
    j["total_bytes"] = bytesOverflow ? ordered_json() : ordered_json(doc.totalBytes());
    ordered_json tensors = ordered_json::array();
    for (const TensorEntry& t : doc.tensors()) {
        ordered_json e;
        e["name"] = t.name;
        e["shape"] = t.shape;
        e["data_len"] = t.dataLen;
        e["element_count"] = t.elementCount ? ordered_json(*t.elementCount) : ordered_json();
        e["size_bytes"] = t.elementCount && *t.elementCount <= UINT64_MAX / 4
                              ? ordered_json(*t.elementCount * 4)
                              : ordered_json();
        e["offset"] = t.dataOffset;
        tensors.push_back(std::move(e));
    }
    j["tensors"] = std::move(tensors);
    j["warnings"] = warningsJson(doc);
    return j;
}

std::map<std::string, size_t> opCounts(const ComputationGraphStore& graph) {
    std::map<std::string, size_t> ops;
    for (const auto& [id, node] : graph.nodes())
        ++ops[node.op];
    return ops;
}

ordered_json gradientJson(const Document& doc) {
    const GradientCheckpoint& g = *doc.gradient();
    ordered_json j;
    j["format"] = "gradient";
    j["file_size"] = doc.fileSize();
    j["step"] = g.step;
    j["loss_cid"] = g.lossCid ? ordered_json(*g.lossCid) : ordered_json();
    j["timestamp"] = g.timestamp;
    j["node_count"] = g.graph.nodeCount();
    j["edge_count"] = g.graph.edgeCount();
    const ComputationNode* loss = g.lossNode();
    j["loss_node"] = loss ? ordered_json(loss->id) : ordered_json();
    j["topological_order"] = g.graph.topologicalOrder();
    j["cycle_nodes"] = g.graph.cycleNodes();
    j["ops"] = ordered_json::object();
    for (const auto& [op, n] : opCounts(g.graph))
        j["ops"][op] = n;
    ordered_json blobs = ordered_json::array();
    for (const auto& [name, bytes] : g.optimizerState)
        blobs.push_back({{"name", name}, {"bytes", bytes.size()}});
    j["optimizer_state"] = std::move(blobs);
    j["warnings"] = warningsJson(doc);
    return j;
}

void printOxck(const Document& doc) {
    std::cout << "File        " << doc.path() << " (" << fmt::bytes(doc.fileSize()) << ")\n"
              << "Format      OXCK version " << doc.version() << ", flags " << doc.flags() << "\n"
              << "Tensors     " << fmt::grouped(doc.tensors().size()) << "\n"
              << "Parameters  " << fmt::grouped(doc.numParams()) << " ("
              << fmt::bytes(doc.totalBytes()) << ")\n";
    if (!doc.metadata().empty()) {
        std::cout << "\nMetadata\n";
        TextTable table({"key", "value"});
        for (const auto& [k, v] : doc.metadata())
            table.addRow({printable(k), printable(v)});
        std::cout << table.render("  ");
    }
    if (!doc.tensors().empty()) {
        std::cout << "\nTensors\n";
        TextTable table({"#", "name", "shape", "elements", "stored", "size", "offset"},
                        {true, false, false, true, true, true, true});
        size_t i = 0;
        for (const TensorEntry& t : doc.tensors()) {
            const bool known = t.elementCount.has_value();
            table.addRow(
                {std::to_string(i++), elided(printable(t.name), 60), fmt::shape(t.shape),
                 known ? fmt::grouped(*t.elementCount) : "overflow", fmt::grouped(t.dataLen),
                 known && *t.elementCount <= UINT64_MAX / 4 ? fmt::bytes(*t.elementCount * 4)
                                                            : std::string(fmt::kMissing),
                 fmt::grouped(t.dataOffset)});
        }
        std::cout << table.render("  ");
    }
}

void printGradient(const Document& doc) {
    const GradientCheckpoint& g = *doc.gradient();
    const ComputationNode* loss = g.lossNode();
    std::cout << "File        " << doc.path() << " (" << fmt::bytes(doc.fileSize()) << ")\n"
              << "Format      gradient checkpoint (JSON)\n"
              << "Step        " << g.step << "\n"
              << "Timestamp   " << g.timestamp << "\n"
              << "Loss CID    " << g.lossCid.value_or("(none)") << "\n"
              << "Loss node   " << (loss ? loss->id + " (" + loss->op + ")" : "(none)") << "\n"
              << "Graph       " << fmt::grouped(g.graph.nodeCount()) << " nodes, "
              << fmt::grouped(g.graph.edgeCount()) << " edges, " << g.graph.cycleNodes().size()
              << " on cycles\n";
    std::cout << "\nOps\n";
    TextTable ops({"op", "nodes"}, {false, true});
    for (const auto& [op, n] : opCounts(g.graph))
        ops.addRow({op, fmt::grouped(n)});
    std::cout << ops.render("  ");
    if (!g.optimizerState.empty()) {
        std::cout << "\nOptimizer state\n";
        TextTable blobs({"name", "bytes"}, {false, true});
        for (const auto& [name, bytes] : g.optimizerState)
            blobs.addRow({name, fmt::bytes(bytes.size())});
        std::cout << blobs.render("  ");
    }
}

} // namespace

int runInfo(const std::vector<std::string>& args) {
    const Options o = parseOptions(args, {"--json"});
    const auto doc = openDocument(o.file);
    if (o.json) {
        const ordered_json j = doc->format() == Format::Oxck ? oxckJson(*doc) : gradientJson(*doc);
        std::cout << j.dump(2, ' ', false, ordered_json::error_handler_t::replace) << "\n";
    } else if (doc->format() == Format::Oxck) {
        printOxck(*doc);
    } else {
        printGradient(*doc);
    }
    return kOk;
}

} // namespace cli
