#include "clicommon.h"

#include "ckptscope/export/samplegenerator.h"
#include "ckptscope/formats/gguf/syntheticgguf.h"

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
    "benchmarks): KIND oxck (tensors), gradient (a computation graph of\n"
    "exactly N nodes) or gguf (a Llama-shaped model of one block type, and\n"
    "optionally its dequantized f32 twin as safetensors). Sizes take K, M, G.\n",
    {sizeOption("--tensors", "N", "oxck: the number of tensors (default 256)"),
     sizeOption("--size", "BYTES", "oxck, gguf: about this many bytes of values (default 1M)"),
     {"--type", "TYPE",
      "gguf: F32, F16, Q4_0, Q8_0, Q1_0, Q2_K, Q3_K, Q4_K, Q5_K or Q6_K (default Q4_K)"},
     {"--f32-twin", "FILE", "gguf: also write the dequantized values as f32 safetensors"},
     sizeOption("--nodes", "N", "gradient: number of nodes, 3 or more (default 2000)"),
     sizeOption("--optimizer-bytes", "BYTES", "gradient: optimizer-state bytes (default 0)"),
     sizeOption("--seed", "S", "the random seed (default 1)")},
    "generate needs a kind (oxck, gradient or gguf) and an output file",
    "oxck OUT [--tensors N] [--size BYTES] [--seed S]\n"
    "       ckptscope-cli generate gradient OUT [--nodes N] [--optimizer-bytes BYTES] [--seed S]\n"
    "       ckptscope-cli generate gguf OUT [--type TYPE] [--size BYTES] [--f32-twin FILE] "
    "[--seed S]",
    kFileExitStatus,
};

// The option's value as a number, when given (parseArgs checked it).
void setIfGiven(const ParsedArgs& p, const char* name, uint64_t& field) {
    if (p.has(name))
        field = parseSize(name, p.value(name));
}

// A ggml type by its name ("Q4_K"), when generate gguf writes it.
ckptscope::Dtype ggufType(const std::string& name) {
    for (uint32_t id = 0; id < 64; ++id) {
        const auto d = ckptscope::dtypeFromGgml(id);
        if (d && name == ckptscope::dtypeName(*d) && ckptscope::gguf::syntheticGgufType(*d))
            return *d;
    }
    throw UsageError(
        "--type takes F32, F16, Q4_0, Q8_0, Q1_0, Q2_K, Q3_K, Q4_K, Q5_K or Q6_K, not '" + name +
        "'");
}

void generateGguf(const ParsedArgs& p, const std::string& out) {
    ckptscope::gguf::SyntheticGgufSpec spec;
    setIfGiven(p, "--seed", spec.seed);
    setIfGiven(p, "--size", spec.totalBytes);
    if (p.has("--type"))
        spec.type = ggufType(p.value("--type"));
    if (p.has("--f32-twin"))
        spec.f32Twin = p.value("--f32-twin");
    ckptscope::gguf::writeSyntheticGguf(out, spec);
    if (!spec.f32Twin.empty())
        std::cerr << spec.f32Twin << ": written\n";
}

} // namespace

int runGenerate(const std::vector<std::string>& args) {
    const auto p = parseCommand(kGenerate, args);
    if (!p)
        return kOk;
    const std::string& kind = p->operands()[0];
    const std::string& out = p->operands()[1];
    const bool oxck = kind == "oxck", gguf = kind == "gguf";
    for (const char* name :
         {"--tensors", "--size", "--nodes", "--optimizer-bytes", "--type", "--f32-twin"}) {
        const std::string n = name;
        const bool allowed = n == "--size"                        ? oxck || gguf
                             : n == "--tensors"                   ? oxck
                             : n == "--type" || n == "--f32-twin" ? gguf
                                                                  : kind == "gradient";
        if (p->has(name) && !allowed)
            throw UsageError("unknown option " + n + " for generate " + kind);
    }
    ckptscope::SyntheticModelSpec model;
    ckptscope::SyntheticGraphSpec graph;
    setIfGiven(*p, "--seed", model.seed);
    setIfGiven(*p, "--seed", graph.seed);
    setIfGiven(*p, "--tensors", model.tensorCount);
    setIfGiven(*p, "--size", model.totalBytes);
    setIfGiven(*p, "--nodes", graph.nodeCount);
    setIfGiven(*p, "--optimizer-bytes", graph.optimizerBytes);
    if (gguf) {
        generateGguf(*p, out);
    } else if (oxck) {
        if (model.tensorCount == 0 || model.tensorCount > 10'000'000)
            throw UsageError("--tensors takes 1 to 10000000");
        ckptscope::writeSyntheticModel(out, model);
    } else if (kind == "gradient") {
        if (graph.nodeCount < 3 || graph.nodeCount > 10'000'000)
            throw UsageError("--nodes takes 3 to 10000000");
        makeSyntheticGradient(graph).save(out);
    } else {
        throw UsageError("generate: unknown kind '" + kind + "' (oxck, gradient or gguf)");
    }
    std::cerr << out << ": written\n";
    return kOk;
}

} // namespace cli
