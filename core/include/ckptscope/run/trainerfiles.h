#pragma once

// The files a Hugging Face Trainer writes into a run folder besides the
// model: recognised by name (before any content probe), and the two read:
// trainer_state.json (the step and what was logged at it) and config.json
// (the model's architecture and sizes).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ckptscope {

// What a file in a run folder is, by its name alone.
enum class RunFileRole {
    Probe,         // read its first bytes: a checkpoint or not
    SideFile,      // optimizer.pt, tokenizer*, config.json, trainer_state.json, an index, …
    PytorchPickle, // pytorch_model*.bin: the model, unless model.safetensors is beside it
};
RunFileRole runFileRole(std::string_view baseName);

inline constexpr const char* kTrainerStateName = "trainer_state.json";
inline constexpr const char* kModelConfigName = "config.json";

// Larger files are not read (a warning says so): what they claim is never
// held in memory.
inline constexpr uint64_t kTrainerStateMaxBytes = uint64_t(128) << 20;
inline constexpr uint64_t kModelConfigMaxBytes = uint64_t(4) << 20;

// The keys of a log_history entry that become metadata series of the run:
// loss, learning_rate, grad_norm, epoch and every eval_*.
bool isTrainerLogKey(std::string_view key);

using TrainerLog = std::vector<std::pair<std::string, double>>; // (key, value)
// Every value logged under each log key: (step, value) in log_history's order.
using TrainerHistory = std::map<std::string, std::vector<std::pair<uint64_t, double>>>;

struct TrainerState {
    std::optional<uint64_t> globalStep;
    // The numeric values of the log keys of the log_history entries at
    // global_step (all entries when it is absent), by their `step` (keys in
    // entry order, each entry's in key order); a key logged twice at one
    // step keeps its first value.
    // NaN and ±Infinity (Python's json writes them bare) are read as such.
    std::map<uint64_t, TrainerLog> logAt;
    TrainerHistory history; // filled when asked for
};

// Reads trainer_state.json, keeping the log_history entries at its own
// global_step, and with `history` every logged value (the run's curves
// between its checkpoints). Throws OpenError naming the file and what is
// wrong (too large, not JSON, global_step not a step).
TrainerState readTrainerState(const std::string& path, bool history = false);

// What `history` logged at each of `steps` (those it logged anything at),
// the first value of each key there: a run's state telling each checkpoint
// what was logged at its step.
std::map<uint64_t, TrainerLog> logsAt(const TrainerHistory& history,
                                      const std::set<uint64_t>& steps);

// config.json of a transformers model: architectures[0], model_type, sizes
// (from text_config when the top level lacks them, as in multimodal models;
// GPT-2's n_embd, n_layer, n_head and T5's d_model, num_layers, num_heads
// where the usual name is absent) and torch_dtype (or `dtype`, its newer
// name).
struct ModelConfig {
    std::string path;
    std::optional<std::string> architecture, modelType, torchDtype;
    std::optional<uint64_t> hiddenSize, numHiddenLayers, numAttentionHeads, numKeyValueHeads,
        vocabSize;

    // (config.json key, value as text) for an Overview, in that order,
    // absent ones left out; "architecture" stands for architectures[0].
    std::vector<std::pair<std::string, std::string>> rows() const;
    bool operator==(const ModelConfig&) const = default;
};

// Throws OpenError naming the file (too large, not JSON, not an object).
ModelConfig readModelConfig(const std::string& path);

// The config.json beside a model file (in its folder), if there is one and
// it reads; a bad one is left out (readModelConfig says why).
std::optional<ModelConfig> modelConfigBeside(const std::string& modelPath);

} // namespace ckptscope
