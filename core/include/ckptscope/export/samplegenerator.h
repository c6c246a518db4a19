#pragma once

#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <cstdint>
#include <string>

namespace ckptscope {

// Synthetic checkpoints for samples, benchmarks and tests, written with the
// project's own writers. Deterministic for a given seed.

struct SyntheticModelSpec {
    uint64_t tensorCount = 256;
    uint64_t totalBytes = 1 << 20; // approximate size of the values
    uint64_t seed = 1;
};

// Streams an OXCK file of transformer-like tensor names
// (layers.N.attn.q.weight …) whose values follow a few distributions, without
// holding the values in memory. Written atomically (temporary + rename).
void writeSyntheticModel(const std::string& path, const SyntheticModelSpec& spec);

struct SyntheticGraphSpec {
    uint64_t nodeCount = 2000;   // exact (at least 3)
    uint64_t optimizerBytes = 0; // total optimizer-state bytes (f32 Adam moments)
    uint64_t step = 1200;
    uint64_t seed = 1;
    bool completeBackward = true; // gradient CIDs on every node
};

// A transformer-like computation graph: embedding, N blocks of
// layer_norm → q/k/v matmuls → attention → projection → residual add →
// MLP (matmul, gelu, matmul) → add, dropouts to make the count exact, then
// the loss, with UUID-like ids and CID-like strings. Edges follow the CIDs.
GradientCheckpoint makeSyntheticGradient(const SyntheticGraphSpec& spec);

} // namespace ckptscope
