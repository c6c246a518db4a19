#pragma once

#include <QFrame>

class QLabel;
class QPushButton;

// A slim, non-blocking message strip above the content (like KMessageWidget):
// information (file reloaded) or an error (file could not be opened), with an
// optional action and a close button.
class NotificationBar : public QFrame {
    Q_OBJECT
public:
    enum class Kind { Info, Error };
    explicit NotificationBar(QWidget* parent = nullptr);

    void showMessage(Kind kind, const QString& text, const QString& actionText = {});
    QString text() const;
    Kind kind() const { return m_kind; }

Q_SIGNALS:
    void actionTriggered();

private:
    QLabel* m_label;
    QPushButton* m_action;
    Kind m_kind = Kind::Info;
};
