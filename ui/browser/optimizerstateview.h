#pragma once

#include "ckptscope/document/document.h"

#include <QWidget>

#include <memory>

class HexModel;
class NaturalSortProxy;
class QCheckBox;
class QStandardItemModel;
class QTableView;
class TensorPage;

// The optimizer state of a gradient checkpoint: blobs by name and size, a
// hex view of the selected blob, and its statistics and histogram read as
// f32 little-endian (offered when the length is a multiple of 4).
class OptimizerStateView : public QWidget {
    Q_OBJECT
public:
    explicit OptimizerStateView(QWidget* parent = nullptr);

    void setDocument(std::shared_ptr<const ckptscope::Document> document);
    void selectBlob(int row);
    // Shows the selected blob's statistics as f32; false if not possible.
    bool interpretAsF32();
    TensorPage* statsPage() const { return m_stats; }
    HexModel* hexModel() const { return m_hex; }
    QStandardItemModel* blobModel() const { return m_blobs; }
    // The blob list as shown: names in natural order (layers.2 before
    // layers.10) until a header click sorts otherwise.
    QTableView* blobTable() const { return m_blobTable; }

private:
    const std::vector<uint8_t>* selectedBytes(QString* name = nullptr) const;

    std::shared_ptr<const ckptscope::Document> m_document;
    QStandardItemModel* m_blobs;
    NaturalSortProxy* m_sorted;
    QTableView* m_blobTable;
    HexModel* m_hex;
    QCheckBox* m_asF32;
    TensorPage* m_stats;
};
