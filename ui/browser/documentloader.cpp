#include "browser/documentloader.h"

#include "ckptscope/io/bytesource.h"
#include "ckptscope/io/folderlisting.h"
#include "ckptscope/io/httpsource.h"

#include <QFile>

using ckptscope::Document;

DocumentLoader::DocumentLoader(QObject* parent) : QObject(parent) {}

std::shared_ptr<const Document> DocumentLoader::open(const QString& path) {
    if (path.startsWith(QStringLiteral(":/"))) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            throw ckptscope::OpenError(path.toStdString(), "cannot open the bundled sample");
        const QByteArray bytes = f.readAll();
        auto source = std::make_shared<ckptscope::MemorySource>(
            std::vector<uint8_t>(bytes.begin(), bytes.end()), path.toStdString());
        return Document::open(std::move(source));
    }
    return Document::open(QFile::encodeName(path).toStdString());
}

void DocumentLoader::load(const QString& path) {
    m_task.start(
        [this, path](BackgroundTask::Run& run) {
            // Files by URL (a model's index and its shards) report their
            // traffic and stop on Cancel.
            ckptscope::HttpTask http(run.cancelFlag(), [this, &run, path](const auto& t) {
                run.post([this, path, t] { Q_EMIT traffic(path, t.requests, t.bytes); });
            });
            // A prefix is listed here, off the GUI thread, and once.
            const ckptscope::ListingScope listings;
            const std::string name = QFile::encodeName(path).toStdString();
            if (ckptscope::isS3Url(name) && Document::isRunFolder(name)) {
                run.finish([this, path] { Q_EMIT runFolder(path); });
                return;
            }
            std::shared_ptr<const Document> document = open(path);
            run.finish([this, path, document] { Q_EMIT loaded(path, document); });
        },
        {{}, [this, path](const QString& message) { Q_EMIT failed(path, message); }});
}
