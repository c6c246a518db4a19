#include "clicommon.h"

#include <algorithm>
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

Options parseOptions(const std::vector<std::string>& args,
                     const std::vector<std::string>& allowed) {
    Options o;
    auto isAllowed = [&](const std::string& a) {
        return std::find(allowed.begin(), allowed.end(), a) != allowed.end();
    };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size())
                throw UsageError(a + " needs a value");
            return args[++i];
        };
        if (a.size() > 1 && a[0] == '-' && !isAllowed(a))
            throw UsageError("unknown option " + a);
        if (a == "--json") {
            o.json = true;
        } else if (a == "--csv") {
            o.csv = true;
        } else if (a == "--format") {
            o.format = value();
        } else if (a == "--dot") {
            o.dot = true;
        } else if (a == "--left-right") {
            o.leftRight = true;
        } else if (a == "--bins") {
            o.bins = parseBins(value());
        } else if (a == "--tensor") {
            o.tensors.push_back(value());
        } else if (a == "-o" || a == "--output") {
            o.output = value();
        } else if (o.file.empty()) {
            o.file = a;
        } else if (o.output.empty() && isAllowed("OUT")) {
            o.output = a;
        } else {
            throw UsageError("unexpected argument '" + a + "'");
        }
    }
    if (o.file.empty())
        throw UsageError("missing FILE");
    return o;
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

} // namespace cli
