#include "common/filelocation.h"

#include "ckptscope/common/pathlabels.h"
#include "ckptscope/io/httpsource.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QUrl>

namespace filelocation {

bool isBundled(const QString& path) {
    return path.startsWith(QStringLiteral(":/"));
}

bool isRemote(const QString& path) {
    return ckptscope::isUrl(path.toStdString());
}

QString key(const QString& path) {
    if (path.isEmpty() || isBundled(path) || isRemote(path))
        return path;
    const QFileInfo info(path);
    const QString canonical = info.canonicalFilePath();
    return canonical.isEmpty() ? info.absoluteFilePath() : canonical;
}

QString displayName(const QString& path) {
    if (!isRemote(path))
        return QFileInfo(path).fileName();
    const QUrl url(path);
    QString name = url.fileName(QUrl::FullyDecoded);
    if (name.isEmpty()) { // a folder's URL ("s3://bucket/run/"): its last segment
        const QStringList parts =
            url.path(QUrl::FullyDecoded).split(QLatin1Char('/'), Qt::SkipEmptyParts);
        name = parts.isEmpty() ? QString() : parts.last();
    }
    return name.isEmpty() ? url.host() : name;
}

QString place(const QString& path) {
    if (isRemote(path)) {
        const QUrl url(path);
        return url.scheme() + QStringLiteral("://") + url.host() +
               (url.port() > 0 ? QLatin1Char(':') + QString::number(url.port()) : QString());
    }
    const QString folder = QFileInfo(path).absolutePath();
    const QString home = QDir::homePath();
    if (folder == home)
        return QStringLiteral("~");
    return folder.startsWith(home + QLatin1Char('/')) ? QLatin1Char('~') + folder.mid(home.size())
                                                      : folder;
}

QString container(const QString& path) {
    if (!isRemote(path))
        return QFileInfo(path).absolutePath();
    const QUrl url(path);
    return url
        .adjusted(QUrl::RemoveFilename | QUrl::RemoveQuery | QUrl::RemoveFragment |
                  QUrl::RemoveUserInfo)
        .toString();
}

QStringList localFiles(const std::vector<std::string>& names) {
    QStringList files;
    for (const std::string& name : names) {
        const QString path = QString::fromStdString(name);
        if (!isBundled(path) && !isRemote(path))
            files << path;
    }
    return files;
}

std::pair<QString, QString> pairLabels(const QString& pathA, const QString& pathB) {
    const auto [a, b] = ckptscope::distinguishingPaths(QFile::encodeName(pathA).toStdString(),
                                                       QFile::encodeName(pathB).toStdString());
    return {pathA.isEmpty() ? QCoreApplication::translate("CompareWindow", "A")
                            : QFile::decodeName(a.c_str()),
            pathB.isEmpty() ? QCoreApplication::translate("CompareWindow", "B")
                            : QFile::decodeName(b.c_str())};
}

} // namespace filelocation
