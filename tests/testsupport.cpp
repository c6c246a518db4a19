#include "testsupport.h"

#include <QDir>
#include <QFile>
#include <QTest>

namespace testsupport {

QString conformanceDir() {
    const QString dir = QStringLiteral(CKPTSCOPE_CONFORMANCE_DIR);
    return QDir(dir + QStringLiteral("/valid")).exists() ? dir : QString();
}

std::string readFile(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    const QByteArray bytes = f.readAll();
    return std::string(bytes.constData(), size_t(bytes.size()));
}

void writeFile(const QString& path, const std::string& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        qFatal("cannot write %s", qPrintable(path));
    f.write(bytes.data(), qint64(bytes.size()));
}

} // namespace testsupport
