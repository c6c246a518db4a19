// convert IN OUT: OXCK → .safetensors / .npz, safetensors → .oxck (or .npz).
#include "clicommon.h"

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
    "OUT.oxck (values converted to f32) or OUT.npz; the format comes from OUT's\n"
    "extension.\n",
    {},
    "convert needs IN and OUT",
    {},
    kFileExitStatus,
};

} // namespace

int runConvert(const std::vector<std::string>& args) {
    const auto p = parseCommand(kConvert, args);
    if (!p)
        return kOk;
    const std::string& in = p->operands()[0];
    const std::string& out = p->operands()[1];
    const auto target = convertTargetFor(out);
    if (!target)
        throw UsageError("cannot tell the output format from '" + out +
                         "': name it .safetensors, .npz or .oxck");
    const auto doc = openDocument(in);
    if (const std::string why = conversionRefusal(*doc, *target, out); !why.empty())
        throw UsageError(why);
    std::vector<std::string> warnings;
    try {
        warnings = convertDocument(*doc, *target, out);
    } catch (const ExportError& e) {
        // What the input holds cannot be written in that format: a bad input.
        throw OpenError(doc->path(), e.what());
    } catch (const SourceChangedError& e) {
        throw OpenError(doc->path(), e.what());
    } catch (const CheckpointError& e) {
        throw OpenError(doc->path(), e.what());
    }
    for (const std::string& w : warnings)
        std::cerr << in << ": warning: " << w << "\n";
    return kOk;
}

} // namespace cli
