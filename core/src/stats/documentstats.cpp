#include "ckptscope/stats/documentstats.h"

#include "ckptscope/io/mappedfile.h"

#include "stats/bincounter.h"
#include "stats/blockworkers.h"
#include "stats/statskernels.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace ckptscope {

namespace {

constexpr uint64_t kBlock = uint64_t(1) << 16;

// Pass 1 of computeStatsF64: counts and moments, in double.
void momentsF64(uint64_t count, const ValueReaderF64& reader, const StatsOptions& options,
                std::vector<double>& block, TensorStats& s) {
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
            sum += v;
            sumSq += v * v;
            const double delta = v - mean;
            mean += delta / double(s.finite);
            m2 += delta * (v - mean);
        }
        options.report(double(first + n) / double(count) / passes);
    }
    stats::setMoments(s, sum, sumSq, mn, mx, mean, m2);
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

} // namespace

StatsResult computeStatsF64(uint64_t count, const ValueReaderF64& reader,
                            const StatsOptions& options) {
    StatsResult result;
    TensorStats& s = result.stats;
    s.count = count;
    std::vector<double> block(size_t(std::min(count, kBlock)));
    momentsF64(count, reader, options, block, s);
    if (s.finite > 0 && options.bins > 0) {
        Histogram& h = result.histogram;
        h.counts.assign(size_t(options.bins), 0);
        h.lo = *s.min;
        h.hi = *s.max;
        if (!(h.hi > h.lo))
            h.counts[0] = s.finite;
        else
            histogramF64(count, reader, options, block, h);
    }
    options.report(1.0);
    return result;
}

bool roundsInF32(uint64_t m) {
    return m != 0 && std::bit_width(m) - std::countr_zero(m) > 24;
}

namespace {

// Values of a raw integer element that f32 rounds.
uint64_t countRounded(Dtype dtype, const uint8_t* raw, uint64_t n) {
    uint64_t count = 0;
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t magnitude = 0;
        switch (dtype) {
        case Dtype::U32: {
            uint32_t v;
            std::memcpy(&v, raw + i * 4, 4);
            magnitude = v;
            break;
        }
        case Dtype::I32: {
            int32_t v;
            std::memcpy(&v, raw + i * 4, 4);
            magnitude = v < 0 ? uint64_t(-int64_t(v)) : uint64_t(v);
            break;
        }
        case Dtype::U64:
            std::memcpy(&magnitude, raw + i * 8, 8);
            break;
        default: { // I64
            int64_t v;
            std::memcpy(&v, raw + i * 8, 8);
            magnitude = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
        }
        }
        count += roundsInF32(magnitude);
    }
    return count;
}

} // namespace

StatsResult computeTensorStats(const Document& doc, size_t index, const StatsOptions& options) {
    const TensorEntry& t = doc.tensors().at(index);
    if (t.dtype == Dtype::F64)
        return computeStatsF64(
            t.dataLen,
            [&doc, index](uint64_t first, uint64_t n, double* out) {
                doc.readValues(index, first, n, out);
            },
            options);
    if (const auto mapped = doc.mappedValues(index))
        return computeStats(t.dataLen, *mapped, options); // F32, scanned in place
    if (exactInF32(t.dtype))
        return computeStats(
            t.dataLen,
            [&doc, index](uint64_t first, uint64_t n, float* out) {
                doc.readValues(index, first, n, out);
            },
            options);
    // 32/64-bit integers: convert here and count what f32 rounds, once per
    // block (the histogram pass may read a block again).
    std::mutex mutex;
    std::unordered_set<uint64_t> counted;
    uint64_t rounded = 0;
    const size_t size = dtypeSize(t.dtype);
    StatsResult r = computeStats(
        t.dataLen,
        [&](uint64_t first, uint64_t n, float* out) {
            std::vector<uint8_t> raw(size_t(n) * size);
            doc.readRawValues(index, first, n, raw.data());
            convertToF32(t.dtype, raw.data(), size_t(n), out);
            const uint64_t c = countRounded(t.dtype, raw.data(), n);
            std::lock_guard lock(mutex);
            if (counted.insert(first).second)
                rounded += c;
        },
        options);
    r.stats.rounded = rounded;
    return r;
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
        if (n <= kWholeTensorValues)
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
