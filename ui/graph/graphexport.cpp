#include "graph/graphexport.h"

#include "graph/graphindex.h"
#include "graph/graphscene.h"

#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScopeGuard>
#include <QSvgGenerator>

#include <algorithm>

QString exportScene(QGraphicsScene* scene, const QString& path) {
    // Every node drawn, none thinned away where several share a pixel.
    GraphCanvas* canvas =
        qobject_cast<GraphScene*>(scene) ? static_cast<GraphScene*>(scene)->canvas() : nullptr;
    if (canvas)
        canvas->setDrawEveryNode(true);
    const auto restore = qScopeGuard([canvas] {
        if (canvas)
            canvas->setDrawEveryNode(false);
    });
    const QRectF source = scene->itemsBoundingRect().adjusted(-20, -20, 20, 20);
    QSaveFile file(path); // temporary + rename: the old file survives a failure
    if (!file.open(QIODevice::WriteOnly))
        return QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QStringLiteral("svg")) {
        QSvgGenerator svg;
        svg.setOutputDevice(&file);
        svg.setSize(source.size().toSize());
        svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
        svg.setTitle(QStringLiteral("Computation graph"));
        svg.setDescription(QStringLiteral("Drawn by Ckptscope"));
        QPainter painter(&svg);
        painter.setRenderHint(QPainter::Antialiasing);
        scene->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
    } else if (suffix == QStringLiteral("png")) {
        // Cap the bitmap: a 100k-node graph at 1:1 would need gigabytes.
        const double scale = std::min({2.0, 16000.0 / source.width(), 16000.0 / source.height()});
        QImage image((source.size() * scale).toSize().expandedTo(QSize(1, 1)),
                     QImage::Format_ARGB32);
        image.fill(Qt::white);
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        scene->render(&painter, QRectF(QPointF(0, 0), image.size()), source);
        painter.end();
        if (!image.save(&file, "PNG"))
            return QStringLiteral("%1: could not encode the PNG").arg(path);
    } else {
        file.cancelWriting();
        return QStringLiteral("%1: unknown image type; use .svg or .png").arg(path);
    }
    if (!file.commit())
        return QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
    return {};
}

QString exportPath(const QString& path, const QString& selectedFilter) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QStringLiteral("svg") || suffix == QStringLiteral("png"))
        return path;
    static const QRegularExpression pattern(QStringLiteral("\\*\\.(\\w+)"));
    const QRegularExpressionMatch m = pattern.match(selectedFilter);
    return m.hasMatch() ? path + QLatin1Char('.') + m.captured(1).toLower() : path;
}

QString renderCheckpointGraph(const ckptscope::GradientCheckpoint& checkpoint, const QString& path,
                              bool leftToRight) {
    auto input = GraphScene::layoutInput(checkpoint.graph);
    if (leftToRight)
        std::swap(input.input.widths, input.input.heights);
    auto index = std::make_shared<const GraphIndex>(input, &checkpoint.graph);
    auto layout =
        std::make_shared<const ckptscope::GraphLayout>(ckptscope::layoutGraph(input.input));
    // Non-owning: the checkpoint outlives the scene in this function.
    std::shared_ptr<const ckptscope::GradientCheckpoint> ref(&checkpoint, [](auto*) {});
    GraphScene scene;
    scene.build(ref, index, layout,
                leftToRight ? GraphScene::Orientation::LeftRight
                            : GraphScene::Orientation::TopDown);
    return exportScene(&scene, path);
}
