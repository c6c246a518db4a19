#pragma once

#include "ckptscope/diff/gradientdiff.h"
#include "ckptscope/diff/tensordiff.h"
#include "ckptscope/document/document.h"

#include <QString>

#include <memory>
#include <optional>

// Two opened documents and what comparing them found (one of the two diffs,
// by format), or which side failed and why.
struct CompareResult {
    std::shared_ptr<const ckptscope::Document> a, b;
    std::optional<ckptscope::TensorDiff> tensors;
    std::optional<ckptscope::GradientDiff> gradient;
};

// The failure of a comparison; what() names the side at fault first:
// "A: FILE: what went wrong".
struct CompareFailure : std::exception {
    char side = 0; // 'A' or 'B'
    std::string message;
    CompareFailure(char s, const std::string& m) : side(s), message(std::string(1, s) + ": " + m) {}
    const char* what() const noexcept override { return message.c_str(); }
};

// Opens both files and compares them; throws CompareFailure naming the side
// at fault (a damaged file, a tensor file against a gradient checkpoint),
// and Cancelled.
std::shared_ptr<CompareResult> runComparison(const std::string& pathA, const std::string& pathB,
                                             const ckptscope::DiffOptions& options);
