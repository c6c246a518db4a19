// `ckptscope-cli render`: the browser's drawing of a computation graph,
// without a display. The drawing code lives in the Qt GUI; linking it here
// would load ~50 Qt libraries on every CLI call (12 ms instead of 2 ms), so
// the CLI checks the file and hands over to `ckptscope --render` beside it.
#include "clicommon.h"

#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace cli {

namespace {

const CommandSpec kRender = {
    "render",
    {"FILE"},
    "Draws a gradient checkpoint's computation graph as the browser does,\n"
    "without a display, into an SVG or PNG file (needs the ckptscope browser\n"
    "installed beside ckptscope-cli).\n",
    {outputOption("the picture: OUT.svg or OUT.png"),
     {"--left-right", "", "ranks from left to right (default: top to bottom)"}},
    {},
    "FILE -o OUT.svg|OUT.png [--left-right]",
    kFileExitStatus,
};

} // namespace

int runRender(const std::vector<std::string>& args) {
    const auto p = parseCommand(kRender, args);
    if (!p)
        return kOk;
    const std::string file = p->operands()[0], output = p->value("--output");
    if (output.empty())
        throw UsageError("render needs -o OUT.svg or -o OUT.png");
    const auto doc = openDocument(file);
    requireGradient(*doc, "render");
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::string gui = (self.parent_path() / "ckptscope").string();
    if (ec || ::access(gui.c_str(), X_OK) != 0) {
        std::cerr << "ckptscope-cli: error: render needs the ckptscope browser installed beside "
                     "ckptscope-cli (looked for "
                  << gui << ")\n";
        return kInvalidFile;
    }
    std::vector<std::string> argvStrings = {gui, "--render", output};
    if (p->has("--left-right"))
        argvStrings.push_back("--left-right");
    argvStrings.push_back(file);
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
