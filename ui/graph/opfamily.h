#pragma once

#include <QColor>
#include <QString>

// Op families colour the graph: the op string of a node is free text, so
// families are recognised by common names and substrings.
enum class OpFamily { MatMul, Elementwise, Activation, Normalisation, Reduction, Loss, Other };

OpFamily opFamily(const QString& op);
QString opFamilyName(OpFamily family);
// Fill colour of a family; readable on light and dark backgrounds.
QColor opFamilyColor(OpFamily family);
