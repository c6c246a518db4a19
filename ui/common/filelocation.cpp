#include "common/filelocation.h"

#include "ckptscope/io/httpsource.h"

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

} // namespace filelocation
