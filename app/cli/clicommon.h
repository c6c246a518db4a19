#pragma once

#include "optionparser.h"

#include "ckptscope/document/document.h"

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cli {

enum ExitCode { kOk = 0, kInvalidFile = 1, kUsage = 2 };

// A mistake on the command line: exit 2 with the message and a hint.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The value of --bins: 1 to 100000, else UsageError.
int parseBins(const std::string& value);

// "64M", "1G", "4096" → bytes: K, M, G (and KiB…) in powers of 1024, KB,
// MB, GB in powers of 1000 (as Hugging Face's "5GB"); else UsageError.
uint64_t parseSize(const std::string& flag, const std::string& text);

// Options several commands share.
OptionSpec jsonOption(std::string help = "machine-readable output on stdout");
OptionSpec binsOption(std::string help);   // --bins N, checked by parseBins
OptionSpec tensorOption(std::string help); // --tensor NAME, repeatable
OptionSpec outputOption(std::string help); // -o, --output OUT

// "Exit status: ..." of the commands that read one file.
extern const char* const kFileExitStatus;

// Parses args by the command's spec; on -h/--help prints the command's help
// and returns nothing (the command then exits 0).
std::optional<ParsedArgs> parseCommand(const CommandSpec& spec,
                                       const std::vector<std::string>& args);

// Each of the document's warnings as "PATH: warning: …" on stderr.
void printWarnings(const ckptscope::Document& doc, const std::string& path);

// Opens the file and prints each warning as "FILE: warning: …" on stderr.
// Throws ckptscope::OpenError.
std::shared_ptr<const ckptscope::Document> openDocument(const std::string& path);
// Keeps the document alive until the process ends, when the system takes its
// memory back at once: freeing a large index node by node (an optimizer's
// 200 000 tensors: millions of small blocks) costs a tenth of a second of a
// command that has already written its answer. Still reachable, so no leak
// checker reports it. A document read by URL is closed as usual.
void keepUntilExit(std::shared_ptr<const ckptscope::Document> doc);

// The line for an error met after opening (reading values): "FILE: error:
// DETAIL" when the message begins with the file or URL it is about, as every
// other file's error reads; "ckptscope-cli: error: MESSAGE" otherwise.
std::string errorLine(const std::string& message);

// The file's computation graph, for the commands that draw one; any other
// format is an OpenError naming it ("this safetensors file has no
// computation graph; layout takes a gradient checkpoint").
const ckptscope::GradientCheckpoint& requireGradient(const ckptscope::Document& doc,
                                                     const std::string& command);

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
int runScan(const std::vector<std::string>& args);

} // namespace cli
