// ckptscope-benchtool: one operation per process, so bench/compare.sh can
// time it (and its peak RSS) side by side with a reference tool.
//   path KIND          print the cached input file, writing it when missing:
//                      oxck-1M, oxck-1G, oxck-tensor256M, gradient-10k,
//                      gradient-opt4M, graph-N (N nodes, no optimizer state),
//                      run-8x256M (a folder: 8 OXCK files of 64 × 4 MiB
//                      tensors, values and metadata step differing per file)
//   load FILE          read and parse a gradient checkpoint (what Python's
//                      `json.load` does): GradientCheckpoint::fromJson
//   open FILE          open any checkpoint as the app does (Document::open:
//                      format detection, parsing, graph validation)
//   stats FILE         statistics + 32-bin histogram of every tensor of an
//                      OXCK file, as `ckptscope-cli stats` computes them
//   dot FILE           the checkpoint's graph in Graphviz DOT, on stdout
//   layout FILE        lay the checkpoint's graph out (layout engine)
#include "benchdata.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"
#include "ckptscope/layout/graphlayout.h"
#include "ckptscope/stats/tensorstats.h"

#include <chrono>
#include <iostream>
#include <map>
#include <string>

namespace {

using namespace ckptscope;

int usage() {
    std::cerr << "usage: ckptscope-benchtool path KIND | load FILE | open FILE | dot FILE | layout "
                 "FILE\n";
    return 2;
}

std::string pathOf(const std::string& kind) {
    if (kind == "oxck-1M")
        return benchdata::smallOxck();
    if (kind == "oxck-1G")
        return benchdata::largeOxck();
    if (kind == "oxck-1G-b")
        return benchdata::largeOxckOther();
    if (kind == "oxck-tensor256M")
        return benchdata::singleTensorOxck();
    if (kind == "run-8x256M")
        return benchdata::run8x256M();
    if (kind == "gradient-10k")
        return benchdata::graphGradient();
    if (kind == "gradient-opt4M")
        return benchdata::optimizerGradient();
    if (kind == "run-100x300") // 100 OXCK files × 300 tensors, 1 MiB each
        return benchdata::run100x300();
    if (kind.starts_with("graph-"))
        return benchdata::gradientFile(std::stoull(kind.substr(6)), 0);
    throw std::invalid_argument("unknown kind " + kind);
}

void printDot(const GradientCheckpoint& g) {
    std::cout << "digraph G {\n";
    std::map<std::string, size_t> index;
    for (const auto& [id, node] : g.graph.nodes()) {
        const size_t i = index.size();
        index.emplace(id, i);
        std::cout << "  n" << i << " [label=\"" << node.op << "\"];\n";
    }
    for (const auto& [producer, consumer] : g.graph.edges()) {
        const auto p = index.find(producer);
        const auto c = index.find(consumer);
        if (p != index.end() && c != index.end())
            std::cout << "  n" << p->second << " -> n" << c->second << ";\n";
    }
    std::cout << "}\n";
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3)
        return usage();
    const std::string cmd = argv[1];
    const std::string arg = argv[2];
    try {
        if (cmd == "path") {
            std::cout << pathOf(arg) << "\n";
        } else if (cmd == "load") {
            const GradientCheckpoint g = GradientCheckpoint::fromJson(benchdata::readAll(arg), arg);
            std::cout << g.graph.nodeCount() << " nodes, " << g.optimizerState.size()
                      << " optimizer blobs\n";
        } else if (cmd == "open") {
            const auto doc = Document::open(arg);
            std::cout << formatName(doc->format()) << ", " << doc->tensors().size() << " tensors, "
                      << doc->warnings().size() << " warnings\n";
        } else if (cmd == "stats") {
            const auto doc = Document::open(arg);
            StatsOptions options;
            options.bins = 32;
            uint64_t finite = 0;
            for (size_t i = 0; i < doc->tensors().size(); ++i)
                finite += computeStats(
                              doc->tensors()[i].dataLen,
                              [&doc, i](uint64_t first, uint64_t n, float* out) {
                                  doc->readValues(i, first, n, out);
                              },
                              options)
                              .stats.finite;
            std::cout << finite << " finite values\n";
        } else if (cmd == "dot") {
            printDot(GradientCheckpoint::load(arg));
        } else if (cmd == "layout") {
            const GradientCheckpoint g = GradientCheckpoint::load(arg);
            const auto start = std::chrono::steady_clock::now();
            const GraphLayoutInput in = layoutInputFromGraph(
                g.graph, [](const ComputationNode& n) { return 8.0 * double(n.op.size()) + 24; });
            const GraphLayout layout = layoutGraph(in.input);
            const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
            std::cout << layout.nodes.size() << " nodes, " << layout.crossings << " crossings, "
                      << took.count() << " s\n";
        } else {
            return usage();
        }
    } catch (const std::exception& e) {
        std::cerr << "ckptscope-benchtool: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
