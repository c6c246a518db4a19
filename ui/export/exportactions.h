#pragma once

#include "export/exportjob.h"

#include "ckptscope/document/document.h"
#include "ckptscope/export/exporterror.h"
#include "ckptscope/stats/tensorstats.h"

#include <QObject>
#include <QPointer>

#include <functional>
#include <memory>
#include <string>
#include <vector>

class ExportContext;
class QAction;
class QMenu;

// Export and conversion in the browser: Tensor ▸ Export Values… / Export
// Histogram… / Copy Name, the same on the tensor tree's right-click menu,
// the Values page's Export Selection…, File ▸ Export Statistics… and
// File ▸ Convert…. Each asks for a file name, then writes off the GUI thread
// with progress and cancel (ExportJob); the methods taking a path are the
// same work without the dialog (tests, scripts).
class ExportActions : public QObject {
    Q_OBJECT
public:
    // The context outlives the actions (it is, or owns, their parent).
    ExportActions(ExportContext* context, QObject* parent);

    // Adds the File entries and fills the Tensor menu; hooks the tree's and
    // the Values page's context menus.
    void install(QMenu* fileMenu, QMenu* tensorMenu);

    // The selected tensor of the tree (-1 for none or a group).
    int currentTensor() const;

    // .npy or .csv by the extension. Returns the running job (nullptr when
    // there is nothing to export); the job reports finished/failed.
    ExportJob* exportValues(int tensor, const QString& path);
    ExportJob* exportStatistics(const QString& path);
    ExportJob* convert(const QString& path);
    // PNG, SVG (the chart as shown) or CSV (bin edges and counts).
    bool exportHistogram(const QString& path, QString* error = nullptr);
    // The Values page's selected cells as CSV, exact values.
    bool exportSelection(const QString& path, QString* error = nullptr);

    QAction* exportValuesAction() const { return m_exportValues; }
    QAction* exportHistogramAction() const { return m_exportHistogram; }
    QAction* exportSelectionAction() const { return m_exportSelection; }
    QAction* exportStatisticsAction() const { return m_exportStats; }
    QAction* convertAction() const { return m_convert; }
    QAction* copyNameAction() const { return m_copyName; }
    ExportJob* currentJob() const { return m_job; }

    // Enables what applies to the context now; call when its document changes.
    void updateActions();

private:
    ExportJob*
    startJob(const QString& title, const QString& path,
             std::function<std::vector<std::string>(const ckptscope::TaskControl&)> work);
    QString askPath(const QString& title, const QString& suggested, const QString& filters);

    ExportContext* m_context;
    QAction* m_exportValues;
    QAction* m_exportHistogram;
    QAction* m_exportSelection;
    QAction* m_exportStats;
    QAction* m_convert;
    QAction* m_copyName;
    QPointer<ExportJob> m_job;
    ckptscope::StatsResult m_lastStats; // what the histogram shows
    int m_lastStatsTensor = -1;
};
