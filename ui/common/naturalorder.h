#pragma once

#include <QString>

// Orders names the way people count: "layers.2" before "layers.10".
// Digit runs compare by value, everything else case-insensitively, and ties
// fall back to plain comparison so the order is total.
bool naturalLess(const QString& a, const QString& b);
