#include "common/documentsummary.h"

#include "common/sizeformat.h"

#include "ckptscope/common/numberformat.h"
#include "ckptscope/document/document.h"
#include "ckptscope/formats/gradient/gradientcheckpoint.h"

#include <QCoreApplication>

QString countNoun(uint64_t n, const QString& singular, const QString& plural) {
    return QString::fromStdString(
        ckptscope::fmt::counted(n, singular.toStdString(), plural.toStdString()));
}

QString documentSummary(const ckptscope::Document& doc, const QString& fileName) {
    const auto tr = [](const char* s) { return QCoreApplication::translate("DocumentSummary", s); };
    if (const ckptscope::GradientCheckpoint* g = doc.gradient())
        return tr("%1: gradient checkpoint, step %2, %3")
            .arg(fileName, groupedNumber(g->step),
                 countNoun(g->graph.nodeCount(), tr("node"), tr("nodes")));
    return tr("%1: %2, %3")
        .arg(fileName, QString::fromUtf8(doc.formatModule().description),
             countNoun(doc.tensors().size(), tr("tensor"), tr("tensors")));
}
