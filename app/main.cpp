// ckptscope: the desktop browser. Each file named on the command line opens
// in a window of its own; without one, the start page offers samples.
#include "browser/recentfiles.h"
#include "common/windowregistry.h"
#include "graph/graphexport.h"
#include "launch/runlauncher.h"
#include "shell/comparescreenshot.h"
#include "shell/launchselection.h"
#include "shell/runscreenshottaker.h"
#include "shell/screenshottaker.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/formatlist.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QFileInfo>
#include <QIcon>
#include <QSize>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <unistd.h>

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
        QStringLiteral("Once each file has opened (with --compare: once the comparison is "
                       "shown), select the tensor with this full name (e.g. "
                       "layers.0.attn.q.weight) and show its statistics; in a gradient "
                       "checkpoint, the graph node with this id. Works in every launch; a name "
                       "not in the file is reported on stderr."),
        QStringLiteral("name")};
    QCommandLineOption tab{QStringLiteral("tab"),
                           QStringLiteral("Once each file has opened, show the tab with this "
                                          "title (Overview, Metadata, Tensor, Values, Graph, "
                                          "Optimizer State; with --compare: Tensor, Values, "
                                          "Metadata, Graph, Fields, Optimizer state; "
                                          "case-insensitive), after --select. Works in every "
                                          "launch."),
                           QStringLiteral("title")};
    QCommandLineOption statistic{
        QStringLiteral("statistic"),
        QStringLiteral("With --screenshot of a run: the Layer profile's statistic (L2 norm, "
                       "std, max |x|, mean, relative change of L2 norm, update / weight, "
                       "√v RMS; case-insensitive)."),
        QStringLiteral("name")};
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
            QStringLiteral("Browse %1 (the format detected from the content).")
                .arg(QString::fromStdString(ckptscope::readableFormatsText())));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(
            QStringLiteral("files"),
            QStringLiteral("Checkpoints to open, one window each; a folder "
                           "opens as a training run."),
            QStringLiteral("[files...]"));
        parser.addOptions({screenshot, select, tab, statistic, size, render, leftRight, compare});
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

// Rendering needs no display: choose the offscreen platform before Qt starts.
// Where no session set XDG_RUNTIME_DIR (a CI job, ssh, cron), a private one
// (0700, removed at exit) spares `ckptscope-cli render` Qt's notice about it.
void renderOffscreenIfAsked(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) != "--render")
            continue;
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
            static char dir[] = "/tmp/ckptscope-runtime-XXXXXX";
            if (::mkdtemp(dir)) {
                qputenv("XDG_RUNTIME_DIR", dir);
                std::atexit([] { ::rmdir(dir); });
            }
        }
    }
}

// What the command line asks for, once parsed.
struct Launch {
    QStringList files;
    LaunchSelection selection;
    bool compare = false;
    bool screenshot = false;
    QString screenshotPath;
    QString statistic;
    QSize size;
    bool render = false;
    QString renderPath;
    bool leftRight = false;

    Launch(const QCommandLineParser& parser, const Options& options)
        : files(parser.positionalArguments()), selection{parser.value(options.select),
                                                         parser.value(options.tab)},
          compare(parser.isSet(options.compare)), screenshot(parser.isSet(options.screenshot)),
          screenshotPath(parser.value(options.screenshot)),
          statistic(parser.value(options.statistic)), render(parser.isSet(options.render)),
          renderPath(parser.value(options.render)), leftRight(parser.isSet(options.leftRight)) {
        const QStringList wh = parser.value(options.size).split(QLatin1Char('x'));
        size = wh.size() == 2 ? QSize(wh[0].toInt(), wh[1].toInt()) : QSize(1400, 860);
    }
};

// --render: the graph of one gradient checkpoint to an SVG or PNG file.
int renderGraph(const Launch& launch) {
    if (launch.files.size() != 1) {
        std::fputs("ckptscope: --render takes exactly one file\n", stderr);
        return 2;
    }
    try {
        const auto doc =
            ckptscope::Document::open(QFile::encodeName(launch.files.first()).toStdString());
        if (!doc->gradient())
            throw ckptscope::OpenError(doc->path(), "not a gradient checkpoint: nothing to render");
        const QString error =
            renderCheckpointGraph(*doc->gradient(), launch.renderPath, launch.leftRight);
        if (!error.isEmpty()) {
            std::fprintf(stderr, "%s\n", qPrintable(error));
            return 1;
        }
        std::fprintf(stderr, "%s: written\n", qPrintable(launch.renderPath));
        return 0;
    } catch (const ckptscope::OpenError& e) {
        std::fprintf(stderr, "%s: error: %s\n", e.file().c_str(), e.detail().c_str());
        return 1;
    } catch (const std::exception& e) { // layout refusals (a graph too large)
        std::fprintf(stderr, "%s: error: %s\n", qPrintable(launch.files.first()), e.what());
        return 1;
    }
}

// --compare A B (--select a tensor, --tab a tab), with --screenshot the
// README's compare pictures.
std::optional<int> openComparison(const Launch& launch) {
    if (launch.files.size() != 2) {
        std::fputs("ckptscope: --compare takes two files, A and B\n", stderr);
        return 2;
    }
    WindowRegistry::instance().openComparison(
        launch.files[0], launch.files[1], [&launch](CompareWindow* w) {
            launch.selection.applyOnLoad(w); // before the screenshot takes the window as shown
            if (launch.screenshot)
                new CompareScreenshot(w, launch.screenshotPath, launch.size);
        });
    return std::nullopt;
}

// --screenshot of one file, or of a run (--select a tensor, --tab a chart tab).
std::optional<int> openScreenshot(const Launch& launch) {
    if (launch.files.size() != 1) {
        std::fputs("ckptscope: --screenshot takes exactly one file\n", stderr);
        return 2;
    }
    const QString& file = launch.files.first();
    const LaunchSelection& s = launch.selection;
    if (RunLauncher::isRunFolder(file))
        WindowRegistry::instance().openRun({file}, [&](RunWindow* w) {
            new RunScreenshotTaker(
                w, {launch.screenshotPath, s.select, s.tab, launch.statistic, launch.size});
        });
    else
        WindowRegistry::instance().openFile(file, [&](MainWindow* w) {
            new ScreenshotTaker(w, {launch.screenshotPath, s.select, s.tab, launch.size});
        });
    return std::nullopt;
}

// Each file in a window of its own, a folder as a training run; without
// one, the start page.
void openFiles(const Launch& launch) {
    WindowRegistry& registry = WindowRegistry::instance();
    const LaunchSelection& selection = launch.selection;
    if (launch.files.isEmpty()) {
        if (!selection.select.isEmpty() || !selection.tab.isEmpty())
            std::fputs("ckptscope: --select and --tab apply to the files given; none was\n",
                       stderr);
        registry.newWindow();
        return;
    }
    for (const QString& file : launch.files)
        if (RunLauncher::isRunFolder(file)) // a training run: `ckptscope DIR`
            registry.openRun({file});
        else
            registry.openFile(file, [&selection](MainWindow* w) { selection.applyOnLoad(w); });
}

// The windows the command line asks for; an exit status when it asks wrongly.
std::optional<int> openWindows(const Launch& launch) {
    if (launch.screenshot)
        RecentFiles::setRecording(false); // what a screenshot opens is not the user's
    if (launch.compare)
        return openComparison(launch);
    if (launch.screenshot)
        return openScreenshot(launch);
    openFiles(launch);
    return std::nullopt;
}

} // namespace

int main(int argc, char** argv) {
    std::signal(SIGXFSZ, SIG_IGN); // over a size limit a write fails (EFBIG), no kill
    answerHelpWithoutDisplay(argc, argv);
    renderOffscreenIfAsked(argc, argv);
    QApplication app(argc, argv);
    describeApplication();
    QApplication::setDesktopFileName(QStringLiteral("io.github.ckptscope.Ckptscope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/ckptscope.svg")));

    QCommandLineParser parser;
    const Options options;
    options.addTo(parser);
    parser.process(app);
    const Launch launch(parser, options);
    if (launch.render)
        return renderGraph(launch);
    if (const std::optional<int> refused = openWindows(launch))
        return *refused;
    return app.exec();
}
