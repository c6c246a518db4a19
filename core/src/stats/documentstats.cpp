#include "ckptscope/stats/documentstats.h"

#include "ckptscope/io/mappedfile.h"

#include "stats/bincounter.h"
#include "stats/blockworkers.h"
#include "stats/codesums.h"
#include "stats/integerstats.h"
#include "stats/levelstats.h"
#include "stats/statskernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace ckptscope {

namespace {

constexpr uint64_t kBlock = uint64_t(1) << 16;

// Pass 1 of computeStatsF64: counts and moments, in double, of the values
// times 2^shift (exact but for values far below the largest; by ldexp, as
// 2^shift itself may lie past the double range).
void momentsF64(uint64_t count, const ValueReaderF64& reader, const StatsOptions& options,
                std::vector<double>& block, TensorStats& s, int shift) {
    double mn = std::numeric_limits<double>::infinity(), mx = -mn;
    double mean = 0, m2 = 0, sumSq = 0, sum = 0; // Welford: stable for large offsets
    const double passes = options.bins > 0 ? 2.0 : 1.0;
    for (uint64_t first = 0; first < count; first += kBlock) {
        options.throwIfCancelled();
        const uint64_t n = std::min(kBlock, count - first);
        reader(first, n, block.data());
        for (uint64_t i = 0; i < n; ++i) {
            const double v = block[size_t(i)];
            if (std::isnan(v)) {
                ++s.nan;
                continue;
            }
            if (std::isinf(v)) {
                ++(v > 0 ? s.posInf : s.negInf);
                continue;
            }
            ++s.finite;
            s.zeros += v == 0;
            mn = std::min(mn, v);
            mx = std::max(mx, v);
            const double x = shift == 0 ? v : std::ldexp(v, shift);
            sum += x;
            sumSq += x * x;
            const double delta = x - mean;
            mean += delta / double(s.finite);
            m2 += delta * (x - mean);
        }
        options.report(double(first + n) / double(count) / passes);
    }
    stats::setMoments(s, sum, sumSq, mn, mx, mean, m2);
}

// Counts and moments of F64 values. Near the top of the double range the
// squares (and differences) overflow; near the bottom they underflow (the
// squares of 1e-310 are 0, so std and L2 read 0). Then the values are scaled
// by a power of two to just below 1, as LAPACK's dnrm2 scales by the largest
// magnitude, and the moments scaled back, so only a result that itself
// passes the double range is infinite, or below it zero.
void momentsF64(uint64_t count, const ValueReaderF64& reader, const StatsOptions& options,
                std::vector<double>& block, TensorStats& s) {
    const TensorStats empty = s;
    momentsF64(count, reader, options, block, s, 0);
    if (s.finite == 0)
        return;
    const double largest = std::max(std::fabs(*s.min), std::fabs(*s.max));
    // Squares of values below 2^-500 lose bits to the subnormal range.
    const bool underflows = largest != 0 && largest < 0x1p-500;
    if (!underflows && std::isfinite(s.l2) && std::isfinite(s.finiteSum) &&
        std::isfinite(*s.mean) && std::isfinite(*s.std))
        return;
    const int k = std::ilogb(largest) + 1;
    s = empty;
    momentsF64(count, reader, options, block, s, -k);
    s.finiteSum = std::ldexp(s.finiteSum, k);
    s.l2 = std::ldexp(s.l2, k);
    s.mean = std::ldexp(*s.mean, k);
    s.std = std::ldexp(*s.std, k);
}

// Pass 2: the histogram over [min, max], by the one bin counter.
void histogramF64(uint64_t count, const ValueReaderF64& reader, const StatsOptions& options,
                  std::vector<double>& block, Histogram& h) {
    stats::BinCounter<double> counter(h);
    for (uint64_t first = 0; first < count; first += kBlock) {
        options.throwIfCancelled();
        const uint64_t n = std::min(kBlock, count - first);
        reader(first, n, block.data());
        counter.add(block.data(), n);
        options.report(0.5 + 0.5 * double(first + n) / double(count));
    }
    counter.mergeInto(h.counts);
}

// The histogram over [min, max] of the finite values counted in r.stats.
void addHistogram(StatsResult& r, uint64_t count, const ValueReaderF64& reader,
                  const StatsOptions& options, std::vector<double>& block) {
    const TensorStats& s = r.stats;
    if (s.finite == 0 || options.bins <= 0)
        return;
    Histogram& h = r.histogram;
    h.counts.assign(size_t(options.bins), 0);
    h.lo = *s.min;
    h.hi = *s.max;
    if (!(h.hi > h.lo))
        h.counts[0] = s.finite;
    else
        histogramF64(count, reader, options, block, h);
}

bool exactInteger(Dtype dtype) {
    return isInteger(dtype) && dtype != Dtype::Bool;
}

} // namespace

StatsResult computeStatsF64(uint64_t count, const ValueReaderF64& reader,
                            const StatsOptions& options) {
    StatsResult result;
    TensorStats& s = result.stats;
    s.count = count;
    std::vector<double> block(size_t(std::min(count, kBlock)));
    momentsF64(count, reader, options, block, s);
    addHistogram(result, count, reader, options, block);
    options.report(1.0);
    return result;
}

namespace {

// The types whose statistics read the stored bytes: levels counted, codes
// summed.
bool statsReadStored(Dtype dtype) {
    return stats::countsLevels(dtype) || stats::sumsCodes(dtype);
}

// Their statistics from the stored bytes (`stored`), the histogram from
// the decoded values where the codes do not give it (`decoded`).
StatsResult storedStats(const TensorEntry& t, const stats::RawReader& stored,
                        const ValueReader& decoded, const StatsOptions& options) {
    if (stats::countsLevels(t.dtype)) // a few levels per block, counted
        return stats::levelStats(t.dtype, t.dataLen, stored, options);
    return stats::codeSumStats(t.dtype, t.dataLen, stored, decoded, options); // from code sums
}

} // namespace

StatsResult computeTensorStats(const Document& doc, size_t index, const StatsOptions& options) {
    const TensorEntry& t = doc.tensors().at(index);
    // Statistics need no order: a transposed view is read in its storage's
    // order (one contiguous read a window, not a few values of every column).
    const auto inDouble = [&doc, index](uint64_t first, uint64_t n, double* out) {
        doc.readValuesInStorageOrder(index, first, n, out);
    };
    const stats::RawReader stored = [&doc, index](uint64_t first, uint64_t n, void* out) {
        doc.readRawValues(index, first, n, out);
    };
    if (t.dtype == Dtype::F64)
        return computeStatsF64(t.dataLen, inDouble, options);
    if (exactInteger(t.dtype)) {
        // Statistics from exact integer sums; the histogram bins the values
        // in double (64-bit values beyond 2^53 rounded to the nearest).
        StatsResult r;
        r.stats =
            stats::integerStats(t.dtype, t.dataLen, stored, options, options.bins > 0 ? 2.0 : 1.0);
        std::vector<double> block(size_t(std::min(t.dataLen, kBlock)));
        addHistogram(r, t.dataLen, inDouble, options, block);
        options.report(1.0);
        return r;
    }
    const ValueReader decoded = [&doc, index](uint64_t first, uint64_t n, float* out) {
        doc.readValuesInStorageOrder(index, first, n, out);
    };
    if (statsReadStored(t.dtype))
        return storedStats(t, stored, decoded, options);
    if (const auto mapped = doc.mappedValues(index))
        return computeStats(t.dataLen, *mapped, options); // F32, scanned in place
    return computeStats(t.dataLen, decoded, options);
}

bool statsReadStored(const Document& doc, size_t index) {
    return statsReadStored(doc.tensors().at(index).dtype);
}

StatsResult computeTensorStats(const Document& doc, size_t index,
                               const std::vector<uint8_t>& stored, const StatsOptions& options) {
    const TensorEntry& t = doc.tensors().at(index);
    if (!statsReadStored(t.dtype) || stored.size() != dtypeBytes(t.dtype, t.dataLen).value_or(0))
        throw std::logic_error("computeTensorStats: not the stored bytes of a tensor whose "
                               "statistics read them");
    // Offsets of whole blocks (the passes ask for whole blocks).
    const auto at = [&t](uint64_t first) { return size_t(*dtypeBytes(t.dtype, first)); };
    const stats::RawReader raw = [&stored, &t, at](uint64_t first, uint64_t n, void* out) {
        std::memcpy(out, stored.data() + at(first), size_t(*dtypeBytes(t.dtype, n)));
    };
    const ValueReader decoded = [&stored, &t, at](uint64_t first, uint64_t n, float* out) {
        convertToF32(t.dtype, stored.data() + at(first), size_t(n), out);
    };
    return storedStats(t, raw, decoded, options);
}

const char* statisticsNote(Dtype dtype) {
    if (isComplex(dtype))
        return "statistics are not computed for complex values";
    if (isQuantized(dtype))
        return "statistics are not computed for quantized values (their scale and zero point "
               "are in the object tree)";
    return nullptr;
}

const char* statisticsNote(const Document& doc, size_t index) {
    if (isMetaTensor(doc.index(), index))
        return kMetaTensorNote;
    return statisticsNote(doc.tensors().at(index).dtype);
}

bool hasStatistics(Dtype dtype) {
    return statisticsNote(dtype) == nullptr;
}

bool statsDecodeF32(const Document& doc, size_t index) {
    const Dtype dtype = doc.tensors().at(index).dtype;
    return hasStatistics(dtype) && dtype != Dtype::F64 && !exactInteger(dtype) &&
           !statsReadStored(dtype) && !doc.mappedValues(index);
}

bool computedWhole(const TensorEntry& tensor) {
    return tensorSizeBytes(tensor).value_or(UINT64_MAX) <= kWholeTensorBytes;
}

std::vector<StatsResult> computeTensorStats(const Document& doc, const std::vector<size_t>& indices,
                                            const StatsOptions& options) {
    std::vector<StatsResult> results(indices.size());
    uint64_t total = 0;
    for (size_t index : indices)
        total += doc.tensors().at(index).dataLen;
    // Workers call back concurrently, and a large tensor's own callbacks may
    // arrive out of order: publish under one lock, and only forward.
    std::mutex progressMutex;
    double shown = 0;
    auto publish = [&](double p) {
        std::lock_guard lock(progressMutex);
        if (options.progress && p > shown) {
            shown = p;
            options.progress(p);
        }
    };
    std::atomic<uint64_t> done = 0;
    auto report = [&](uint64_t values) {
        const uint64_t now = done.fetch_add(values) + values;
        if (total > 0)
            publish(double(now) / double(total));
    };
    StatsOptions one = options;
    one.threads = 1;
    one.progress = nullptr;
    // Positions [from, to) hold small tensors: one per thread, in order.
    auto wholeTensors = [&](size_t from, size_t to) {
        forEachTask(to - from, workerCount(options.threads, to - from), [&](size_t w, unsigned) {
            const size_t k = from + w;
            results[k] = computeTensorStats(doc, indices[k], one);
            report(doc.tensors()[indices[k]].dataLen);
        });
    };
    size_t from = 0; // first small tensor not yet computed
    for (size_t k = 0; k < indices.size(); ++k) {
        const uint64_t n = doc.tensors()[indices[k]].dataLen;
        if (computedWhole(doc.tensors()[indices[k]]))
            continue;
        wholeTensors(from, k);
        from = k + 1;
        StatsOptions o = options;
        const uint64_t before = done.load();
        if (options.progress && total > 0)
            o.progress = [&publish, before, n, total](double p) {
                publish((double(before) + p * double(n)) / double(total));
            };
        results[k] = computeTensorStats(doc, indices[k], o);
        report(n);
    }
    wholeTensors(from, indices.size());
    return results;
}

} // namespace ckptscope
