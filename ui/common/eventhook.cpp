#include "common/eventhook.h"

#include <QObject>

#include <algorithm>
#include <utility>
#include <vector>

namespace {

class EventHook : public QObject {
public:
    EventHook(QObject* watched, std::initializer_list<QEvent::Type> types,
              std::function<void()> react)
        : QObject(watched), m_types(types), m_react(std::move(react)) {
        watched->installEventFilter(this);
    }

    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched == parent() &&
            std::find(m_types.begin(), m_types.end(), event->type()) != m_types.end())
            m_react();
        return false;
    }

private:
    std::vector<QEvent::Type> m_types;
    std::function<void()> m_react;
};

} // namespace

void onEvents(QObject* watched, std::initializer_list<QEvent::Type> types,
              std::function<void()> react) {
    new EventHook(watched, types, std::move(react));
}
