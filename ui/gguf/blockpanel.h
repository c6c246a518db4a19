#pragma once

#include "common/backgroundtask.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/gguf/blockanatomy.h"

#include <QGroupBox>

#include <memory>

class QFormLayout;
class QLabel;

// The Block panel beside a quantized tensor's values: for the selected
// element, its block (index, elements, byte offset in the file), the block's
// scales and minimums, the element's quant code and the value they make
// (formats/gguf/blockanatomy.h). Only that block's bytes are read, when an
// element is selected, through the document (local files and URLs alike),
// off the GUI thread: the panel says "reading" until they arrive, and a
// newer selection drops the older read.
// Hidden for tensors whose dtype has no blocks.
class BlockPanel : public QGroupBox {
    Q_OBJECT
public:
    explicit BlockPanel(QWidget* parent = nullptr);

    // Shows the panel when the tensor is block-quantized (and decodable).
    void setTensor(std::shared_ptr<const ckptscope::Document> document, int tensor);
    // The element selected (its flat index), or none.
    void showElement(std::optional<uint64_t> element);
    // True when the current tensor has blocks to show.
    bool applies() const { return m_tensor >= 0; }
    // The text of a row ("block", "file offset", "quant code q", "value"…);
    // empty when there is no such row. For tests and copy.
    QString fieldText(const QString& name) const;
    // A block is being read.
    bool isReading() const { return m_read.isRunning(); }

private:
    void addRow(const QString& name, const QString& value);
    void clearRows();
    void showAnatomy(uint64_t element, const ckptscope::gguf::BlockLocation& loc,
                     const ckptscope::gguf::BlockAnatomy& anatomy);

    std::shared_ptr<const ckptscope::Document> m_document;
    int m_tensor = -1;
    QLabel* m_hint;
    QFormLayout* m_form;
    BackgroundTask m_read{this};
};
