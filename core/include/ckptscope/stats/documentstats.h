#pragma once

#include "ckptscope/document/document.h"
#include "ckptscope/stats/tensorstats.h"

#include <functional>
#include <vector>

namespace ckptscope {

// Statistics and histogram over values read in double, accumulated in
// double (F64 tensors). One thread; cancellation and progress as
// computeStats.
StatsResult computeStatsF64(uint64_t count, const ValueReaderF64& reader,
                            const StatsOptions& options);

// Statistics of tensor `index` of a document, whatever its dtype: F64 in
// double; integers (but BOOL) from exact integer sums, min and max also as
// stored (TensorStats::intMin, intMax), the histogram over their doubles;
// every other dtype converted to f32. Complex values have none (below):
// computeTensorStats refuses them, naming the tensor.
StatsResult computeTensorStats(const Document& doc, size_t index, const StatsOptions& options);

// Whether values of this dtype have statistics: not complex ones, whose
// values are pairs, nor quantized ones, whose values need their scale (a
// tensor of them shows its count and says so: statisticsNote).
bool hasStatistics(Dtype dtype);
// Why a dtype has no statistics ("statistics are not computed for complex
// values"); null when it has them.
const char* statisticsNote(Dtype dtype);
// The same for tensor `index`, which also has none when it is a meta tensor
// (TensorTraits::meta: no values saved).
const char* statisticsNote(const Document& doc, size_t index);

// Whether computeTensorStats of tensor `index` gets its values from
// Document::readValues as f32 (each value decoded; not F64, not integers,
// not scanned in place, not counted from codes or levels: statsReadStored).
// A caller that needs the values again (the compare view's overlay) can
// then keep what that pass decoded rather than decode the tensor twice.
bool statsDecodeF32(const Document& doc, size_t index);

// Whether computeTensorStats of tensor `index` reads its stored bytes
// rather than decoded values (block-quantized types whose levels are counted
// or codes summed on this CPU: Q1_0, Q8_0, Q4_0, Q6_K, Q3_K, Q4_K, Q5_K). A caller that
// needs the values too (the compare view's overlay) can read the bytes once
// and give them to the computeTensorStats below, then decode them itself.
bool statsReadStored(const Document& doc, size_t index);
// computeTensorStats of such a tensor from all its stored bytes, read
// beforehand: the same results. Throws std::logic_error for another tensor,
// or bytes of another size.
StatsResult computeTensorStats(const Document& doc, size_t index,
                               const std::vector<uint8_t>& stored, const StatsOptions& options);

// computeTensorStats of each of `indices`, in that order, with the same
// results. Tensors of up to kWholeTensorBytes stored bytes are computed
// whole, one per thread at a time; larger ones one after another, each
// spread over all threads. options.progress gets the share of all values
// done; options.threads applies to both. Throws what the loop over
// `indices` would have thrown first.
//
// By bytes, not values: the work a value takes follows its bytes (a block-
// quantized tensor of 16 Mi values is 2.3 MB of Q1_0), and spreading a
// tensor over threads costs a wake-up per helper, each pass (70 µs on a
// VM), which dwarfs a few milliseconds of work.
constexpr uint64_t kWholeTensorBytes = uint64_t(16) << 20;
// Whether computeTensorStats over many tensors computes this one whole, on
// one thread.
bool computedWhole(const TensorEntry& tensor);
std::vector<StatsResult> computeTensorStats(const Document& doc, const std::vector<size_t>& indices,
                                            const StatsOptions& options);

} // namespace ckptscope
