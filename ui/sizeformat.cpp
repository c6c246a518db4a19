#include "sizeformat.h"

#include <QLocale>

QString humanBytes(uint64_t bytes) {
    if (bytes < 1024)
        return QStringLiteral("%1 B").arg(bytes);
    static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = double(bytes) / 1024;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        ++u;
    }
    return QStringLiteral("%1 %2").arg(v, 0, 'f', 1).arg(QLatin1String(units[u]));
}

QString groupedNumber(uint64_t n) {
    return QLocale::system().toString(qulonglong(n));
}

QString shapeText(const std::vector<uint64_t>& shape) {
    QStringList parts;
    for (uint64_t d : shape)
        parts << QString::number(d);
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

QString numberText(std::optional<double> v) {
    if (!v)
        return QStringLiteral("–");
    return QString::number(*v, 'g', 7);
}
