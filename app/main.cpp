// ckptscope: the desktop browser. Each file named on the command line opens
// in a window of its own; without one, the start page offers samples.
#include "mainwindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

int main(int argc, char** argv) {
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
    parser.process(app);

    const QStringList files = parser.positionalArguments();
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
