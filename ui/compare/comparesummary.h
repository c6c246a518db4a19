#pragma once

#include "ckptscope/diff/gradientdiff.h"
#include "ckptscope/diff/tensordiff.h"

#include <QString>

#include <utility>

// The compare window's words for what it shows: the summary bar's rich text, every status counted
// with its colour.
namespace comparesummary {

// toleranceText: how values were compared ("values compared exactly").
QString tensorSummary(const ckptscope::TensorDiff& d, const QString& labelA, const QString& labelB,
                      const QString& toleranceText);
QString gradientSummary(const ckptscope::GradientDiff& g, const QString& labelA,
                        const QString& labelB);

} // namespace comparesummary
