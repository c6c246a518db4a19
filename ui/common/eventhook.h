#pragma once

#include <QEvent>

#include <functional>
#include <initializer_list>

class QObject;

// Calls `react` on each event of one of `types` that reaches `watched`
// (before `watched` handles it), for as long as `watched` lives: the hook
// is its child. For a widget's facts that follow another's (row heights
// after a font change, a column after a viewport resize) without
// subclassing it.
void onEvents(QObject* watched, std::initializer_list<QEvent::Type> types,
              std::function<void()> react);
