// Gradient checkpoints: JSON parsing (a 10 000-node graph of ~7 MB, and a
// small graph with 4 MiB of optimizer-state bytes, ~40 MB of pretty JSON),
// loading from disk, and the topological order.
#include "benchdata.h"

#include "ckptscope/export/samplegenerator.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <benchmark/benchmark.h>

namespace {

using namespace ckptscope;

void parse(benchmark::State& state, const std::string& path) {
    const std::string text = benchdata::readAll(path);
    for (auto _ : state) {
        GradientCheckpoint g = GradientCheckpoint::fromJson(text, path);
        benchmark::DoNotOptimize(g.graph.nodeCount());
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text.size()));
}

void BM_GradientParse_Graph10k(benchmark::State& state) {
    parse(state, benchdata::graphGradient());
}
void BM_GradientParse_Optimizer4MiB(benchmark::State& state) {
    parse(state, benchdata::optimizerGradient());
}
BENCHMARK(BM_GradientParse_Graph10k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GradientParse_Optimizer4MiB)->Unit(benchmark::kMillisecond);

void BM_GradientLoad_Optimizer4MiB(benchmark::State& state) {
    const std::string path = benchdata::optimizerGradient();
    for (auto _ : state) {
        GradientCheckpoint g = GradientCheckpoint::load(path);
        benchmark::DoNotOptimize(g.optimizerState.size());
    }
}
BENCHMARK(BM_GradientLoad_Optimizer4MiB)->Unit(benchmark::kMillisecond);

void BM_TopologicalOrder(benchmark::State& state) {
    SyntheticGraphSpec spec;
    spec.nodeCount = uint64_t(state.range(0));
    const GradientCheckpoint g = makeSyntheticGradient(spec);
    for (auto _ : state) {
        const auto order = g.graph.topologicalOrder();
        benchmark::DoNotOptimize(order.data());
    }
    state.counters["nodes"] = double(g.graph.nodeCount());
}
BENCHMARK(BM_TopologicalOrder)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

} // namespace
