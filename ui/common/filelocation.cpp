#include "common/filelocation.h"

#include "ckptscope/common/pathlabels.h"
#include "ckptscope/io/httpsource.h"

#include <QCoreApplication>
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
    const QString name = url.fileName(QUrl::FullyDecoded);
    return name.isEmpty() ? url.host() : name;
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
