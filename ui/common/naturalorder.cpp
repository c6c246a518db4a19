#include "common/naturalorder.h"

#include "ckptscope/common/naturalorder.h"

#include <QByteArray>

#include <string_view>

bool naturalLess(const QString& a, const QString& b) {
    // The core's rule over the same bytes, so the tree, the tables and the
    // CLI list names (non-ASCII ones too) in one order.
    const QByteArray ua = a.toUtf8(), ub = b.toUtf8();
    return ckptscope::naturalLess(std::string_view(ua.constData(), size_t(ua.size())),
                                  std::string_view(ub.constData(), size_t(ub.size())));
}
