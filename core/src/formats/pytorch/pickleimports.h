#pragma once

#include "ckptscope/formats/formatindex.h"
#include "formats/pytorch/torchunpickler.h"

#include <string>
#include <vector>

namespace ckptscope::pytorch {

// The tier of a global by its name alone: Safe for the data globals (tensors,
// storages, dtypes, containers, NumPy arrays), Unsafe for those that run code
// or touch the system (os, subprocess, builtins.eval…), Unknown for the rest
// (a TrainingArguments class). getattr's tier depends on its use: see
// classifyImports.
ImportRisk globalTier(const std::string& name);

// Every global the unpickler met, sorted by name, with its risk: the worst
// of its uses. getattr(Class, 'NAME') whose result is never called is an enum
// member (safe); a getattr whose result is called, or of a call's result, is
// unsafe. `calls` holds the Object nodes of unsafe calls and the Call nodes
// that call their results.
std::vector<PickleImport> classifyImports(const ObjectTree& tree, const TorchUnpickler& unpickler);

// One warning per unsafe import ("unsafe import os.system called with
// ["echo pwned > /tmp/x"]"), per call of a call's result ("unsafe call of
// …'s result with […]"), and per unknown import ("unknown import NAME").
std::vector<std::string> importWarnings(const ObjectTree& tree,
                                        const std::vector<PickleImport>& imports,
                                        const std::vector<std::string>& tensorNames);

} // namespace ckptscope::pytorch
