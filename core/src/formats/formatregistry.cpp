// The one table of formats. Adding a format: a folder formats/<name>/ with a
// module (probe + open), a Format value, and one line in kModules below
// (docs/ARCHITECTURE.md, "How to add a format").
#include "ckptscope/formats/checkpointerror.h"
#include "ckptscope/formats/formatmodule.h"
#include "ckptscope/formats/openerror.h"

#include "formats/dcp/dcpfolder.h"
#include "formats/deepspeed/deepspeedfolder.h"
#include "formats/gguf/ggufformat.h"
#include "formats/gradient/gradientformat.h"
#include "formats/magicbytes.h"
#include "formats/oxck/oxckformat.h"
#include "formats/pytorch/pytorchformat.h"
#include "formats/safetensors/safetensorsformat.h"
#include "formats/safetensors/shardedmodel.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace ckptscope {

namespace {

// In probe order: safetensors before the JSON probes, as a header length's low
// byte can be a space or '{'; a safetensors index (a JSON object whose first
// keys hold "weight_map") before the gradient checkpoint's any JSON object.
const std::vector<FormatModule>& modules() {
    static const std::vector<FormatModule> kModules = {
        oxckFormat(),    ggufFormat(),           safetensorsFormat(), shardedSafetensorsFormat(),
        pytorchFormat(), shardedPytorchFormat(), gradientFormat(),
    };
    return kModules;
}

const std::vector<FolderFormat>& folders() {
    static const FormatModule deepspeed = deepSpeedFormat(), dcp = dcpFormat();
    static const std::vector<FolderFormat> kFolders = {
        {deepspeed, deepSpeedStepFolder, openDeepSpeed,
         [](const std::string& name) { return name.ends_with(".pt"); }},
        {dcp, [](const std::string& f) { return isDcpFolder(f) ? f : std::string(); }, openDcp,
         [](const std::string& name) { return name == ".metadata" || name.ends_with(".distcp"); },
         ".metadata"},
    };
    return kFolders;
}

const FormatModule* findModule(Format format) {
    for (const FormatModule& m : modules())
        if (m.format == format)
            return &m;
    return nullptr;
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string expectedFormats() {
    std::string list;
    const auto all = formatModules();
    for (size_t i = 0; i < all.size(); ++i)
        list += std::string(i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i].looksFor;
    return list;
}

} // namespace

FormatModule folderModule(const char* name, const char* description, const char* looksFor) {
    FormatModule m = {Format::Pytorch,
                      name,
                      description,
                      "/",
                      looksFor,
                      [](const ByteSource&) { return false; }, // a folder, never one file
                      nullptr,
                      [](const ByteSource& source) -> FormatIndex {
                          throw CheckpointError(
                              CheckpointError::Kind::Invalid,
                              source.name() + ": a checkpoint folder's file: open the folder");
                      }};
    m.pickled = true; // its files are torch.save archives
    m.partWord = "file";
    m.partWords = "files";
    return m;
}

std::span<const FolderFormat> folderFormats() {
    return folders();
}

std::span<const FormatModule> formatModules() {
    return modules();
}

const FormatModule& formatModule(Format format) {
    if (const FormatModule* m = findModule(format))
        return *m;
    throw std::logic_error("formatModule: a Format without a module");
}

const char* formatName(Format format) {
    const FormatModule* m = findModule(format);
    return m ? m->name : "?"; // a number read from the summary cache may name none
}

const FormatModule& detectFormat(const ByteSource& source) {
    const std::string& file = source.name();
    if (source.size() == 0)
        throw OpenError(file, "the file is empty; expected " + expectedFormats());
    for (const FormatModule& m : modules())
        if (m.probe(source))
            return m;
    // The verdict is the content's; a name only explains it.
    for (const FormatModule& m : modules())
        if (m.probeFailure && endsWith(file, m.extension))
            throw OpenError(file,
                            std::string("not a ") + m.description + ": " + m.probeFailure(source));
    throw OpenError(file, "byte 0: not a checkpoint: expected " + expectedFormats() + ", found \"" +
                              magicBytes(source) + "\"");
}

std::string checkpointDialogFilter() {
    std::vector<std::string> patterns;
    for (const FormatModule& m : modules()) {
        std::istringstream words(m.patterns);
        for (std::string p; words >> p;)
            // "*.safetensors.index.json" is among "*.json" already.
            if (std::find(patterns.begin(), patterns.end(), p) == patterns.end() &&
                !(p.ends_with(".json") && p != "*.json"))
                patterns.push_back(p);
    }
    std::string filter = "Checkpoints (";
    for (size_t i = 0; i < patterns.size(); ++i)
        filter += (i ? " " : "") + patterns[i];
    return filter + ");;All files (*)";
}

} // namespace ckptscope
