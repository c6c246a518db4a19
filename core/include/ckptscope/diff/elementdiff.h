#pragma once

#include "ckptscope/stats/tensorstats.h"

#include <atomic>
#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckptscope {

struct MappedValues;

// How two sets of values are compared (`ckptscope-cli diff`, compare view).
// cancel is checked between blocks; progress comes from worker threads.
struct DiffOptions : TaskControl {
    double atol = 0;      // absolute tolerance
    double rtol = 0;      // relative to |a|
    int bins = 64;        // histogram of b - a; 0: none
    unsigned threads = 0; // 0: hardware concurrency
};

// A tolerance as written (`--atol 1e-3`, the compare window's fields): a
// finite decimal number >= 0, the whole text, parsed to the nearest double;
// empty otherwise.
std::optional<double> parseTolerance(std::string_view text);

// The rule below for one pair: true when a and b differ (NaN against a
// number, an infinity against anything but itself, or finite values with
// |b − a| > atol + rtol |a|, in double). The views tint by it, so a tint and
// the counts never disagree.
bool elementsDiffer(double a, double b, double atol, double rtol);
// The same for complex values, as torch.isclose: a value is NaN when a part
// is, infinite when a part is and none is NaN; finite ones differ when
// |b − a| > atol + rtol |a|, moduli in double.
bool elementsDiffer(std::complex<double> a, std::complex<double> b, double atol, double rtol);

// What comparing values a (the reference) with values b found. Element i
// differs when exactly one of a_i, b_i is NaN (also counted in nanMismatch),
// when one is infinite and the other is not the same infinity, or when both
// are finite and |b_i - a_i| > atol + rtol |a_i|, all in double: with zero
// tolerances that is equality of values (-0 == +0, NaN == NaN). The figures
// are over the pairs where both values are finite, accumulated in double.
struct ElementDiff {
    uint64_t count = 0;       // pairs compared
    uint64_t differing = 0;   // pairs that differ
    uint64_t nanMismatch = 0; // pairs where exactly one is NaN
    uint64_t infMismatch = 0; // no NaN, an infinity against anything but itself
    uint64_t finitePairs = 0; // pairs where both are finite
    std::optional<double> maxAbsDiff, meanAbsDiff; // empty without a finite pair
    std::optional<double> relL2;                   // ||b - a|| / ||a||; empty when ||a|| = 0
    std::optional<double> cosine;                  // a.b / (||a|| ||b||); empty when a norm is 0
    double normA = 0, normB = 0;                   // over the finite pairs
    Histogram histogram; // of b - a over its finite range; empty counts without a finite pair
};

// "max_abs_diff: overflows double" for each figure of `d` that passes the
// double range (F64 values near its top: JSON writes such a figure as null,
// never silently), and "histogram: N differences overflow double (not
// binned)" when some b − a does.
std::vector<std::string> overflowedFigures(const ElementDiff& d);

// Compares values block by block; one comparer serves many tensors in a row
// and keeps its buffers between them (no fresh pages for every tensor).
class ValueComparer {
public:
    explicit ValueComparer(DiffOptions options);
    ~ValueComparer();
    ValueComparer(const ValueComparer&) = delete;
    ValueComparer& operator=(const ValueComparer&) = delete;

    // See compareValues. `progress` overrides options.progress for this call.
    ElementDiff compare(uint64_t count, const ValueReader& a, const ValueReader& b,
                        const std::function<void(double)>& progress = {});
    // The same over f32 values scanned in place in two mapped files (no
    // copy). Throws SourceChangedError naming the file (file()) that shrank
    // or changed.
    ElementDiff compare(uint64_t count, const MappedValues& a, const MappedValues& b,
                        const std::function<void(double)>& progress = {});
    const DiffOptions& options() const { return m_options; }

private:
    struct Buffers;
    class Passes;
    DiffOptions m_options;
    std::unique_ptr<Buffers> m_buffers;
};

// Compares count values read block by block from both readers (never a whole
// tensor in memory), on up to options.threads threads. Block results merge
// in block order, so the figures do not depend on the thread count. Throws
// Cancelled when *options.cancel became true; reader exceptions propagate.
ElementDiff compareValues(uint64_t count, const ValueReader& a, const ValueReader& b,
                          const DiffOptions& options);

// The same in double, for F64 tensors (f32 would turn values beyond its
// range into infinities): one thread, two passes. Sums of squares and
// products are taken over values scaled below 1 when they could overflow,
// so only a figure that itself passes the double range is infinite.
ElementDiff compareValuesF64(uint64_t count, const ValueReaderF64& a, const ValueReaderF64& b,
                             const DiffOptions& options);

// The same for complex values (C64, C128), element by element: each reader
// gives a value's (real, imaginary) parts, 2 n doubles for n values.
// Elements differ by the complex elementsDiffer; max_abs_diff, mean_abs_diff
// and the histogram are of |b − a|; the norms are over both parts
// (||a||² = Σ |a_i|²), rel_l2 = ||b − a|| / ||a||, and the cosine is the real
// part of Σ a_i conj(b_i) over ||a|| ||b||.
ElementDiff compareComplex(uint64_t count, const ValueReaderF64& a, const ValueReaderF64& b,
                           const DiffOptions& options);

// Convenience over values in memory (tests, optimizer blobs).
ElementDiff compareValues(const float* a, const float* b, uint64_t count,
                          const DiffOptions& options);

} // namespace ckptscope
