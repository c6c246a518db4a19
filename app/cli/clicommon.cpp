#include "clicommon.h"

#include "ckptscope/io/httpsource.h"

#include <charconv>
#include <filesystem>
#include <iostream>

namespace cli {

int parseBins(const std::string& v) {
    int n = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || p != v.data() + v.size() || n < 1 || n > 100000)
        throw UsageError("--bins takes a number from 1 to 100000, not '" + v + "'");
    return n;
}

uint64_t parseSize(const std::string& flag, const std::string& text) {
    uint64_t n = 0;
    const char* end = text.data() + text.size();
    const auto [p, ec] = std::from_chars(text.data(), end, n);
    if (ec != std::errc() || p == text.data())
        throw UsageError(flag + " takes a number, not '" + text + "'");
    static const std::pair<const char*, uint64_t> kUnits[] = {
        {"K", 1ull << 10},   {"KiB", 1ull << 10}, {"M", 1ull << 20},
        {"MiB", 1ull << 20}, {"G", 1ull << 30},   {"GiB", 1ull << 30},
        {"KB", 1'000},       {"MB", 1'000'000},   {"GB", 1'000'000'000}};
    uint64_t unit = p == end ? 1 : 0;
    for (const auto& [suffix, value] : kUnits)
        if (p != end && std::string(p, end) == suffix)
            unit = value;
    if (unit == 0)
        throw UsageError(flag + ": unknown unit '" + std::string(p, end) +
                         "' (K, M, G or KiB, MiB, GiB: powers of 1024; KB, MB, GB: of 1000)");
    if (n > UINT64_MAX / unit)
        throw UsageError(flag + " is too large");
    return n * unit;
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

void printWarnings(const ckptscope::Document& doc, const std::string& path) {
    for (const auto& w : doc.warnings())
        std::cerr << path << ": warning: " << w.message << "\n";
}

void keepUntilExit(std::shared_ptr<const ckptscope::Document> doc) {
    // A file read by URL closes as usual: its source's destructor is what
    // waits for reads ahead still under way.
    if (dynamic_cast<const ckptscope::HttpSource*>(&doc->source()))
        return;
    static auto* kept = new std::vector<std::shared_ptr<const ckptscope::Document>>;
    kept->push_back(std::move(doc));
}

std::shared_ptr<const ckptscope::Document> openDocument(const std::string& path) {
    auto doc = ckptscope::Document::open(path);
    printWarnings(*doc, path);
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

std::string errorLine(const std::string& message) {
    const size_t colon = message.find(": ");
    if (colon != std::string::npos && colon > 0) {
        const std::string file = message.substr(0, colon);
        // A URL, a file, or a file being written into a folder that exists
        // (no sentence: a path here has no blank).
        const std::filesystem::path path(file);
        std::error_code ec;
        const bool isFile =
            ckptscope::isUrl(file) || std::filesystem::is_regular_file(path, ec) ||
            (file.find_first_of(" \t'\"") == std::string::npos &&
             std::filesystem::is_directory(path.has_parent_path() ? path.parent_path() : ".", ec));
        if (isFile)
            return file + ": error: " + message.substr(colon + 2);
    }
    return "ckptscope-cli: error: " + message;
}

} // namespace cli
