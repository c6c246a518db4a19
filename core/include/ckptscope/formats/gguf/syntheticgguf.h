#pragma once

#include "ckptscope/formats/dtype.h"

#include <cstdint>
#include <string>

namespace ckptscope::gguf {

// A synthetic Llama-style GGUF model for benchmarks and tests: token_embd,
// blk.N.{attn_q,attn_k,attn_v,attn_output,ffn_gate,ffn_up,ffn_down}.weight
// in `type`, the norms in F32, llama.* metadata. Blocks are realistic: finite
// positive f16 scales, random codes. Deterministic for a given seed.
struct SyntheticGgufSpec {
    Dtype type = Dtype::Q4_K;      // F32, F16, Q4_0, Q8_0, Q1_0, Q2_K … Q6_K
    uint64_t totalBytes = 1 << 20; // about this many bytes of tensor data
    uint64_t seed = 1;
    std::string f32Twin; // when set: a safetensors file of the dequantized values, same names
};

// The types writeSyntheticGguf writes.
bool syntheticGgufType(Dtype type);

// Streams the file (and its twin), each written atomically (temporary +
// rename). Throws std::invalid_argument for a type it does not write,
// IoError when a file cannot be written.
void writeSyntheticGguf(const std::string& path, const SyntheticGgufSpec& spec);

} // namespace ckptscope::gguf
