// ckptscope: the desktop browser. Each file named on the command line opens
// in a window of its own; without one, the start page offers samples.
#include "mainwindow.h"
#include "screenshottaker.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include <csignal>
#include <cstdio>

int main(int argc, char** argv) {
    std::signal(SIGXFSZ, SIG_IGN); // over a size limit a write fails (EFBIG), no kill
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
    parser.addOptions({screenshot, select, tab, size});
    parser.process(app);

    const QStringList files = parser.positionalArguments();
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
            auto* window = new MainWindow;
            window->show();
            window->openFile(file);
        }
    }
    return app.exec();
}
