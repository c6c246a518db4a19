#include "ckptscope/run/stepparser.h"

#include <algorithm>
#include <array>

namespace ckptscope {

namespace {

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}
bool isLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
char lower(char c) {
    return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
}

// Digits [from, to) as a number; nothing when they do not fit 64 bits.
std::optional<uint64_t> digitsValue(std::string_view s, size_t from, size_t to) {
    uint64_t v = 0;
    for (size_t i = from; i < to; ++i) {
        const auto d = uint64_t(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return std::nullopt;
        v = v * 10 + d;
    }
    return v;
}

struct DigitRun {
    size_t from, to;
    bool excluded = false;
};

std::vector<DigitRun> digitRuns(std::string_view s) {
    std::vector<DigitRun> runs;
    for (size_t i = 0; i < s.size();) {
        if (!isDigit(s[i])) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < s.size() && isDigit(s[j]))
            ++j;
        runs.push_back({i, j});
        i = j;
    }
    return runs;
}

// The letters directly before position `at`, as a whole word (lower case).
std::string letterWordBefore(std::string_view s, size_t at) {
    size_t b = at;
    while (b > 0 && isLetter(s[b - 1]))
        --b;
    std::string word;
    for (size_t k = b; k < at; ++k)
        word += lower(s[k]);
    return word;
}

// Marks runs belonging to shard tokens (00001-of-00004), dtype tokens
// (bf16, f32, int8, e4m3, …) and ggml's quantization types as llama.cpp
// names its files (model-Q4_0.gguf, Q5_K_M, IQ2_XXS, TQ1_0, NVFP4).
void excludeTokens(std::string_view s, std::vector<DigitRun>& runs) {
    static const std::array<std::string_view, 13> kDtypeWords = {
        "bf", "fp", "f", "float", "bfloat", "int", "uint", "i", "u", "q", "nf", "mxfp", "nvfp"};
    static const std::array<std::string_view, 3> kGgmlQuantWords = {"q", "iq", "tq"};
    static const std::array<std::string_view, 6> kWidths = {"4", "6", "8", "16", "32", "64"};
    for (size_t r = 0; r < runs.size(); ++r) {
        DigitRun& run = runs[r];
        // Shard: digits, "-of-" (or "_of_"), digits.
        if (r + 1 < runs.size() && runs[r + 1].from == run.to + 4) {
            const std::string_view mid = s.substr(run.to, 4);
            if (mid == "-of-" || mid == "_of_" || mid == "-OF-" || mid == "_OF_") {
                run.excluded = runs[r + 1].excluded = true;
                continue;
            }
        }
        const std::string word = letterWordBefore(s, run.from);
        const std::string_view digits = s.substr(run.from, run.to - run.from);
        // Q<bits> of any width, and each "_<digits>" right after it (Q4_0,
        // TQ2_0, the ARM repacks Q4_0_4_8).
        if (std::find(kGgmlQuantWords.begin(), kGgmlQuantWords.end(), word) !=
            kGgmlQuantWords.end()) {
            run.excluded = true;
            for (size_t k = r + 1;
                 k < runs.size() && runs[k].from == runs[k - 1].to + 1 && s[runs[k - 1].to] == '_';
                 ++k)
                runs[k].excluded = true;
        }
        if (std::find(kDtypeWords.begin(), kDtypeWords.end(), word) != kDtypeWords.end() &&
            std::find(kWidths.begin(), kWidths.end(), digits) != kWidths.end())
            run.excluded = true;
        // A model's size as its name gives it: 8B, 70b, 135M, 4k (context),
        // 1.5B, 8x7B (experts × size).
        if (run.to < s.size()) {
            const char unit = lower(s[run.to]);
            const bool wordEnds = run.to + 1 >= s.size() || !isLetter(s[run.to + 1]);
            if ((unit == 'b' || unit == 'm' || unit == 'k' || unit == 't') && wordEnds)
                run.excluded = true;
            if (unit == 'x' && r + 1 < runs.size() && runs[r + 1].from == run.to + 1)
                run.excluded = true;
        }
        // A version or size with a fraction (Llama-3.1, Qwen2.5, 0.5B): a step
        // has none.
        if (r + 1 < runs.size() && runs[r + 1].from == run.to + 1 && s[run.to] == '.')
            run.excluded = runs[r + 1].excluded = true;
        // The imatrix mark of quantized files (model.i1-Q4_K_M.gguf).
        if (word == "i" && digits == "1")
            run.excluded = true;
        // Float8 layouts: e4m3, e5m2 (the exponent and mantissa widths).
        if (word == "e" && r + 1 < runs.size() && runs[r + 1].from == run.to + 1 &&
            lower(s[run.to]) == 'm')
            run.excluded = runs[r + 1].excluded = true;
    }
}

} // namespace

const char* stepSourceName(StepSource source) {
    switch (source) {
    case StepSource::TrainerState:
        return "trainer_state.json";
    case StepSource::MetadataKey:
        return "metadata";
    case StepSource::GradientStep:
        return "gradient";
    case StepSource::FileName:
        return "file_name";
    case StepSource::None:
        return "none";
    }
    return "none";
}

std::optional<uint64_t> parseStepValue(std::string_view text) {
    size_t b = 0, e = text.size();
    while (b < e && text[b] == ' ')
        ++b;
    while (e > b && text[e - 1] == ' ')
        --e;
    if (b == e)
        return std::nullopt;
    for (size_t i = b; i < e; ++i)
        if (!isDigit(text[i]))
            return std::nullopt;
    return digitsValue(text, b, e);
}

const std::vector<std::string>& stepMetadataKeys() {
    static const std::vector<std::string> keys = {"step", "global_step", "iteration", "iter"};
    return keys;
}

std::optional<uint64_t>
stepFromMetadata(const std::vector<std::pair<std::string, std::string>>& metadata) {
    for (const std::string& key : stepMetadataKeys()) {
        // The later of repeated rows wins, as in the metadata reader.
        for (auto it = metadata.rbegin(); it != metadata.rend(); ++it) {
            if (it->first != key)
                continue;
            if (const auto step = parseStepValue(it->second))
                return step;
            break;
        }
    }
    return std::nullopt;
}

std::optional<uint64_t> stepFromFileName(std::string_view name) {
    std::string low(name);
    for (char& c : low)
        c = lower(c);
    std::vector<DigitRun> runs = digitRuns(name);
    excludeTokens(name, runs);
    auto runAt = [&](size_t from) -> const DigitRun* {
        for (const DigitRun& r : runs)
            if (r.from == from)
                return &r;
        return nullptr;
    };
    static const std::array<std::string_view, 6> kKeywords = {"step",      "global_step", "iter",
                                                              "iteration", "checkpoint",  "ckpt"};
    for (std::string_view key : kKeywords) {
        for (size_t pos = low.find(key); pos != std::string::npos; pos = low.find(key, pos + 1)) {
            size_t at = pos + key.size();
            if (at < low.size() && (low[at] == '-' || low[at] == '_' || low[at] == '.'))
                ++at;
            const DigitRun* run = runAt(at);
            if (!run || run->excluded)
                continue;
            if (const auto v = digitsValue(name, run->from, run->to))
                return v;
        }
    }
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
        if (it->excluded)
            continue;
        if (const auto v = digitsValue(name, it->from, it->to))
            return v;
    }
    return std::nullopt;
}

} // namespace ckptscope
