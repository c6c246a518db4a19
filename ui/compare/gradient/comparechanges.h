#pragma once

#include "ckptscope/diff/gradientdiff.h"

#include <qnamespace.h>

class QStandardItemModel;
class QString;

// On each change row's first cell: the list of the diff it comes from
// (ChangeKind) and its index in that list, so views can find what a row is.
enum ChangeRole { ChangeKindRole = Qt::UserRole + 1, ChangeIndexRole };
enum class ChangeKind { Field, Node, EdgeAdded, EdgeRemoved, Blob };

// Fills a tree model with what differs between two gradient checkpoints:
// groups Fields, Nodes, Edges and Optimizer state, one row per change with
// columns Item, Status, A, B, Detail; the status cell carries the status
// colour and icon. Clears the model first.
void fillGradientChanges(QStandardItemModel* model, const ckptscope::GradientDiff& diff);

// A field's value as shown: the number, the text, or "null".
QString fieldValueText(const ckptscope::FieldValue& value);
