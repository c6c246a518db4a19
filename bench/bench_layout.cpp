// The layered graph layout (core/src/graphlayout*.cpp) on transformer-like
// computation graphs of 2 000, 10 000 and 100 000 nodes. Targets: 10 000
// nodes in under 1 s, 100 000 in under 10 s; ≥ 50× faster than
// `dot -Tplain` on 2 000 nodes (bench/compare.sh, when Graphviz is there).
#include "benchdata.h"

#include "ckptscope/export/samplegenerator.h"
#include "ckptscope/layout/graphlayout.h"

#include <benchmark/benchmark.h>

namespace {

using namespace ckptscope;

void BM_Layout(benchmark::State& state) {
    SyntheticGraphSpec spec;
    spec.nodeCount = uint64_t(state.range(0));
    const GradientCheckpoint g = makeSyntheticGradient(spec);
    const GraphLayoutInput in = layoutInputFromGraph(
        g.graph, [](const ComputationNode& n) { return 8.0 * double(n.op.size()) + 24; });
    uint64_t crossings = 0;
    for (auto _ : state) {
        const GraphLayout layout = layoutGraph(in.input);
        crossings = layout.crossings;
        benchmark::DoNotOptimize(layout.nodes.data());
    }
    state.counters["nodes"] = double(in.input.widths.size());
    state.counters["edges"] = double(in.input.edges.size());
    state.counters["crossings"] = double(crossings);
}
BENCHMARK(BM_Layout)
    ->Arg(2'000)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

} // namespace
