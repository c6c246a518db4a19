#include "clicommon.h"

#include <charconv>
#include <iostream>

namespace cli {

int parseBins(const std::string& v) {
    int n = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || p != v.data() + v.size() || n < 1 || n > 100000)
        throw UsageError("--bins takes a number from 1 to 100000, not '" + v + "'");
    return n;
}

OptionSpec jsonOption(std::string help) {
    return {"--json", "", std::move(help)};
}

OptionSpec binsOption(std::string help) {
    return {"--bins", "N", std::move(help), false, "", [](const std::string& v) { parseBins(v); }};
}

OptionSpec tensorOption(std::string help) {
    return {"--tensor", "NAME", std::move(help), true};
}

OptionSpec outputOption(std::string help) {
    return {"--output", "OUT", std::move(help), false, "-o"};
}

const char* const kFileExitStatus =
    "Exit status: 0 success, 1 the file is invalid or unreadable (message on\n"
    "stderr as \"FILE: error: ...\"), 2 usage error.\n";

std::optional<ParsedArgs> parseCommand(const CommandSpec& spec,
                                       const std::vector<std::string>& args) {
    ParsedArgs parsed = parseArgs(spec, args);
    if (!parsed.help())
        return parsed;
    std::cout << commandHelp(spec);
    return std::nullopt;
}

std::shared_ptr<const ckptscope::Document> openDocument(const std::string& path) {
    auto doc = ckptscope::Document::open(path);
    for (const auto& w : doc->warnings())
        std::cerr << path << ": warning: " << w.message << "\n";
    // Freed by the exit, not node by node: tearing down a 10 000-node graph
    // took a tenth of `info --json`'s time. (Reachable from a static, so
    // LeakSanitizer does not report it.)
    static auto* const keep = new std::vector<std::shared_ptr<const ckptscope::Document>>;
    keep->push_back(doc);
    return doc;
}

const ckptscope::GradientCheckpoint& requireGradient(const ckptscope::Document& doc,
                                                     const std::string& command) {
    if (!doc.gradient())
        throw ckptscope::OpenError(doc.path(), std::string("not a gradient checkpoint: this ") +
                                                   doc.formatModule().description +
                                                   " has no computation graph; " + command +
                                                   " takes a gradient checkpoint");
    return *doc.gradient();
}

} // namespace cli
