#pragma once

#include "ckptscope/diff/tensordiff.h"
#include "ckptscope/document/document.h"

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

// What the compare window shows for one selected tensor beyond the diff:
// each side's statistics, and both sides' value histograms counted on the
// same bins (over the union of the two finite ranges) for an overlay.
struct CompareDetail {
    std::optional<ckptscope::StatsResult> a, b; // a side without the tensor: empty
    ckptscope::Histogram overlayA, overlayB;    // same lo, hi and bins; empty without values

    // A side's statistics (CompareStatsModel::setValues), empty without the tensor.
    std::optional<ckptscope::TensorStats> statsA() const { return statsOf(a); }
    std::optional<ckptscope::TensorStats> statsB() const { return statsOf(b); }

private:
    static std::optional<ckptscope::TensorStats>
    statsOf(const std::optional<ckptscope::StatsResult>& side) {
        return side ? std::optional(side->stats) : std::nullopt;
    }
};

// Decoded values the detail keeps of one side, at most (see below): 64 Mi
// f32 values, an 8B model's largest layer matrix (4096 x 14336) but not its
// embedding. Both sides: 512 MiB at most, freed when the detail is done.
constexpr uint64_t kDetailKeptBytes = uint64_t(256) << 20;

// Reads the tensor's values of each side block by block (statistics, then
// the shared bins). A side whose statistics decode every value (BF16,
// F16, quantized types without code sums…) is decoded once: its values are
// kept from the first pass for the bins when they take at most `keptBytes`
// as f32, and decoded again only above that. A side whose statistics read
// its stored bytes (codes summed, levels counted) has them read once under
// the same budget, and the bins decode them. Throws Cancelled, and OpenError naming the side's
// file.
CompareDetail computeCompareDetail(const ckptscope::Document& a, const ckptscope::Document& b,
                                   const ckptscope::TensorDiffEntry& entry, int bins,
                                   const std::atomic<bool>* cancel,
                                   const std::function<void(double)>& progress,
                                   uint64_t keptBytes = kDetailKeptBytes);

// The same for two optimizer blobs read as f32 little-endian (a blob that is
// absent, or whose length is no multiple of 4, is an empty side). The bytes
// must outlive the call.
CompareDetail computeBlobDetail(const std::vector<uint8_t>* a, const std::vector<uint8_t>* b,
                                int bins, const std::atomic<bool>* cancel,
                                const std::function<void(double)>& progress);
