// convert IN OUT: OXCK → .safetensors / .npz, safetensors → .oxck (or .npz).
#include "clicommon.h"

#include "ckptscope/export/converter.h"
#include "ckptscope/formats/checkpointerror.h"

#include <iostream>

namespace cli {

using namespace ckptscope;

int runConvert(const std::vector<std::string>& args) {
    const Options o = parseOptions(args, {"OUT"});
    if (o.output.empty())
        throw UsageError("convert needs IN and OUT");
    const auto target = convertTargetFor(o.output);
    if (!target)
        throw UsageError("cannot tell the output format from '" + o.output +
                         "': name it .safetensors, .npz or .oxck");
    const auto doc = openDocument(o.file);
    if (const std::string why = conversionRefusal(*doc, *target, o.output); !why.empty())
        throw UsageError(why);
    std::vector<std::string> warnings;
    try {
        warnings = convertDocument(*doc, *target, o.output);
    } catch (const ExportError& e) {
        // What the input holds cannot be written in that format: a bad input.
        throw OpenError(doc->path(), e.what());
    } catch (const SourceChangedError& e) {
        throw OpenError(doc->path(), e.what());
    } catch (const CheckpointError& e) {
        throw OpenError(doc->path(), e.what());
    }
    for (const std::string& w : warnings)
        std::cerr << o.file << ": warning: " << w << "\n";
    return kOk;
}

} // namespace cli
