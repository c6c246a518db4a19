#include "ckptscope/run/trainerfiles.h"

#include "ckptscope/formats/openerror.h"
#include "ckptscope/io/filesource.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <limits>

namespace ckptscope {

namespace {

using nlohmann::json;

bool startsWith(std::string_view s, std::string_view p) {
    return s.substr(0, p.size()) == p;
}
bool endsWith(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// The whole file, refused beyond `maxBytes` before anything is read.
std::string readSmallFile(const std::string& path, uint64_t maxBytes) {
    try {
        // A side file in a bucket (a run under an s3:// prefix) too.
        const auto source = openByteSource(path);
        if (source->size() > maxBytes)
            throw OpenError(path, "too large to read (" + std::to_string(source->size()) +
                                      " bytes; at most " + std::to_string(maxBytes) + ")");
        return readAll(*source);
    } catch (const OpenError&) {
        throw;
    } catch (const std::exception& e) {
        throw OpenError(path, e.what());
    }
}

// Python's json module writes NaN, Infinity and -Infinity bare, which JSON
// (and nlohmann) refuse: quoted, they parse and numberOf reads them back.
// Strings are left alone; the text is copied only when there is one.
std::string quoteNonFinite(std::string text) {
    static const std::array<std::string_view, 3> kWords = {"NaN", "-Infinity", "Infinity"};
    std::string out;
    size_t copied = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
            continue;
        }
        if (c != 'N' && c != 'I' && c != '-')
            continue;
        for (std::string_view w : kWords)
            if (std::string_view(text).substr(i, w.size()) == w) {
                out.append(text, copied, i - copied).append("\"").append(w).append("\"");
                i += w.size() - 1;
                copied = i + 1;
                break;
            }
    }
    if (copied == 0)
        return text;
    return out.append(text, copied, std::string::npos);
}

std::optional<double> numberOf(const json& v) {
    if (v.is_number())
        return v.get<double>();
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s == "NaN")
            return std::numeric_limits<double>::quiet_NaN();
        if (s == "Infinity" || s == "-Infinity")
            return s[0] == '-' ? -INFINITY : INFINITY;
    }
    return std::nullopt;
}

std::optional<uint64_t> stepOf(const json& v) {
    if (v.is_number_unsigned())
        return v.get<uint64_t>();
    if (v.is_number_integer() && v.get<int64_t>() >= 0)
        return uint64_t(v.get<int64_t>());
    return std::nullopt;
}

// "[json.exception.parse_error.101] parse error at line 2, …" → the part
// after the bracket.
std::string jsonProblem(const json::exception& e) {
    const std::string what = e.what();
    const size_t bracket = what.find("] ");
    return "not valid JSON (" + (bracket == std::string::npos ? what : what.substr(bracket + 2)) +
           ")";
}

json parseFile(const std::string& path, std::string text, const json::parser_callback_t& cb) {
    try {
        json j = json::parse(quoteNonFinite(std::move(text)), cb);
        if (!j.is_object())
            throw OpenError(path, "not a JSON object");
        return j;
    } catch (const json::exception& e) {
        throw OpenError(path, jsonProblem(e));
    }
}

void addLog(TrainerLog& log, const json& entry) {
    for (const auto& [key, value] : entry.items()) {
        if (!isTrainerLogKey(key))
            continue;
        const auto v = numberOf(value);
        bool seen = false;
        for (const auto& kv : log)
            seen = seen || kv.first == key;
        if (v && !seen)
            log.emplace_back(key, *v);
    }
}

} // namespace

RunFileRole runFileRole(std::string_view name) {
    static const std::array<std::string_view, 17> kSideNames = {
        "optimizer.pt", "scheduler.pt", "scaler.pt", "rng_state.pth", "training_args.bin",
        "special_tokens_map.json", "added_tokens.json", "generation_config.json", kModelConfigName,
        kTrainerStateName, "vocab.json", "merges.txt", "chat_template.jinja", "adapter_config.json",
        "preprocessor_config.json",
        // DeepSpeed's tag and script
        "latest", "zero_to_fp32.py"};
    for (std::string_view n : kSideNames)
        if (name == n)
            return RunFileRole::SideFile;
    if ((startsWith(name, "rng_state_") && endsWith(name, ".pth")) ||
        startsWith(name, "tokenizer") || endsWith(name, ".safetensors.index.json") ||
        endsWith(name, ".bin.index.json"))
        return RunFileRole::SideFile;
    if (startsWith(name, "pytorch_model") && endsWith(name, ".bin"))
        return RunFileRole::PytorchPickle;
    return RunFileRole::Probe;
}

bool isTrainerLogKey(std::string_view key) {
    return key == "loss" || key == "learning_rate" || key == "grad_norm" || key == "epoch" ||
           (startsWith(key, "eval_") && key.size() > 5);
}

TrainerState readTrainerState(const std::string& path, bool history) {
    TrainerState state;
    std::string top; // the top-level key being read
    // Only global_step and log_history are kept, and of log_history only
    // the entries at global_step (and, for a history, the numbers of the
    // log keys): a long run's history never piles up as JSON.
    const json::parser_callback_t keep = [&](int depth, json::parse_event_t event, json& parsed) {
        if (event == json::parse_event_t::key && depth == 1) {
            top = parsed.get<std::string>();
            return top == "global_step" || top == "log_history";
        }
        if (event == json::parse_event_t::value && depth == 1 && top == "global_step")
            state.globalStep = stepOf(parsed);
        if (event != json::parse_event_t::object_end || depth != 2 || top != "log_history")
            return true;
        const auto at = parsed.contains("step") ? stepOf(parsed["step"]) : std::nullopt;
        if (!at)
            return false;
        // global_step comes before log_history in the Trainer's sorted keys;
        // if it does not, the entry is kept and judged below.
        if (!state.globalStep || *state.globalStep == *at)
            addLog(state.logAt[*at], parsed);
        if (history)
            for (const auto& [key, value] : parsed.items())
                if (const auto v = isTrainerLogKey(key) ? numberOf(value) : std::nullopt)
                    state.history[key].emplace_back(*at, *v);
        return false;
    };
    const json j = parseFile(path, readSmallFile(path, kTrainerStateMaxBytes), keep);
    if (j.contains("global_step") && !state.globalStep)
        throw OpenError(path, "global_step is not a whole number ≥ 0");
    if (state.globalStep)
        std::erase_if(state.logAt, [&](const auto& kv) { return kv.first != *state.globalStep; });
    return state;
}

std::map<uint64_t, TrainerLog> logsAt(const TrainerHistory& history,
                                      const std::set<uint64_t>& steps) {
    std::map<uint64_t, TrainerLog> out;
    for (const auto& logged : history) { // (clang 14 captures no bindings)
        const std::string& key = logged.first;
        for (const auto& [step, v] : logged.second) {
            if (!steps.count(step))
                continue;
            TrainerLog& log = out[step];
            if (std::none_of(log.begin(), log.end(),
                             [&](const auto& kv) { return kv.first == key; }))
                log.emplace_back(key, v);
        }
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> ModelConfig::rows() const {
    std::vector<std::pair<std::string, std::string>> out;
    auto text = [&](const char* key, const std::optional<std::string>& v) {
        if (v)
            out.emplace_back(key, *v);
    };
    auto number = [&](const char* key, const std::optional<uint64_t>& v) {
        if (v)
            out.emplace_back(key, std::to_string(*v));
    };
    text("architecture", architecture);
    text("model_type", modelType);
    number("hidden_size", hiddenSize);
    number("num_hidden_layers", numHiddenLayers);
    number("num_attention_heads", numAttentionHeads);
    number("num_key_value_heads", numKeyValueHeads);
    number("vocab_size", vocabSize);
    text("torch_dtype", torchDtype);
    return out;
}

ModelConfig readModelConfig(const std::string& path) {
    const json j = parseFile(path, readSmallFile(path, kModelConfigMaxBytes), nullptr);
    // Multimodal configs keep the language model's sizes in text_config.
    const json* inner =
        j.contains("text_config") && j["text_config"].is_object() ? &j["text_config"] : nullptr;
    auto string = [&](const char* key) -> std::optional<std::string> {
        for (const json* o : {&j, inner})
            if (o && o->contains(key) && (*o)[key].is_string())
                return (*o)[key].get<std::string>();
        return std::nullopt;
    };
    // The first key found, in the order given (an alias after the name:
    // GPT-2's n_embd is hidden_size, as transformers' attribute_map says).
    auto size = [&](std::initializer_list<const char*> keys) -> std::optional<uint64_t> {
        for (const char* key : keys)
            for (const json* o : {&j, inner})
                if (o && o->contains(key))
                    if (const auto v = stepOf((*o)[key]))
                        return v;
        return std::nullopt;
    };
    ModelConfig c;
    c.path = path;
    if (j.contains("architectures") && j["architectures"].is_array() &&
        !j["architectures"].empty() && j["architectures"][0].is_string())
        c.architecture = j["architectures"][0].get<std::string>();
    c.modelType = string("model_type");
    c.torchDtype = string("torch_dtype");
    if (!c.torchDtype)
        c.torchDtype = string("dtype");
    c.hiddenSize = size({"hidden_size", "n_embd", "d_model"});
    c.numHiddenLayers = size({"num_hidden_layers", "n_layer", "num_layers"});
    c.numAttentionHeads = size({"num_attention_heads", "n_head", "num_heads"});
    c.numKeyValueHeads = size({"num_key_value_heads"});
    c.vocabSize = size({"vocab_size"});
    return c;
}

std::optional<ModelConfig> modelConfigBeside(const std::string& modelPath) {
    const auto config = std::filesystem::path(modelPath).parent_path() / kModelConfigName;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(config, ec))
        return std::nullopt;
    try {
        return readModelConfig(config.string());
    } catch (const OpenError&) {
        return std::nullopt;
    }
}

} // namespace ckptscope
