// `layout` (node positions and edge routes of the layered drawing) and
// `graph --dot` (the computation graph for Graphviz).
#include "clicommon.h"
#include "clijson.h"
#include "textformat.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/layout/graphlayout.h"

#include "ckptscope/common/jsonstreamwriter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>

namespace cli {

using namespace ckptscope;

namespace {

constexpr double kNodeHeight = 28;

// Node width from the op label: 7 px per character (about a 10-point sans
// font) plus 12 px padding each side, at least 40. One rule for the layout
// and the DOT output, so both drawings have the same proportions.
double nodeWidth(const std::string& op) {
    size_t chars = 0;
    for (const char c : op)
        chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80; // UTF-8 lead bytes
    return std::max(40.0, 7.0 * double(chars) + 24);
}

// Coordinates to 0.01 px: enough for drawing, and short.
double rounded(double v) {
    v = std::round(v * 100) / 100;
    return v == 0 ? 0 : v; // no "-0"
}

// Streamed, one node or edge per line: a DOM of a 100k-node layout costs far
// more than the layout itself. The ids come from a JSON file, so they are
// valid UTF-8.
void writeLayoutJson(std::ostream& out, const Document& doc, const GraphLayout& layout,
                     const std::vector<std::string>& ids) {
    using Layout = JsonStreamWriter::Layout;
    JsonStreamWriter w(out);
    w.beginObject();
    w.key("nodes");
    w.beginArray();
    for (size_t i = 0; i < layout.nodes.size(); ++i) {
        const LayoutNode& n = layout.nodes[i];
        w.beginObject(Layout::Inline);
        w.key("id");
        w.value(ids[i]);
        for (const auto& [name, v] :
             {std::pair{"x", n.x}, {"y", n.y}, {"width", n.width}, {"height", n.height}}) {
            w.key(name);
            w.number(rounded(v));
        }
        w.key("rank");
        w.value(int64_t(n.rank));
        w.endObject();
        w.chunkDone();
    }
    w.endArray();
    w.key("edges");
    w.beginArray();
    for (const LayoutEdge& e : layout.edges) {
        w.beginObject(Layout::Inline);
        w.key("from");
        w.value(ids[e.from]);
        w.key("to");
        w.value(ids[e.to]);
        w.key("points");
        w.beginArray();
        for (const auto& [x, y] : e.points) {
            w.beginArray();
            w.number(rounded(x));
            w.number(rounded(y));
            w.endArray();
        }
        w.endArray();
        w.key("reversed");
        w.value(e.reversed);
        w.endObject();
        w.chunkDone();
    }
    w.endArray();
    w.key("crossings");
    w.value(uint64_t(layout.crossings));
    writeWarnings(w, doc);
    w.endObject();
    w.flush();
    out << "\n";
}

void printSummary(const Document& doc, const GraphLayout& layout) {
    int ranks = 0;
    for (const LayoutNode& n : layout.nodes)
        ranks = std::max(ranks, n.rank + 1);
    size_t reversed = 0;
    for (const LayoutEdge& e : layout.edges)
        reversed += e.reversed;
    std::cout << "File        " << doc.path() << "\n"
              << "Nodes       " << fmt::grouped(layout.nodes.size()) << "\n"
              << "Edges       " << fmt::grouped(layout.edges.size()) << " ("
              << fmt::grouped(reversed) << " reversed to break cycles)\n"
              << "Ranks       " << fmt::grouped(uint64_t(ranks)) << "\n"
              << "Crossings   " << fmt::grouped(layout.crossings) << "\n"
              << "Size        " << fmt::grouped(uint64_t(std::ceil(layout.width))) << " x "
              << fmt::grouped(uint64_t(std::ceil(layout.height))) << " px\n";
}

// A DOT quoted string: quote, backslash and line breaks escaped, so distinct
// ids stay distinct names, and label/tooltip/id (escStrings) show the text.
std::string dotString(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            out += c;
        }
    }
    return out + "\"";
}

std::string inches(double px) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, std::round(px / 72 * 1000) / 1000);
    return std::string(buf, r.ptr);
}

GraphLayoutInput layoutInput(const GradientCheckpoint& g) {
    return layoutInputFromGraph(
        g.graph, [](const ComputationNode& n) { return nodeWidth(n.op); }, kNodeHeight);
}

// The graph `layout` lays out (same sizes and separations, same edges:
// repeats, self loops and edges to unknown nodes left out), so dot's drawing
// can be compared with ours.
void writeDot(std::ostream& out, const GradientCheckpoint& g) {
    const LayoutOptions defaults;
    const ComputationNode* loss = g.lossNode();
    const GraphLayoutInput in = layoutInput(g);
    out << "digraph ckptscope {\n"
        << "  graph [rankdir=TB, nodesep=" << inches(defaults.nodeSeparation)
        << ", ranksep=" << inches(defaults.rankSeparation) << "];\n"
        << "  node [shape=box, style=rounded, fixedsize=true, height=" << inches(kNodeHeight)
        << ", fontname=\"Helvetica\", fontsize=10];\n";
    for (const auto& [id, node] : g.graph.nodes()) {
        out << "  " << dotString(id) << " [label=" << dotString(node.op)
            << ", tooltip=" << dotString(id) << ", id=" << dotString(id)
            << ", width=" << inches(nodeWidth(node.op));
        if (&node == loss)
            out << ", style=\"rounded,filled,bold\", fillcolor=\"#ffd8d0\", color=\"#c03020\"";
        out << "];\n";
    }
    for (const auto& [from, to] : in.input.edges)
        out << "  " << dotString(in.ids[from]) << " -> " << dotString(in.ids[to]) << ";\n";
    out << "}\n";
}

const CommandSpec kLayout = {
    "layout",
    {"FILE"},
    "Layered drawing of a gradient checkpoint's graph: a summary (nodes, edges,\n"
    "ranks, crossings, edges reversed to break cycles, size), or with --json\n"
    "every node's centre, size and rank, every edge's route from border to\n"
    "border, the crossings and the file's warnings.\n",
    {jsonOption()},
    {},
    {},
    kFileExitStatus,
};

const CommandSpec kGraph = {
    "graph",
    {"FILE"},
    "The computation graph of a gradient checkpoint as Graphviz DOT: labels\n"
    "are ops, the loss node is highlighted.\n",
    {{"--dot", "", "Graphviz DOT (the default and only format)"}},
    {},
    {},
    kFileExitStatus,
};

} // namespace

int runLayout(const std::vector<std::string>& args) {
    const auto p = parseCommand(kLayout, args);
    if (!p)
        return kOk;
    const auto doc = openDocument(p->operands()[0]);
    const GradientCheckpoint& g = requireGradient(*doc, "layout");
    const GraphLayoutInput in = layoutInput(g);
    const GraphLayout layout = layoutGraph(in.input);
    if (p->has("--json"))
        writeLayoutJson(std::cout, *doc, layout, in.ids);
    else
        printSummary(*doc, layout);
    return kOk;
}

int runGraph(const std::vector<std::string>& args) {
    // DOT is the only format so far; --dot says so explicitly.
    const auto p = parseCommand(kGraph, args);
    if (!p)
        return kOk;
    const auto doc = openDocument(p->operands()[0]);
    writeDot(std::cout, requireGradient(*doc, "graph"));
    return kOk;
}

} // namespace cli
