// GGUF dequantization: MB/s of stored blocks turned into f32 by
// gguf::dequantizeBlocks, per ggml type. The blocks (16 MiB, beyond the
// caches, as a file's pages are) are decoded 64 Ki values at a time into a
// buffer that stays in L2, as the statistics read them.
#include "formats/gguf/ggmlquants.h"
#include "formats/gguf/ggmltype.h"

#include <benchmark/benchmark.h>

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
