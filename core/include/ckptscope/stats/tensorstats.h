#pragma once

#include "ckptscope/common/taskcontrol.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ckptscope {

struct MappedValues;

// An integer as stored, any int64 or uint64: its sign and magnitude.
struct StoredInteger {
    bool negative = false;
    uint64_t magnitude = 0;
    bool operator==(const StoredInteger&) const = default;
};

// Summary of a tensor's stored values. Moments are over the finite values,
// accumulated in double.
struct TensorStats {
    uint64_t count = 0; // values stored
    uint64_t finite = 0;
    uint64_t nan = 0;
    uint64_t posInf = 0;
    uint64_t negInf = 0;
    uint64_t zeros = 0;
    std::optional<double> min, max, mean, std; // empty without a finite value
    double l2 = 0;                             // sqrt of the sum of squares of finite values
    double finiteSum = 0;                      // sum of finite values
    // Integer tensors (U8 … I64): min and max exactly as stored (min and
    // max above are their nearest doubles); empty for other dtypes.
    std::optional<StoredInteger> intMin, intMax;
};

// An integer as stored, in decimal ("-9223372036854775808").
std::string storedIntegerText(const StoredInteger& v);

// The min (or max) of s as the file holds it: an integer tensor's exact
// integer, else the shortest text that reads back to the same value, as a
// float32 when `f32Values` (every value of the dtype is one: exactInF32),
// else as a double; fmt::kMissing when there is none.
std::string extremeText(const TensorStats& s, bool max, bool f32Values);

// Equal-width bins over [lo, hi], the finite range; NaN/Inf are not binned.
struct Histogram {
    double lo = 0, hi = 0;
    std::vector<uint64_t> counts;
    // Bin index for a finite value (last bin is closed on the right).
    size_t binOf(double v) const;
    // Where bin i starts (edge(counts.size()) == hi), finite even when
    // hi − lo passes the double range.
    double edge(size_t i) const;
    // The same counts over [lo / 2, hi / 2] (exact): where hi − lo passes the
    // double range, shares and positions are computed on it and doubled.
    Histogram halved() const { return Histogram{lo / 2, hi / 2, counts}; }
};

struct StatsResult {
    TensorStats stats;
    Histogram histogram; // empty counts when bins == 0 or no finite value
};

// Supplies values: fill `out` with values [first, first + n).
using ValueReader = std::function<void(uint64_t first, uint64_t n, float* out)>;
// The same in double (F64 values).
using ValueReaderF64 = std::function<void(uint64_t first, uint64_t n, double* out)>;

// cancel is checked between blocks (then Cancelled); progress comes from
// worker threads.
struct StatsOptions : TaskControl {
    int bins = 0;         // 0: no histogram
    unsigned threads = 0; // 0: hardware concurrency
};

// One fused pass for counts and moments (parallel over blocks, merged in
// block order so results do not depend on the thread count), then one pass
// for the histogram. Exceptions from the reader propagate.
StatsResult computeStats(uint64_t count, const ValueReader& reader, const StatsOptions& options);

// The same over f32 values scanned in place in a mapped file: no copy, and
// the pass for the histogram looks at the mapped values again. Only the
// windows being scanned stay mapped in (bounded memory). Throws
// SourceChangedError when the file shrinks or changes meanwhile.
StatsResult computeStats(uint64_t count, const MappedValues& values, const StatsOptions& options);

// Convenience over values in memory.
StatsResult computeStats(const float* values, uint64_t count, int bins = 0);

// Equal-width bins over [lo, hi] (Histogram::binOf; values outside go to the
// end bins) of the finite values a reader supplies: two tensors counted on
// the same bins for an overlay. Throws Cancelled; reader exceptions
// propagate; no progress.
Histogram histogramOver(uint64_t count, const ValueReader& reader, double lo, double hi, int bins,
                        const TaskControl& control = {});
// The same over values read in double (F64 and integer tensors).
Histogram histogramOver(uint64_t count, const ValueReaderF64& reader, double lo, double hi,
                        int bins, const TaskControl& control = {});

} // namespace ckptscope
