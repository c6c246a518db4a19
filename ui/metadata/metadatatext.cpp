#include "metadata/metadatatext.h"

#include <QDateTime>

#include <cstdlib>

QString timestampText(qint64 unixSeconds) {
    // Years 1..9999 only: beyond them the date text would not read back.
    constexpr qint64 kFirst = -62135596800LL, kLast = 253402300799LL;
    const QString raw = QString::number(unixSeconds);
    if (unixSeconds < kFirst || unixSeconds > kLast)
        return raw;
    const QDateTime local = QDateTime::fromSecsSinceEpoch(unixSeconds);
    const int offset = local.offsetFromUtc();
    const int minutes = std::abs(offset) / 60;
    return QStringLiteral("%1 %2%3:%4 (%5)")
        .arg(local.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")))
        .arg(offset < 0 ? QLatin1Char('-') : QLatin1Char('+'))
        .arg(minutes / 60, 2, 10, QLatin1Char('0'))
        .arg(minutes % 60, 2, 10, QLatin1Char('0'))
        .arg(raw);
}

QString metadataValueText(const ckptscope::MetadataRow& row) {
    const QString value = QString::fromStdString(row.value);
    if (row.kind == ckptscope::MetadataKind::Timestamp) {
        bool ok = false;
        const qint64 secs = value.toLongLong(&ok);
        if (ok)
            return timestampText(secs);
    }
    return value;
}
