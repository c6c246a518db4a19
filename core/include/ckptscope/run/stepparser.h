#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ckptscope {

// Where a checkpoint's training step came from (the `step_source` of
// `timeline --json`): TrainerState is a checkpoint folder's
// trainer_state.json (its global_step), named "trainer_state.json".
enum class StepSource { TrainerState, MetadataKey, GradientStep, FileName, None };
const char* stepSourceName(StepSource source);

// A metadata value that is a step: ASCII digits only, spaces around them
// allowed, fitting 64 bits. "1200" and " 7 " are steps; "1e3", "-1", "12 3",
// "" and 2^64 are not.
std::optional<uint64_t> parseStepValue(std::string_view text);

// The metadata keys that hold a step, in the order they are tried.
const std::vector<std::string>& stepMetadataKeys();

// The step from metadata rows: the first of stepMetadataKeys() (in that
// order) whose value parses; a key whose value does not parse is passed over.
std::optional<uint64_t>
stepFromMetadata(const std::vector<std::pair<std::string, std::string>>& metadata);

// The step a file (or checkpoint folder) name spells, or nothing:
// 1. the digits right after `step`, `global_step`, `iter`, `iteration`,
//    `checkpoint` or `ckpt` (case-insensitive), separated from it by one `-`,
//    `_`, `.` or nothing — the first keyword in that list that is followed by
//    digits wins;
// 2. else the last run of digits that is not part of a dtype token (`bf16`,
//    `fp16`, `f32`, `int8`, `uint8`, `float32`, `e4m3`, …: letters, as a whole
//    word, directly followed by 4, 8, 16, 32 or 64), of a shard token
//    (`00001-of-00004`), of a ggml type (`Q4_K_M`), of a model size (`8B`,
//    `135M`, `4k`, `8x7B`), of a number with a fraction (`Llama-3.1`,
//    `Qwen2.5`) nor the imatrix mark `i1`.
// Runs of digits that do not fit 64 bits are passed over.
std::optional<uint64_t> stepFromFileName(std::string_view baseName);

} // namespace ckptscope
