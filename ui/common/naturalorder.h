#pragma once

#include <QString>

// Orders names the way people count: "layers.2" before "layers.10". The
// core's ckptscope::naturalLess over the names' UTF-8 (ASCII digit runs by
// value, ASCII letters case-insensitively, ties by byte order), so a tree
// and the CLI agree on every name.
bool naturalLess(const QString& a, const QString& b);
