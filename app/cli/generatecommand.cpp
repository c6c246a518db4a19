#include "clicommon.h"

#include "ckptscope/export/samplegenerator.h"

#include <charconv>
#include <iostream>

namespace cli {

namespace {

// "64M", "1G", "4096" → bytes (binary units).
uint64_t parseSize(const std::string& flag, const std::string& text) {
    uint64_t n = 0;
    const char* end = text.data() + text.size();
    const auto [p, ec] = std::from_chars(text.data(), end, n);
    if (ec != std::errc() || p == text.data())
        throw UsageError(flag + " takes a number, not '" + text + "'");
    uint64_t unit = 1;
    if (p != end) {
        const std::string suffix(p, end);
        if (suffix == "K" || suffix == "KiB")
            unit = 1ull << 10;
        else if (suffix == "M" || suffix == "MiB")
            unit = 1ull << 20;
        else if (suffix == "G" || suffix == "GiB")
            unit = 1ull << 30;
        else
            throw UsageError(flag + ": unknown unit '" + suffix + "' (K, M or G)");
    }
    if (n > UINT64_MAX / unit)
        throw UsageError(flag + " is too large");
    return n * unit;
}

} // namespace

int runGenerate(const std::vector<std::string>& args) {
    if (args.size() < 2)
        throw UsageError("generate needs a kind (oxck or gradient) and an output file");
    const std::string& kind = args[0];
    const std::string& out = args[1];
    ckptscope::SyntheticModelSpec model;
    ckptscope::SyntheticGraphSpec graph;
    for (size_t i = 2; i < args.size(); ++i) {
        const std::string& flag = args[i];
        if (i + 1 >= args.size())
            throw UsageError(flag + " needs a value");
        const uint64_t v = parseSize(flag, args[++i]);
        if (flag == "--seed") {
            model.seed = graph.seed = v;
        } else if (kind == "oxck" && flag == "--tensors") {
            model.tensorCount = v;
        } else if (kind == "oxck" && flag == "--size") {
            model.totalBytes = v;
        } else if (kind == "gradient" && flag == "--nodes") {
            graph.nodeCount = v;
        } else if (kind == "gradient" && flag == "--optimizer-bytes") {
            graph.optimizerBytes = v;
        } else {
            throw UsageError("unknown option " + flag + " for generate " + kind);
        }
    }
    if (kind == "oxck") {
        if (model.tensorCount == 0 || model.tensorCount > 10'000'000)
            throw UsageError("--tensors takes 1 to 10000000");
        ckptscope::writeSyntheticModel(out, model);
    } else if (kind == "gradient") {
        if (graph.nodeCount < 3 || graph.nodeCount > 10'000'000)
            throw UsageError("--nodes takes 3 to 10000000");
        makeSyntheticGradient(graph).save(out);
    } else {
        throw UsageError("generate: unknown kind '" + kind + "' (oxck or gradient)");
    }
    std::cerr << out << ": written\n";
    return kOk;
}

} // namespace cli
