#pragma once

#include "ckptscope/document.h"

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
};

// Parses FILE and the flags `allowed` names (e.g. {"--json", "--bins"}).
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
int runTimeline(const std::vector<std::string>& args);

} // namespace cli
