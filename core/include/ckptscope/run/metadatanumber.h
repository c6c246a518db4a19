#pragma once

#include "ckptscope/run/runseries.h"

#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

// A metadata value read as a number: the whole text (spaces around it
// allowed) in C decimal or scientific notation ("0.25", "-3", "1e-4"; also
// "nan" and "inf"). Nothing for anything else ("3 epochs", "0x10", "").
std::optional<double> metadataNumber(const std::string& text);

// A metadata key whose every value in the run reads as a number, with at
// least one finite value: what can be charted over the steps (loss, lr, …).
struct NumericMetadata {
    std::string key;
    std::vector<std::optional<double>> values; // per checkpoint; nothing where absent
};
std::vector<NumericMetadata> numericMetadata(const std::vector<MetadataSeries>& metadata);

} // namespace ckptscope
