#pragma once

#include "ckptscope/formats/formatindex.h"
#include "ckptscope/io/bytesource.h"

#include <optional>
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
// The first `shown` different ones (told apart by their text), and how many
// more calls there are (told apart by what they call and with which values:
// the same call written out again counts again). Only the shown are spelled:
// a call's text can take 64 KiB, and a 100 KB pickle can make 100 000 calls.
struct UnsafeCalls {
    std::vector<std::string> shown;
    size_t more = 0;
};
UnsafeCalls unsafeCalls(const ObjectTree& tree, const std::vector<PickleImport>& imports,
                        size_t shown);

// "safe", "unsafe", "unknown": as info --json and scan write a risk.
const char* importRiskName(ImportRisk risk);
// The arguments of calls (PickleImport::calls), each as one line of JSON
// as `objects` writes them (["echo pwned > /tmp/x"]), within one budget for
// a whole file: each call's within 10 000 nodes, all of them within about
// kBytes (the call that passes it is written whole). A pickle of 100 000
// calls that each pass one shared 64 KiB string is 100 KB and would make
// 6 GB of text. Past the budget json() gives nullopt, and the caller says
// the arguments are not written.
class CallArguments {
public:
    static constexpr uint64_t kBytes = uint64_t(16) << 20;

    CallArguments(const ObjectTree& tree, const std::vector<std::string>& tensorNames)
        : m_tree(tree), m_names(tensorNames), m_left(kBytes) {}
    // Both are kept by reference.
    CallArguments(const ObjectTree&, std::vector<std::string>&&) = delete;
    CallArguments(ObjectTree&&, const std::vector<std::string>&) = delete;
    std::optional<std::string> json(uint32_t call);
    // The text that stands for arguments not written.
    static constexpr const char* kNotWritten =
        "(arguments not written: the file's calls' arguments pass 16 MiB)";

private:
    const ObjectTree& m_tree;
    const std::vector<std::string>& m_names;
    uint64_t m_left;
};

} // namespace ckptscope
