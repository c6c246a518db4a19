#pragma once

#include "ckptscope/gradientdiff.h"

class QStandardItemModel;

// Fills a tree model with what differs between two gradient checkpoints:
// groups Fields, Nodes, Edges and Optimizer state, one row per change with
// columns Item, Status, A, B, Detail; the status cell carries the status
// colour and icon. Clears the model first.
void fillGradientChanges(QStandardItemModel* model, const ckptscope::GradientDiff& diff);
