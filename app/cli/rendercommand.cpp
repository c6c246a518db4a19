// `ckptscope-cli render`: the browser's drawing of a computation graph,
// without a display. The drawing code lives in the Qt GUI; linking it here
// would load ~50 Qt libraries on every CLI call (12 ms instead of 2 ms), so
// the CLI checks the file and hands over to `ckptscope --render` beside it.
#include "clicommon.h"

#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace cli {

int runRender(const std::vector<std::string>& args) {
    const Options o = parseOptions(args, {"-o", "--output", "--left-right"});
    if (o.output.empty())
        throw UsageError("render needs -o OUT.svg or -o OUT.png");
    const auto doc = openDocument(o.file);
    if (!doc->gradient())
        throw ckptscope::OpenError(o.file, "an OXCK model checkpoint has no computation graph to "
                                           "render; render takes a gradient checkpoint");
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::string gui = (self.parent_path() / "ckptscope").string();
    if (ec || ::access(gui.c_str(), X_OK) != 0) {
        std::cerr << "ckptscope-cli: error: render needs the ckptscope browser installed beside "
                     "ckptscope-cli (looked for "
                  << gui << ")\n";
        return kInvalidFile;
    }
    std::vector<std::string> argvStrings = {gui, "--render", o.output};
    if (o.leftRight)
        argvStrings.push_back("--left-right");
    argvStrings.push_back(o.file);
    std::vector<char*> argv;
    for (auto& s : argvStrings)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    std::cout.flush();
    ::execv(gui.c_str(), argv.data());
    std::cerr << "ckptscope-cli: error: cannot run " << gui << "\n";
    return kInvalidFile;
}

} // namespace cli
