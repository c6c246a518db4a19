#include "gguf/blockpanel.h"

#include "common/sizeformat.h"

#include <QFormLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <vector>

using namespace ckptscope;

BlockPanel::BlockPanel(QWidget* parent) : QGroupBox(tr("Block"), parent) {
    auto* layout = new QVBoxLayout(this);
    m_hint = new QLabel;
    m_hint->setWordWrap(true);
    layout->addWidget(m_hint);
    m_form = new QFormLayout;
    m_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    layout->addLayout(m_form);
    layout->addStretch();
    setVisible(false);
}

void BlockPanel::setTensor(std::shared_ptr<const Document> document, int tensor) {
    m_document = std::move(document);
    m_tensor = -1;
    if (m_document && tensor >= 0 && size_t(tensor) < m_document->tensors().size()) {
        const Dtype dtype = m_document->tensors()[size_t(tensor)].dtype;
        if (dtypeBlock(dtype).elements > 1 && dtypeDecodable(dtype))
            m_tensor = tensor;
    }
    setVisible(m_tensor >= 0);
    showElement(std::nullopt);
}

void BlockPanel::clearRows() {
    while (m_form->rowCount() > 0)
        m_form->removeRow(0);
}

void BlockPanel::addRow(const QString& name, const QString& value) {
    auto* label = new QLabel(value);
    label->setObjectName(name);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_form->addRow(name + QLatin1Char(':'), label);
}

QString BlockPanel::fieldText(const QString& name) const {
    for (int row = 0; row < m_form->rowCount(); ++row) {
        const QLayoutItem* item = m_form->itemAt(row, QFormLayout::FieldRole);
        const auto* label = item ? qobject_cast<const QLabel*>(item->widget()) : nullptr;
        if (label && label->objectName() == name)
            return label->text();
    }
    return {};
}

void BlockPanel::showElement(std::optional<uint64_t> element) {
    m_read.cancel(); // a newer selection: the older block is not wanted
    clearRows();
    if (m_tensor < 0)
        return;
    const TensorEntry& t = m_document->tensors()[size_t(m_tensor)];
    const auto loc = element ? gguf::locateBlock(t, *element) : std::nullopt;
    if (!loc) {
        m_hint->setText(tr("%1 stores %2 values in blocks of %3 bytes. Select a value to see "
                           "what it was made of.")
                            .arg(QString::fromUtf8(dtypeName(t.dtype)))
                            .arg(dtypeBlock(t.dtype).elements)
                            .arg(dtypeBlock(t.dtype).bytes));
        return;
    }
    m_hint->setText(tr("Reading the block of element %1…").arg(groupedNumber(*element)));
    // Off the GUI thread: the block may lie on a slow disk or server.
    m_read.start(
        [document = m_document, tensor = size_t(m_tensor), loc = *loc,
         element = *element](BackgroundTask::Run&) {
            std::vector<uint8_t> bytes(loc.bytes);
            document->readRawValues(tensor, loc.firstElement, loc.elements, bytes.data());
            return gguf::blockAnatomy(document->tensors()[tensor].dtype, bytes,
                                      uint32_t(element - loc.firstElement));
        },
        [this, loc = *loc, element = *element](const gguf::BlockAnatomy& anatomy) {
            showAnatomy(element, loc, anatomy);
        },
        {{}, [this](const QString& message) {
             m_hint->setText(tr("The block could not be read: %1").arg(message));
         }});
}

void BlockPanel::showAnatomy(uint64_t element, const gguf::BlockLocation& loc,
                             const gguf::BlockAnatomy& anatomy) {
    const TensorEntry& t = m_document->tensors()[size_t(m_tensor)];
    m_hint->setText(
        tr("Element %1 of %2:").arg(groupedNumber(element), QString::fromUtf8(dtypeName(t.dtype))));
    const uint64_t blocks = t.dataLen / loc.elements;
    addRow(tr("block"), tr("%1 of %2").arg(groupedNumber(loc.block), groupedNumber(blocks)));
    addRow(tr("elements"), tr("%1 – %2 (#%3 in it)")
                               .arg(groupedNumber(loc.firstElement),
                                    groupedNumber(loc.firstElement + loc.elements - 1))
                               .arg(anatomy.indexInBlock));
    QString offset = tr("%1 (%2 bytes)").arg(groupedNumber(loc.fileOffset)).arg(loc.bytes);
    if (const std::string& shard = m_document->shardName(size_t(m_tensor)); !shard.empty())
        offset += tr(" in %1").arg(QString::fromStdString(shard));
    addRow(tr("file offset"), offset);
    for (const gguf::BlockField& f : gguf::blockFields(anatomy))
        addRow(QString::fromStdString(f.name), QString::fromStdString(f.value));
}
