#pragma once

#include "common/backgroundtask.h"

#include "ckptscope/optimizer/parameterupdate.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

// The optimizer figures of an open document's tensors: the state that goes
// with it (its own, the optimizer.pt beside a Trainer folder's model, the
// model beside an optimizer.pt) is found and every parameter's last update
// computed off the GUI thread once the document is shown; ready() then
// lets the Tensor page show a parameter's figures.
class OptimizerFigures : public QObject {
    Q_OBJECT
public:
    explicit OptimizerFigures(QObject* parent = nullptr);

    // Forgets the last document's figures and computes this one's; null
    // (or a document without tensors) computes nothing.
    void setDocument(std::shared_ptr<const ckptscope::Document> doc);

    struct Figure {
        ckptscope::ParameterUpdate update;
        QString optimizerFile;    // the file holding the state
        QStringList stateTensors; // the parameter's tensors there (exp_avg, …)
    };
    // The figure of tensor `index` of the document, when it is a parameter's
    // weight or state tensor and the figures are in.
    std::optional<Figure> forTensor(int index) const;
    bool isComputing() const { return m_computing; }

Q_SIGNALS:
    void ready();
    void failed(const QString& message); // the state beside could not be read

private:
    struct Result;
    std::shared_ptr<const Result> m_result;
    std::shared_ptr<const ckptscope::Document> m_document;
    bool m_computing = false;
    BackgroundTask m_task{this};
};
