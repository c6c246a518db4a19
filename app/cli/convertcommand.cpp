// convert IN OUT: OXCK or PyTorch → .safetensors / .npz, safetensors → .oxck (or .npz);
// a sharded model → one file, any tensor file → shards (--shard-size).
#include "clicommon.h"
#include "textformat.h"

#include "ckptscope/export/converter.h"
#include "ckptscope/formats/checkpointerror.h"

#include <iostream>

namespace cli {

using namespace ckptscope;

namespace {

const CommandSpec kConvert = {
    "convert",
    {"IN", "OUT"},
    "Converts an OXCK file to OUT.safetensors or OUT.npz, a safetensors file to\n"
    "OUT.oxck (values converted to f32) or OUT.npz, a GGUF file to any of them\n"
    "(quantized tensors dequantized to F32, as ggml decodes them); the format\n"
    "comes from OUT's extension. A PyTorch file (torch.save, read without running its pickle)\n"
    "converts to any of them: each tensor written contiguous, whole (tensors\n"
    "that shared a storage each get their own bytes), its values that are not\n"
    "tensors, its quantized tensors and its complex128 tensors (complex ones\n"
    "for .oxck) left out, each named in a warning. A sharded model (its index\n"
    "or folder) converts to one OUT.safetensors. A DeepSpeed ZeRO folder\n"
    "(holding latest, or a global_stepN folder) converts to its fp32 master\n"
    "weights under the parameters' names, assembled from the ranks' partitions\n"
    "as zero_to_fp32.py assembles them, with the module's buffers in fp32\n"
    "(--weights module: the module as saved, e.g. bf16); the rest is left out\n"
    "and counted in a warning. A PyTorch distributed\n"
    "checkpoint (DCP: the folder holding .metadata and the ranks' .distcp\n"
    "files) converts to one model assembled from its chunks, as\n"
    "dcp_to_torch_save does; the optimizer's state (optim.*) is left out unless\n"
    "--include-optimizer, and values that are not tensors are named in a\n"
    "warning. With --shard-size, any tensor file is written as\n"
    "Hugging Face shards NAME-0000N-of-0000M.safetensors and their index\n"
    "NAME.safetensors.index.json (OUT named NAME.safetensors or\n"
    "NAME.safetensors.index.json).\n",
    {{"--shard-size", "SIZE",
      "write shards of at most SIZE bytes of tensors each\n"
      "(K, M, G: powers of 1024; KB, MB, GB: of 1000, as\n"
      "Hugging Face's max_shard_size)",
      false, "", [](const std::string& v) { parseSize("--shard-size", v); }},
     {"--include-optimizer", "",
      "also write the optimizer's state tensors (DCP: optim.*;\n"
      "DeepSpeed: exp_avg.NAME, exp_avg_sq.NAME, …)"},
     {"--weights", "KIND",
      "DeepSpeed: master (the fp32 master weights, the\n"
      "default) or module (the module as saved)",
      false, "",
      [](const std::string& v) {
          if (v != "master" && v != "module")
              throw UsageError("--weights takes master or module, not '" + v + "'");
      }}},
    "convert needs IN and OUT",
    {},
    kFileExitStatus,
};

// The write's own errors (a name or value the format cannot hold, the input
// changing under it) are about the input: exit 1 naming it.
template <typename Write> std::vector<std::string> writeFor(const Document& doc, Write write) {
    try {
        return write();
    } catch (const ExportError& e) {
        throw OpenError(doc.path(), e.what());
    } catch (const SourceChangedError& e) {
        throw OpenError(doc.path(), e.what());
    } catch (const CheckpointError& e) {
        throw OpenError(doc.path(), e.what());
    }
}

int convertSharded(const std::string& in, const std::string& out, uint64_t shardSize,
                   const ConvertChoice& choice) {
    if (shardIndexPathFor(out).empty())
        throw UsageError("--shard-size writes NAME.safetensors shards and their index: name "
                         "the output NAME.safetensors or NAME.safetensors.index.json, not '" +
                         out + "'");
    if (shardSize == 0)
        throw UsageError("--shard-size must be at least 1 byte");
    const auto doc = openDocument(in);
    if (!doc->hasTensors())
        throw UsageError(doc->path() + " is a gradient checkpoint; convert reads OXCK, "
                                       "safetensors and GGUF files");
    for (const std::string& w :
         writeFor(*doc, [&] { return convertToShards(*doc, out, shardSize, {}, choice); }))
        std::cerr << in << ": warning: " << printable(w) << "\n";
    return kOk;
}

} // namespace

int runConvert(const std::vector<std::string>& args) {
    const auto p = parseCommand(kConvert, args);
    if (!p)
        return kOk;
    const std::string& in = p->operands()[0];
    const std::string& out = p->operands()[1];
    ConvertChoice choice;
    choice.includeOptimizer = p->has("--include-optimizer");
    choice.moduleWeights = p->has("--weights") && p->value("--weights") == "module";
    if (p->has("--shard-size"))
        return convertSharded(in, out, parseSize("--shard-size", p->value("--shard-size")), choice);
    const auto target = convertTargetFor(out);
    if (!target)
        throw UsageError("cannot tell the output format from '" + out +
                         "': name it .safetensors, .npz or .oxck");
    const auto doc = openDocument(in);
    if (const std::string why = conversionRefusal(*doc, *target, out); !why.empty())
        throw UsageError(why);
    const auto warnings =
        writeFor(*doc, [&] { return convertDocument(*doc, *target, out, {}, choice); });
    for (const std::string& w : warnings)
        std::cerr << in << ": warning: " << printable(w) << "\n";
    return kOk;
}

} // namespace cli
