#pragma once

#include <QString>
#include <QStringList>

#include <string>
#include <utility>
#include <vector>

// Where an opened file lives: a local path, a bundled sample (":/…") or an
// http(s) URL. Front ends ask here instead of QFileInfo, which would turn a
// URL into a path under the current folder.
namespace filelocation {

bool isBundled(const QString& path);
bool isRemote(const QString& path); // http://, https:// or s3://

// One spelling per file, for "is it open already?" and the recent list:
// symbolic links and "." resolved for local files, URLs as given.
QString key(const QString& path);

// The file's name to show: the last path segment, for a URL without its
// query (a presigned URL's signature is no name).
QString displayName(const QString& path);

// The folder, or a URL's scheme and host, shown beside the name.
QString container(const QString& path);

// Where a file is, short, for a list of files from anywhere (Open Recent):
// a URL's scheme and host ("https://huggingface.co", "s3://bucket"), a
// local file's folder with the home folder as "~".
QString place(const QString& path);

// The local files among `names` (a document's sourceNames()), to watch
// for a writer: bundled samples and URLs left out.
QStringList localFiles(const std::vector<std::string>& names);

// {label of A, label of B}: the shortest parts of the two paths that differ,
// so two model.safetensors are told apart; "A" / "B" for a side not chosen.
std::pair<QString, QString> pairLabels(const QString& pathA, const QString& pathB);

} // namespace filelocation
