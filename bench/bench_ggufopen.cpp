// GGUF header reading: a model's header with a tokenizer of 150 000 strings
// (and their scores and types) and 300 tensor infos, read by readGgufHeader
// from memory. Opening costs one pass over the header: the arrays are
// skipped, not turned into rows (MB/s of header).
#include "ckptscope/formats/gguf/ggufreader.h"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace {

using namespace ckptscope;

struct Writer {
    std::vector<uint8_t> bytes;
    void put(uint64_t v, int n) {
        for (int i = 0; i < n; ++i)
            bytes.push_back(uint8_t(v >> (8 * i)));
    }
    void str(const std::string& s) {
        put(s.size(), 8);
        bytes.insert(bytes.end(), s.begin(), s.end());
    }
    void arrayOf(const std::string& key, gguf::ValueType item, uint64_t n) {
        str(key);
        put(uint32_t(gguf::ValueType::Array), 4);
        put(uint32_t(item), 4);
        put(n, 8);
    }
};

std::vector<uint8_t> modelHeader(uint64_t tokens, uint64_t tensors) {
    Writer w;
    w.bytes = {'G', 'G', 'U', 'F'};
    w.put(3, 4);
    w.put(tensors, 8);
    w.put(3, 8);
    w.arrayOf("tokenizer.ggml.tokens", gguf::ValueType::Str, tokens);
    for (uint64_t i = 0; i < tokens; ++i)
        w.str("token" + std::to_string(i));
    w.arrayOf("tokenizer.ggml.scores", gguf::ValueType::F32, tokens);
    w.bytes.resize(w.bytes.size() + tokens * 4, 0);
    w.arrayOf("tokenizer.ggml.token_type", gguf::ValueType::I32, tokens);
    w.bytes.resize(w.bytes.size() + tokens * 4, 0);
    for (uint64_t t = 0; t < tensors; ++t) {
        w.str("blk." + std::to_string(t) + ".w");
        w.put(1, 4);
        w.put(32, 8); // ne[0]
        w.put(0, 4);  // F32
        w.put(t * 128, 8);
    }
    w.bytes.resize((w.bytes.size() + 31) / 32 * 32 + tensors * 128, 0);
    return w.bytes;
}

void BM_GgufOpenHeader(benchmark::State& state) {
    const MemorySource source(modelHeader(uint64_t(state.range(0)), 300), "bench.gguf");
    for (auto _ : state) {
        gguf::GgufHeader h = gguf::readGgufHeader(source);
        benchmark::DoNotOptimize(h.tensors.data());
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(source.size()));
}
BENCHMARK(BM_GgufOpenHeader)->Arg(30000)->Arg(150000)->Unit(benchmark::kMillisecond);

} // namespace
