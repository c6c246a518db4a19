#pragma once

#include "common/backgroundtask.h"
#include "compare/compareresult.h"

#include <QWidget>

#include <memory>

struct CompareDetail;
class CompareBlobModel;
class CompareHistogramView;
class CompareStatsModel;
class HistogramView;
class QLabel;
class QTableView;

// The optimizer state of two gradient checkpoints compared: one row per
// blob with its byte counts and differences, and for the selected blob read
// as f32 both sides' statistics beside the Δ statistics, the two value
// histograms on the same bins and the histogram of B − A (the statistics
// computed off the GUI thread).
class CompareOptimizerPage : public QWidget {
    Q_OBJECT
public:
    explicit CompareOptimizerPage(QWidget* parent = nullptr);
    ~CompareOptimizerPage() override;

    // A gradient comparison (anything else clears the page).
    void setResult(std::shared_ptr<const CompareResult> result);
    void selectBlob(int row);

    CompareBlobModel* blobModel() const { return m_blobs; }
    CompareStatsModel* statsModel() const { return m_stats; }
    CompareHistogramView* overlayView() const { return m_overlay; }
    HistogramView* deltaView() const { return m_delta; }
    QTableView* blobTable() const { return m_table; }
    QString title() const;

Q_SIGNALS:
    void detailShown(int row);

private:
    void showBlob(int row);
    void showDetail(const CompareDetail& detail);

    std::shared_ptr<const CompareResult> m_result;
    int m_row = -1;
    CompareBlobModel* m_blobs;
    CompareStatsModel* m_stats;
    QTableView* m_table;
    QLabel* m_title;
    CompareHistogramView* m_overlay;
    HistogramView* m_delta;
    BackgroundTask m_task{this}; // the selected blob's statistics
};
