#include "clicommon.h"

#include "ckptscope/export/samplegenerator.h"

#include <charconv>
#include <iostream>

namespace cli {

namespace {

OptionSpec sizeOption(const char* name, const char* value, const char* help) {
    return {name, value, help, false, "", [name](const std::string& v) { parseSize(name, v); }};
}

const CommandSpec kGenerate = {
    "generate",
    {"KIND", "OUT"},
    "Writes a synthetic transformer-like checkpoint (for samples and\n"
    "benchmarks): KIND oxck (tensors) or gradient (a computation graph of\n"
    "exactly N nodes). Sizes take K, M, G.\n",
    {sizeOption("--tensors", "N", "oxck: the number of tensors (default 256)"),
     sizeOption("--size", "BYTES", "oxck: about this many bytes of values (default 1M)"),
     sizeOption("--nodes", "N", "gradient: number of nodes, 3 or more (default 2000)"),
     sizeOption("--optimizer-bytes", "BYTES", "gradient: optimizer-state bytes (default 0)"),
     sizeOption("--seed", "S", "the random seed (default 1)")},
    "generate needs a kind (oxck or gradient) and an output file",
    "oxck OUT [--tensors N] [--size BYTES] [--seed S]\n"
    "       ckptscope-cli generate gradient OUT [--nodes N] [--optimizer-bytes BYTES] [--seed S]",
    kFileExitStatus,
};

// The option's value as a number, when given (parseArgs checked it).
void setIfGiven(const ParsedArgs& p, const char* name, uint64_t& field) {
    if (p.has(name))
        field = parseSize(name, p.value(name));
}

} // namespace

int runGenerate(const std::vector<std::string>& args) {
    const auto p = parseCommand(kGenerate, args);
    if (!p)
        return kOk;
    const std::string& kind = p->operands()[0];
    const std::string& out = p->operands()[1];
    const bool oxck = kind == "oxck";
    for (const char* name : {"--tensors", "--size", "--nodes", "--optimizer-bytes"}) {
        const bool forOxck = name == std::string("--tensors") || name == std::string("--size");
        if (p->has(name) && forOxck != oxck)
            throw UsageError("unknown option " + std::string(name) + " for generate " + kind);
    }
    ckptscope::SyntheticModelSpec model;
    ckptscope::SyntheticGraphSpec graph;
    setIfGiven(*p, "--seed", model.seed);
    setIfGiven(*p, "--seed", graph.seed);
    setIfGiven(*p, "--tensors", model.tensorCount);
    setIfGiven(*p, "--size", model.totalBytes);
    setIfGiven(*p, "--nodes", graph.nodeCount);
    setIfGiven(*p, "--optimizer-bytes", graph.optimizerBytes);
    if (oxck) {
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
