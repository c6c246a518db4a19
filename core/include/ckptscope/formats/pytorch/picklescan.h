#pragma once

#include "ckptscope/formats/formatindex.h"
#include "ckptscope/io/bytesource.h"

#include <string>
#include <vector>

namespace ckptscope {

// What a file's pickle would import and call if Python loaded it, read
// without running it and without reading its storages (a scanner's view: a
// damaged storage does not hide the imports).
struct PickleScan {
    bool holdsPickle = false; // false: not a torch.save file (JSON, safetensors…)
    std::vector<PickleImport> imports;
    ObjectTree objects;                // the nodes PickleImport::calls point into
    std::vector<std::string> warnings; // "unsafe import os.system called with […]"
    // Why the pickle could not be read to its end ("" when it was): the
    // imports before that point are still listed.
    std::string error;
};

// Scans a torch.save file (zip or legacy). Throws only for I/O errors.
PickleScan scanPickle(const ByteSource& source);

// What the pickle would run, each call as Python spells it
// ("os.system('echo pwned > /tmp/x')"; a call of a call's result as
// "builtins.getattr(…)('…')"); an unsafe global never called by its name.
std::vector<std::string> unsafeCalls(const ObjectTree& tree,
                                     const std::vector<PickleImport>& imports);

// "safe", "unsafe", "unknown": as info --json and scan write a risk.
const char* importRiskName(ImportRisk risk);
// The arguments of a call (PickleImport::calls) as one line of JSON, as
// `objects` writes them: ["echo pwned > /tmp/x"].
std::string callArgumentsJson(const ObjectTree& tree, uint32_t call,
                              const std::vector<std::string>& tensorNames);

} // namespace ckptscope
