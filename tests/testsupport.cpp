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

void putU32(std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i)
        out += char(v >> (8 * i));
}

void putU64(std::string& out, uint64_t v) {
    for (int i = 0; i < 8; ++i)
        out += char(v >> (8 * i));
}

} // namespace testsupport
