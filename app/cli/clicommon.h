#pragma once

#include "ckptscope/document/document.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace cli {

enum ExitCode { kOk = 0, kInvalidFile = 1, kUsage = 2 };

// A mistake on the command line: exit 2 with the message and a hint.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Parsed options of one subcommand: the positional file and its flags.
struct Options {
    std::string file;
    bool json = false;
    int bins = 32;
    std::vector<std::string> tensors;
    std::string output;
    bool dot = false;
    bool leftRight = false;
    std::string format; // --format (export)
    bool csv = false;   // --csv (stats)
};

// The value of --bins: 1 to 100000, else UsageError.
int parseBins(const std::string& value);

// Parses FILE and the flags `allowed` names (e.g. {"--json", "--bins"}).
// With "OUT" allowed, a second positional argument is the output (convert).
Options parseOptions(const std::vector<std::string>& args, const std::vector<std::string>& allowed);

// Opens the file and prints each warning as "FILE: warning: …" on stderr.
// Throws ckptscope::OpenError.
std::shared_ptr<const ckptscope::Document> openDocument(const std::string& path);

int runInfo(const std::vector<std::string>& args);
int runStats(const std::vector<std::string>& args);
int runGenerate(const std::vector<std::string>& args);
int runLayout(const std::vector<std::string>& args);
int runGraph(const std::vector<std::string>& args);
int runRender(const std::vector<std::string>& args);
int runExport(const std::vector<std::string>& args);
int runConvert(const std::vector<std::string>& args);
// Exit 0 no differences, 1 differences, 2 trouble (not the codes above).
int runDiff(const std::vector<std::string>& args);
int runTimeline(const std::vector<std::string>& args);

} // namespace cli
