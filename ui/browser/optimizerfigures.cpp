#include "browser/optimizerfigures.h"

#include "ckptscope/formats/openerror.h"
#include "ckptscope/optimizer/optimizercheckpoint.h"

#include <QFile>

using namespace ckptscope;

struct OptimizerFigures::Result {
    OptimizerCheckpoint checkpoint;
    std::vector<ParameterUpdate> updates;
    std::vector<std::optional<size_t>> parameterOf; // per tensor of the document
};

OptimizerFigures::OptimizerFigures(QObject* parent) : QObject(parent) {}

void OptimizerFigures::setDocument(std::shared_ptr<const Document> doc) {
    m_result.reset();
    m_document = doc;
    m_computing = doc && doc->hasTensors();
    if (!m_computing) {
        m_task.cancel();
        return;
    }
    m_task.start(
        [doc](BackgroundTask::Run& run) -> std::shared_ptr<const Result> {
            std::optional<OptimizerCheckpoint> cp = optimizerCheckpointFor(doc);
            if (!cp || cp->parameters.empty())
                return {};
            auto r = std::make_shared<Result>();
            r->updates = computeParameterUpdates(*cp, TaskControl(run.cancelFlag()));
            r->parameterOf = parameterOfTensors(*cp, *doc);
            r->checkpoint = std::move(*cp);
            return r;
        },
        [this](std::shared_ptr<const Result> r) {
            m_computing = false;
            m_result = std::move(r);
            if (m_result)
                Q_EMIT ready();
        },
        {{}, [this](const QString& message) {
             m_computing = false;
             Q_EMIT failed(message);
         }});
}

std::optional<OptimizerFigures::Figure> OptimizerFigures::forTensor(int index) const {
    if (!m_result || index < 0 || size_t(index) >= m_result->parameterOf.size() ||
        !m_result->parameterOf[size_t(index)])
        return std::nullopt;
    const size_t k = *m_result->parameterOf[size_t(index)];
    const OptimizerCheckpoint& cp = m_result->checkpoint;
    Figure f{m_result->updates[k], QFile::decodeName(cp.optimizer->path().c_str()), {}};
    for (size_t t : cp.parameters[k].stateTensors)
        if (cp.optimizer->tensors()[t].dataLen > 1) // the moments, not the step
            f.stateTensors << QString::fromStdString(cp.optimizer->tensors()[t].name);
    return f;
}
