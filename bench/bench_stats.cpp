// Statistics + histogram over stored values: the whole 1 GiB file (256
// tensors of 4 MiB, both cores), one 256 MiB tensor (beyond the in-memory
// budget: values are read twice), values already in memory, and the
// reference: reading the file as `cat` does.
#include "benchdata.h"

#include "ckptscope/document/document.h"
#include "ckptscope/stats/tensorstats.h"
#include "stats/bincounter.h"
#include "stats/statskernels.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <fcntl.h>
#include <random>
#include <stdexcept>
#include <unistd.h>
#include <vector>

namespace {

using namespace ckptscope;

constexpr int kBins = 32;

uint64_t statsOverFile(const Document& doc) {
    StatsOptions options;
    options.bins = kBins;
    uint64_t finite = 0;
    for (size_t i = 0; i < doc.tensors().size(); ++i) {
        const StatsResult r = computeStats(
            doc.tensors()[i].dataLen,
            [&doc, i](uint64_t first, uint64_t n, float* out) { doc.readValues(i, first, n, out); },
            options);
        finite += r.stats.finite;
    }
    return finite;
}

void statsFile(benchmark::State& state, const std::string& path) {
    const auto doc = Document::open(path);
    statsOverFile(*doc); // page cache warm
    for (auto _ : state)
        benchmark::DoNotOptimize(statsOverFile(*doc));
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(doc->fileSize()));
}

void BM_StatsHistogram_File1GiB(benchmark::State& state) {
    statsFile(state, benchdata::largeOxck());
}
void BM_StatsHistogram_Tensor256MiB(benchmark::State& state) {
    statsFile(state, benchdata::singleTensorOxck());
}
BENCHMARK(BM_StatsHistogram_File1GiB)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_StatsHistogram_Tensor256MiB)->Unit(benchmark::kMillisecond)->UseRealTime();

// The reference: read the file front to back through a 128 KiB buffer, as
// `cat FILE > /dev/null` does.
void BM_ReadLikeCat_File1GiB(benchmark::State& state) {
    const std::string path = benchdata::largeOxck();
    std::vector<char> buffer(128 * 1024);
    uint64_t total = 0;
    for (auto _ : state) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            throw std::runtime_error(path + ": cannot open");
        total = 0;
        for (ssize_t n; (n = ::read(fd, buffer.data(), buffer.size())) > 0;)
            total += uint64_t(n);
        ::close(fd);
        benchmark::DoNotOptimize(total);
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(total));
}
BENCHMARK(BM_ReadLikeCat_File1GiB)->Unit(benchmark::kMillisecond)->UseRealTime();

// Compute alone: 16M values in memory, one thread (the loops, no I/O).
void BM_StatsHistogram_Memory(benchmark::State& state) {
    std::vector<float> v(16u << 20);
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    for (float& f : v)
        f = normal(rng);
    const int bins = int(state.range(0));
    for (auto _ : state) {
        const StatsResult r = computeStats(v.data(), v.size(), bins);
        benchmark::DoNotOptimize(r.stats.finite);
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(v.size() * sizeof(float)));
}
BENCHMARK(BM_StatsHistogram_Memory)->Arg(0)->Arg(32)->Arg(1000)->Unit(benchmark::kMillisecond);

// The kernels alone, one thread, on one block of values (256 KiB, in L2 as
// a block is when the statistics scan it): ns per value of each kernel, the
// figures docs/PERFORMANCE.md weighs against `cat`. Kernel 0: Auto (AVX-512
// where the CPU has it), 1: AVX2, 2: scalar.
const std::vector<float>& blockValues() {
    static const std::vector<float> v = [] {
        std::vector<float> out(stats::kBlock);
        std::mt19937 rng(5);
        std::normal_distribution<float> normal(0.0f, 0.02f);
        for (float& f : out)
            f = normal(rng);
        return out;
    }();
    return v;
}
const stats::Kernel kKernels[] = {stats::Kernel::Auto, stats::Kernel::Avx2, stats::Kernel::Scalar};

void perValue(benchmark::State& state, uint64_t values) {
    state.counters["ns/value"] =
        benchmark::Counter(double(values) * double(state.iterations()),
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Pass 1: counts, extremes and moments.
void BM_ScanBlock(benchmark::State& state) {
    const std::vector<float>& v = blockValues();
    const stats::Kernel kernel = kKernels[state.range(0)];
    for (auto _ : state)
        benchmark::DoNotOptimize(stats::scanBlock(v.data(), v.size(), kernel).sumSq);
    perValue(state, v.size());
}
BENCHMARK(BM_ScanBlock)->ArgName("kernel")->DenseRange(0, 2);

// Pass 2: the histogram's counter, by bin count.
void BM_BinCounter(benchmark::State& state) {
    const std::vector<float>& v = blockValues();
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    Histogram h;
    h.lo = *lo;
    h.hi = *hi;
    h.counts.assign(size_t(state.range(0)), 0);
    stats::BinCounter<float> counter(h, kKernels[state.range(1)]);
    for (auto _ : state) {
        counter.add(v.data(), v.size());
        benchmark::DoNotOptimize(counter.counts.data());
    }
    perValue(state, v.size());
}
BENCHMARK(BM_BinCounter)
    ->ArgNames({"bins", "kernel"})
    ->ArgsProduct({{10, 32, 64, 65, 100, 1000}, {0, 1}});

// What any counter that increments one entry per value costs on this
// machine, whatever computes the entries: one increment per value, entries
// spread over 1 000 bins (normal, σ 150) in `tables` tables taken in turn
// (more tables: neighbours in one bin wait less on each other). Past the
// bit-sliced counter's bins the histogram is bound by this.
void BM_IncrementFloor(benchmark::State& state) {
    const auto tables = uint32_t(state.range(0));
    std::vector<uint32_t> at(stats::kBlock);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(500.0f, 150.0f);
    for (size_t i = 0; i < at.size(); ++i)
        at[i] = uint32_t(std::clamp(int(normal(rng)), 0, 999)) + 1000 * uint32_t(i % tables);
    std::vector<uint32_t> table(1000 * size_t(tables), 0);
    for (auto _ : state) {
        for (const uint32_t k : at)
            ++table[k];
        benchmark::DoNotOptimize(table.data());
    }
    perValue(state, at.size());
}
BENCHMARK(BM_IncrementFloor)->ArgName("tables")->Arg(1)->Arg(2)->Arg(4)->Arg(8);

} // namespace
