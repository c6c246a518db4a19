// ckptscope: the desktop browser. Each file named on the command line opens
// in a window of its own; without one, the start page offers samples.
#include "browser/launchselection.h"
#include "browser/mainwindow.h"
#include "browser/screenshottaker.h"
#include "compare/comparelauncher.h"
#include "compare/comparescreenshot.h"
#include "compare/comparewindow.h"
#include "graph/graphexport.h"
#include "run/runlauncher.h"
#include "run/runscreenshottaker.h"
#include "run/runwindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include "ckptscope/document/document.h"

#include <QFile>
#include <QFileInfo>
#include <csignal>

#include <cstdio>
#include <string_view>

namespace {

// Every option, described for --help and the man page generated from it.
struct Options {
    QCommandLineOption screenshot{QStringLiteral("screenshot"),
                                  QStringLiteral("Open the one file given (with --compare: "
                                                 "compare the two), wait until it is shown "
                                                 "(statistics and graph layout done), save the "
                                                 "window as a PNG image to <png> and quit."),
                                  QStringLiteral("png")};
    QCommandLineOption select{
        QStringLiteral("select"),
        QStringLiteral("Once each file has opened, select the tensor with this full name "
                       "(e.g. layers.0.attn.q.weight) and show its statistics; in a gradient "
                       "checkpoint, the graph node with this id. Works in every launch; a name "
                       "not in the file is reported on stderr."),
        QStringLiteral("name")};
    QCommandLineOption tab{QStringLiteral("tab"),
                           QStringLiteral("Once each file has opened, show the tab with this "
                                          "title (Overview, Metadata, Tensor, Values, Graph, "
                                          "Optimizer State; case-insensitive), after --select. "
                                          "Works in every launch."),
                           QStringLiteral("title")};
    QCommandLineOption size{QStringLiteral("size"),
                            QStringLiteral("Window size in pixels, WIDTHxHEIGHT (with "
                                           "--screenshot; default 1400x860)."),
                            QStringLiteral("size")};
    QCommandLineOption render{QStringLiteral("render"),
                              QStringLiteral("Draw the computation graph of the one gradient "
                                             "checkpoint given to <file> (.svg or .png) and quit; "
                                             "needs no display."),
                              QStringLiteral("file")};
    QCommandLineOption leftRight{QStringLiteral("left-right"),
                                 QStringLiteral("With --render: draw left to right."), QString()};
    QCommandLineOption compare{QStringLiteral("compare"),
                               QStringLiteral("Compare the two files given, A (the reference) "
                                              "and B, in a compare window: what changed in "
                                              "tensors, metadata, graph and optimizer state."),
                               QString()};

    void addTo(QCommandLineParser& parser) const {
        parser.setApplicationDescription(
            QStringLiteral("Browse OXCK model checkpoints and JSON gradient checkpoints."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(
            QStringLiteral("files"),
            QStringLiteral("Checkpoints to open, one window each; a folder "
                           "opens as a training run."),
            QStringLiteral("[files...]"));
        parser.addOptions({screenshot, select, tab, size, render, leftRight, compare});
    }
};

void describeApplication() {
    QCoreApplication::setOrganizationName(QStringLiteral("Ckptscope"));
    QCoreApplication::setApplicationName(QStringLiteral("Ckptscope")); // names the settings too
    QCoreApplication::setApplicationVersion(QStringLiteral(CKPTSCOPE_VERSION));
}

// --help and --version print and exit 0 without a display (over ssh, in a
// package build that makes the man page): answer them before QApplication,
// which aborts when it cannot connect to one.
void answerHelpWithoutDisplay(int argc, char** argv) {
    bool asked = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a(argv[i]);
        if (a == "--")
            break;
        asked = asked || a == "-h" || a == "--help" || a == "-?" || a == "--help-all" ||
                a == "-v" || a == "--version";
    }
    if (!asked)
        return;
    QCoreApplication core(argc, argv);
    describeApplication();
    QCommandLineParser parser;
    const Options options;
    options.addTo(parser);
    parser.process(core); // exits for --help/--version; otherwise carry on
}

} // namespace

int main(int argc, char** argv) {
    std::signal(SIGXFSZ, SIG_IGN); // over a size limit a write fails (EFBIG), no kill
    answerHelpWithoutDisplay(argc, argv);
    // Rendering needs no display: choose the offscreen platform before Qt starts.
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--render" &&
            qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    describeApplication();
    QApplication::setDesktopFileName(QStringLiteral("io.github.ckptscope.Ckptscope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/ckptscope.svg")));

    QCommandLineParser parser;
    const Options options;
    options.addTo(parser);
    const QCommandLineOption& screenshot = options.screenshot;
    const QCommandLineOption& size = options.size;
    const QCommandLineOption& render = options.render;
    const QCommandLineOption& leftRight = options.leftRight;
    const QCommandLineOption& compare = options.compare;
    parser.process(app);
    const LaunchSelection selection{parser.value(options.select), parser.value(options.tab)};

    const QStringList files = parser.positionalArguments();
    if (parser.isSet(render)) {
        if (files.size() != 1) {
            std::fputs("ckptscope: --render takes exactly one file\n", stderr);
            return 2;
        }
        try {
            const auto doc =
                ckptscope::Document::open(QFile::encodeName(files.first()).toStdString());
            if (!doc->gradient())
                throw ckptscope::OpenError(doc->path(),
                                           "not a gradient checkpoint: nothing to render");
            const QString error = renderCheckpointGraph(*doc->gradient(), parser.value(render),
                                                        parser.isSet(leftRight));
            if (!error.isEmpty()) {
                std::fprintf(stderr, "%s\n", qPrintable(error));
                return 1;
            }
            std::fprintf(stderr, "%s: written\n", qPrintable(parser.value(render)));
            return 0;
        } catch (const ckptscope::OpenError& e) {
            std::fprintf(stderr, "%s: error: %s\n", e.file().c_str(), e.detail().c_str());
            return 1;
        } catch (const std::exception& e) { // layout refusals (a graph too large)
            std::fprintf(stderr, "%s: error: %s\n", qPrintable(files.first()), e.what());
            return 1;
        }
    }
    if (parser.isSet(compare)) {
        if (files.size() != 2) {
            std::fputs("ckptscope: --compare takes two files, A and B\n", stderr);
            return 2;
        }
        if (parser.isSet(screenshot)) { // the README's compare screenshots
            auto* window = new CompareWindow;
            const QStringList wh = parser.value(size).split(QLatin1Char('x'));
            window->resize(wh.size() == 2 ? QSize(wh[0].toInt(), wh[1].toInt()) : QSize(1400, 860));
            new CompareScreenshot(window, parser.value(screenshot), selection.tab);
            window->show();
            window->compare(files[0], files[1]);
            return app.exec();
        }
        CompareLauncher::open(files[0], files[1]);
        return app.exec();
    }
    if (parser.isSet(screenshot)) {
        if (files.size() != 1) {
            std::fputs("ckptscope: --screenshot takes exactly one file\n", stderr);
            return 2;
        }
        const QStringList wh = parser.value(size).split(QLatin1Char('x'));
        const QSize shotSize =
            wh.size() == 2 ? QSize(wh[0].toInt(), wh[1].toInt()) : QSize(1400, 860);
        if (QFileInfo(files.first()).isDir()) { // a run: --select a tensor, --tab a chart tab
            auto* run = new RunWindow;
            run->resize(shotSize);
            new RunScreenshotTaker(run,
                                   {parser.value(screenshot), selection.select, selection.tab});
            run->show();
            run->openPaths({files.first()});
            return app.exec();
        }
        auto* window = new MainWindow;
        window->resize(shotSize);
        new ScreenshotTaker(window, {parser.value(screenshot), selection.select, selection.tab});
        window->show();
        window->openFile(files.first());
        return app.exec();
    }
    if (files.isEmpty()) {
        if (!selection.select.isEmpty() || !selection.tab.isEmpty())
            std::fputs("ckptscope: --select and --tab apply to the files given; none was\n",
                       stderr);
        (new MainWindow)->show();
    } else {
        for (const QString& file : files) {
            if (QFileInfo(file).isDir()) { // a training run: `ckptscope DIR`
                RunLauncher::open({file});
                continue;
            }
            auto* window = new MainWindow;
            selection.applyOnLoad(window);
            window->show();
            window->openFile(file);
        }
    }
    return app.exec();
}
