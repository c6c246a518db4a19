#pragma once

#include <QAction>
#include <QApplication>
#include <QDropEvent>
#include <QMenu>
#include <QMimeData>
#include <QTest>
#include <QTimer>
#include <QUrl>

#include <functional>

// Drops onto a window as a file manager would, and answers the drop menu
// (CompareLauncher::askOnDrop), or another popup menu named so, by keys once
// it shows, so its exec() never blocks a test. What the menu offered is kept for the test to check.
namespace dropsupport {

class MenuAnswer : public QObject {
public:
    // `keys` are typed into the menu when it shows (Qt::Key_Return takes the
    // active action, Qt::Key_Escape dismisses it).
    explicit MenuAnswer(QList<Qt::Key> keys, QString menuName = QStringLiteral("dropMenu"))
        : m_keys(std::move(keys)), m_menuName(std::move(menuName)) {
        m_timer.setInterval(10);
        QObject::connect(&m_timer, &QTimer::timeout, this, [this] { poll(); });
        m_timer.start();
    }
    bool seen() const { return m_seen; }
    QStringList actions() const { return m_actions; } // object names, in order
    QStringList texts() const { return m_texts; }
    QStringList enabled() const { return m_enabled; } // object names of the enabled ones
    // Instead of keys: triggers the action of this object name, as a click would.
    void setTrigger(const QString& action) { m_trigger = action; }
    QString defaultAction() const { return m_default; }
    QString activeAction() const { return m_active; }

private:
    void poll() {
        auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
        if (!menu || menu->objectName() != m_menuName)
            return;
        m_timer.stop();
        m_seen = true;
        for (const QAction* a : menu->actions()) {
            m_actions << a->objectName();
            m_texts << a->text();
            if (a->isEnabled())
                m_enabled << a->objectName();
        }
        m_default = menu->defaultAction() ? menu->defaultAction()->objectName() : QString();
        m_active = menu->activeAction() ? menu->activeAction()->objectName() : QString();
        for (QAction* a : menu->actions())
            if (!m_trigger.isEmpty() && a->objectName() == m_trigger && a->isEnabled()) {
                menu->close();
                a->trigger();
            }
        for (Qt::Key k : m_keys)
            QTest::keyClick(menu, k);
        if (menu->isVisible()) // keys that chose nothing: never leave exec() running
            menu->close();
    }

    QList<Qt::Key> m_keys;
    QString m_menuName, m_trigger;
    QTimer m_timer;
    bool m_seen = false;
    QStringList m_actions, m_texts, m_enabled;
    QString m_default, m_active;
};

// Drag-enter then drop of local files at (10, 10); false when the enter was
// refused.
inline bool drop(QWidget* w, const QStringList& files,
                 Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
    QMimeData mime;
    QList<QUrl> urls;
    for (const QString& f : files)
        urls << QUrl::fromLocalFile(f);
    mime.setUrls(urls);
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, modifiers);
    QApplication::sendEvent(w, &enter);
    if (!enter.isAccepted())
        return false;
    QDropEvent ev(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, modifiers);
    QApplication::sendEvent(w, &ev);
    return true;
}

} // namespace dropsupport
