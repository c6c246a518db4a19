// ckptscope: the desktop browser. Each file named on the command line opens
// in a window of its own; without one, the start page offers samples.
#include "graphexport.h"
#include "mainwindow.h"
#include "runwindow.h"
#include "screenshottaker.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include "ckptscope/document.h"

#include <QFile>
#include <QFileInfo>
#include <csignal>

#include <cstdio>
#include <string_view>

int main(int argc, char** argv) {
    std::signal(SIGXFSZ, SIG_IGN); // over a size limit a write fails (EFBIG), no kill
    // Rendering needs no display: choose the offscreen platform before Qt starts.
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--render" &&
            qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Ckptscope"));
    QApplication::setApplicationName(QStringLiteral("Ckptscope"));
    QApplication::setApplicationVersion(QStringLiteral(CKPTSCOPE_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("io.github.ckptscope.Ckptscope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/ckptscope.svg")));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Browse OXCK model checkpoints and JSON gradient checkpoints."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("files"), QStringLiteral("Checkpoints to open."),
                                 QStringLiteral("[files...]"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("Render the window to a PNG and quit."),
                                        QStringLiteral("png"));
    const QCommandLineOption select(QStringLiteral("select"),
                                    QStringLiteral("Select a tensor by full name."),
                                    QStringLiteral("name"));
    const QCommandLineOption tab(QStringLiteral("tab"), QStringLiteral("Show a tab by title."),
                                 QStringLiteral("title"));
    const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size, WxH."),
                                  QStringLiteral("size"));
    const QCommandLineOption render(
        QStringLiteral("render"),
        QStringLiteral("Draw the computation graph to an SVG/PNG and quit."),
        QStringLiteral("file"));
    const QCommandLineOption leftRight(QStringLiteral("left-right"),
                                       QStringLiteral("With --render: draw left to right."));
    parser.addOptions({screenshot, select, tab, size, render, leftRight});
    parser.process(app);

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
    if (parser.isSet(screenshot)) {
        if (files.size() != 1) {
            std::fputs("ckptscope: --screenshot takes exactly one file\n", stderr);
            return 2;
        }
        auto* window = new MainWindow;
        const QStringList wh = parser.value(size).split(QLatin1Char('x'));
        window->resize(wh.size() == 2 ? QSize(wh[0].toInt(), wh[1].toInt()) : QSize(1400, 860));
        new ScreenshotTaker(window,
                            {parser.value(screenshot), parser.value(select), parser.value(tab)});
        window->show();
        window->openFile(files.first());
        return app.exec();
    }
    if (files.isEmpty()) {
        (new MainWindow)->show();
    } else {
        for (const QString& file : files) {
            if (QFileInfo(file).isDir()) { // a training run: `ckptscope DIR`
                auto* run = new RunWindow;
                run->show();
                run->openPaths({file});
                continue;
            }
            auto* window = new MainWindow;
            window->show();
            window->openFile(file);
        }
    }
    return app.exec();
}
