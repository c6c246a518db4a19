// GGUF dequantization: MB/s of stored blocks turned into f32 by
// gguf::dequantizeBlocks, per ggml type. The blocks (16 MiB, beyond the
// caches, as a file's pages are) are decoded 64 Ki values at a time into a
// buffer that stays in L2, as the statistics read them.
#include "formats/gguf/ggmlquants.h"
#include "formats/gguf/ggmltype.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace ckptscope;

void dequantize(benchmark::State& state, const gguf::GgmlTypeInfo* type) {
    const size_t chunkBlocks = (size_t(1) << 16) / type->blockElements;
    const size_t blocks = (size_t(16) << 20) / type->blockBytes / chunkBlocks * chunkBlocks;
    std::vector<uint8_t> src(blocks * type->blockBytes);
    std::mt19937 random(type->id);
    for (uint8_t& b : src)
        b = uint8_t(random() & 0x3F); // f16 and f32 scales finite and normal
    std::vector<float> out(chunkBlocks * type->blockElements);
    for (auto _ : state) {
        for (size_t first = 0; first < blocks; first += chunkBlocks) {
            gguf::dequantizeBlocks(type->id, src.data() + first * type->blockBytes, chunkBlocks,
                                   out.data());
            benchmark::DoNotOptimize(out.data());
            benchmark::ClobberMemory();
        }
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(src.size()));
    state.counters["values/s"] =
        benchmark::Counter(double(blocks) * type->blockElements * double(state.iterations()),
                           benchmark::Counter::kIsRate);
}

// BM_GgufDequantize/<TYPE> for every type ggml decodes.
const bool kRegistered = [] {
    for (const gguf::GgmlTypeInfo& t : gguf::ggmlTypes())
        if (t.dequantizable)
            benchmark::RegisterBenchmark((std::string("BM_GgufDequantize/") + t.name).c_str(),
                                         dequantize, &t)
                ->Unit(benchmark::kMillisecond);
    return true;
}();

} // namespace

namespace {

// Issue 38 item 11's one-pass design for Q4_K statistics would first read
// only each super-block's scales (16 of its 144 bytes) to bound the
// extremes. What that pass costs against a full one, over 512 MiB of
// super-blocks beyond the caches, as a file's pages in memory are: 0 reads
// every byte (a full pass through a map), 1 only the scale bytes (the scales
// pass through a map: every cache line pair is still fetched, the scales
// lying 144 bytes apart), 2 copies 1 MiB at a time into a buffer that stays
// in L2 (what `pread`, the statistics' default, costs either pass, since it
// copies whole ranges: a scales pass by pread is a full copy).
void BM_Q4KPass(benchmark::State& state) {
    constexpr size_t kBlock = 144, kBytes = size_t(512) << 20;
    static const std::vector<uint8_t> file = [] {
        std::vector<uint8_t> out(kBytes / kBlock * kBlock);
        std::mt19937 random(11);
        for (size_t i = 0; i < out.size(); i += 4)
            out[i] = uint8_t(random());
        return out;
    }();
    const int kind = int(state.range(0));
    std::vector<uint8_t> buffer(size_t(1) << 20);
    for (auto _ : state) {
        uint64_t sum = 0;
        if (kind == 0) {
            for (size_t i = 0; i + 8 <= file.size(); i += 8) {
                uint64_t w;
                std::memcpy(&w, file.data() + i, 8);
                sum += w;
            }
        } else if (kind == 1) {
            for (size_t i = 0; i < file.size(); i += kBlock) {
                uint64_t a, b;
                std::memcpy(&a, file.data() + i, 8); // d, dmin, 4 scale bytes
                std::memcpy(&b, file.data() + i + 8, 8);
                sum += a ^ b;
            }
        } else {
            for (size_t i = 0; i < file.size(); i += buffer.size()) {
                const size_t n = std::min(buffer.size(), file.size() - i);
                std::memcpy(buffer.data(), file.data() + i, n);
                benchmark::ClobberMemory();
                sum += buffer[n / 2];
            }
        }
        benchmark::DoNotOptimize(sum);
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(file.size()));
}
BENCHMARK(BM_Q4KPass)->ArgName("kind")->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

} // namespace
