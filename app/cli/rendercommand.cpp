// `ckptscope-cli render`: the GUI's drawing of a computation graph, made
// without a display on Qt's offscreen platform. Built only with the GUI.
#include "clicommon.h"

#include "graphexport.h"

#include <QApplication>

#include <cstdlib>
#include <iostream>

namespace cli {

int runRender(const std::vector<std::string>& args) {
    Options o = parseOptions(args, {"-o", "--output", "--left-right"});
    if (o.output.empty())
        throw UsageError("render needs -o OUT.svg or -o OUT.png");
    const auto doc = openDocument(o.file);
    if (!doc->gradient())
        throw ckptscope::OpenError(o.file, "an OXCK model checkpoint has no computation graph to "
                                           "render; render takes a gradient checkpoint");
    // No display needed: draw with the offscreen platform unless told otherwise.
    if (!std::getenv("QT_QPA_PLATFORM"))
        ::setenv("QT_QPA_PLATFORM", "offscreen", 1);
    int argc = 1;
    char name[] = "ckptscope-cli";
    char* argv[] = {name, nullptr};
    QApplication app(argc, argv);
    const QString error =
        renderCheckpointGraph(*doc->gradient(), QString::fromStdString(o.output), o.leftRight);
    if (!error.isEmpty()) {
        std::cerr << o.output << ": error: " << error.toStdString() << "\n";
        return kInvalidFile;
    }
    std::cerr << o.output << ": written\n";
    return kOk;
}

} // namespace cli
