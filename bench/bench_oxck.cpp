// Opening OXCK files: the index (names, shapes, offsets) without the values,
// and the metadata block parser.
#include "benchdata.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/oxck/metadatacodec.h"

#include <benchmark/benchmark.h>

namespace {

using namespace ckptscope;

// Format detection + index of 256 tensors; the 1 GiB file must cost about
// what the 1 MiB one does (target: ≤ 1.5×).
void openIndex(benchmark::State& state, const std::string& path) {
    for (auto _ : state) {
        const auto doc = Document::open(path);
        benchmark::DoNotOptimize(doc->tensors().data());
    }
    state.counters["tensors"] = double(Document::open(path)->tensors().size());
}

void BM_OpenIndex_1MiB(benchmark::State& state) {
    openIndex(state, benchdata::smallOxck());
}
void BM_OpenIndex_1GiB(benchmark::State& state) {
    openIndex(state, benchdata::largeOxck());
}
BENCHMARK(BM_OpenIndex_1MiB)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OpenIndex_1GiB)->Unit(benchmark::kMicrosecond);

// A metadata block of N pairs as the writer lays it out (sorted keys, raw
// newlines, escaped quotes).
std::string metadataText(int pairs) {
    Metadata m;
    for (int i = 0; i < pairs; ++i)
        m.emplace("train.config.key_" + std::to_string(i),
                  "value \"" + std::to_string(i * 7919) + "\"\nwith a line break\tand a tab");
    return serializeMetadata(m);
}

void BM_MetadataParse(benchmark::State& state) {
    const std::string text = metadataText(int(state.range(0)));
    for (auto _ : state) {
        Metadata m = parseMetadata(text, "bench.oxck", 28);
        benchmark::DoNotOptimize(m.size());
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text.size()));
}
BENCHMARK(BM_MetadataParse)->Arg(5)->Arg(10'000)->Unit(benchmark::kMicrosecond);

} // namespace
