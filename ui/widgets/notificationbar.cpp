#include "widgets/notificationbar.h"
#include "widgets/wrapanywherelabel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QToolButton>

NotificationBar::NotificationBar(QWidget* parent) : QFrame(parent) {
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 4, 4, 4);
    m_label = new WrapAnywhereLabel;
    // Always HTML: callers escape the file's text once (never Qt::AutoText,
    // which shows "&quot;" literally when a message has no tag).
    m_label->setTextFormat(Qt::RichText);
    layout->addWidget(m_label, 1);
    m_action = new QPushButton;
    layout->addWidget(m_action);
    auto* close = new QToolButton;
    close->setIcon(style()->standardIcon(QStyle::SP_TitleBarCloseButton));
    close->setAutoRaise(true);
    close->setToolTip(tr("Close"));
    layout->addWidget(close);
    connect(close, &QToolButton::clicked, this, &QWidget::hide);
    connect(m_action, &QPushButton::clicked, this, [this] {
        hide();
        Q_EMIT actionTriggered();
    });
    hide();
}

void NotificationBar::showMessage(Kind kind, const QString& text, const QString& actionText) {
    m_kind = kind;
    m_label->setText(text);
    m_action->setText(actionText);
    m_action->setVisible(!actionText.isEmpty());
    // Tint from the palette so dark themes stay readable.
    QPalette p = palette();
    const QColor base = p.color(QPalette::Window);
    const QColor tint = kind == Kind::Error ? QColor(220, 50, 47) : QColor(38, 139, 210);
    QColor mixed;
    mixed.setRgbF(base.redF() * 0.8f + tint.redF() * 0.2f,
                  base.greenF() * 0.8f + tint.greenF() * 0.2f,
                  base.blueF() * 0.8f + tint.blueF() * 0.2f);
    p.setColor(QPalette::Window, mixed);
    setPalette(p);
    show();
}

QString NotificationBar::text() const {
    return m_label->text();
}
