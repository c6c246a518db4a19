#pragma once

#include "ckptscope/document/document.h"

#include <QWidget>

#include <memory>

class BlockPanel;
class QHBoxLayout;
class QLabel;
class QSplitter;
class QTableView;
class TensorValuesModel;

// The values of a tensor in a table: slice selectors for N-D tensors,
// copying the selection as tab-separated text (Ctrl+C), and for a
// block-quantized tensor the Block panel of the current element.
class TensorValuesView : public QWidget {
    Q_OBJECT
public:
    explicit TensorValuesView(QWidget* parent = nullptr);

    void setTensor(std::shared_ptr<const ckptscope::Document> document, int tensor);
    TensorValuesModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    BlockPanel* blockPanel() const { return m_blockPanel; }
    // Values asked for are still being read (cells show "…"), or the Block
    // panel's block.
    bool isReading() const;
    // The selected cells as rows of tab-separated values.
    // Empty when the selection holds more than kMaxCopyCells values.
    QString selectionText() const;
    static constexpr qint64 kMaxCopyCells = 1'000'000;
    void copySelection() const;
    // Width of a value column: room for the widest number a cell can show.
    int valueColumnWidth() const;

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void rebuildSelectors();
    // The Block panel beside the table while the table keeps three value
    // columns beside it, else below the table (a 1024 px window).
    void placeBlockPanel();

    TensorValuesModel* m_model;
    QTableView* m_table;
    BlockPanel* m_blockPanel;
    QSplitter* m_body;
    QHBoxLayout* m_selectors;
    QLabel* m_note;
};
