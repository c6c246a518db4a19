#include "stats/bincounter.h"
#include "common/simd.h"
#include "stats/slicedbins.h"

#include <algorithm>
#include <cmath>
#include <limits>

#ifdef CKPTSCOPE_STATS_AVX2
#include <immintrin.h>
#endif

namespace ckptscope::stats {

using namespace simd; // useAvx2, useAvx512 and the lane helpers

template <typename T> void BinCounter<T>::flush() {
#ifdef CKPTSCOPE_STATS_AVX2
    if (mode == Mode::Sliced)
        sliced->drainInto(counts.data());
#endif
    if (mode == Mode::Pairs) {
        // Entry (a << shift | b) counts a value in bin a and one in bin b.
        const size_t table = size_t(1) << (2 * shift);
        for (size_t t = 0; t < 2; ++t)
            for (size_t a = 0; a < bins; ++a)
                for (size_t b = 0; b < bins; ++b) {
                    uint32_t& c = small[t * table + (a << shift | b)];
                    counts[a] += c;
                    counts[b] += c;
                    c = 0;
                }
    } else if (mode == Mode::Lanes) {
        for (size_t t = 0; t < tables; ++t)
            for (size_t k = 0; k < bins; ++k) {
                counts[k] += small[t * bins + k];
                small[t * bins + k] = 0;
            }
    }
    pending = 0;
}

template <typename T> void BinCounter<T>::mergeInto(std::vector<uint64_t>& out) {
    flush();
    for (size_t k = 0; k < bins; ++k)
        out[k] += counts[k];
}

#ifdef CKPTSCOPE_STATS_AVX2

namespace {

// Bin indices in float, eight values at a time. binOf computes
// floor((v - lo) / (hi - lo) * bins) in double; this computes
// (v - lo) * (bins / (hi - lo)) in float, which is within 1.8e-7 × bins of it
// (three float roundings). A value whose float position is within
// guard = bins × 2^-20 of a bin edge goes to binOf, so the counts are exactly
// binOf's. v == lo gives 0 in both, so bin 0 needs no check. p ≥ 0 for finite
// values, so truncation is the floor; NaN and ±Inf truncate to INT_MIN and
// leave a NaN or infinite fraction, which sends them to binOf's loop too.
struct Binned {
    __m256i bin;  // truncated positions, at most bins - 1
    __m256 check; // all-ones lanes: let binOf decide
};

__attribute__((target("avx2,fma"), always_inline)) inline Binned
binEight(__m256 x, __m256 lo, __m256 scale, __m256 guard, __m256 guardHi, __m256i last) {
    const __m256 p = _mm256_mul_ps(_mm256_sub_ps(x, lo), scale);
    const __m256i whole = _mm256_cvttps_epi32(p);
    const __m256 frac = _mm256_sub_ps(p, _mm256_cvtepi32_ps(whole));
    // Fraction < guard (or NaN) but not exactly 0 at v == lo, or > 1 - guard.
    const __m256 check =
        _mm256_or_ps(_mm256_and_ps(_mm256_cmp_ps(frac, guard, _CMP_NGE_UQ),
                                   _mm256_cmp_ps(p, _mm256_setzero_ps(), _CMP_NEQ_UQ)),
                     _mm256_cmp_ps(frac, guardHi, _CMP_GT_OQ));
    return {_mm256_min_epi32(whole, last), check};
}

// Counts the four table indices in `at`.
__attribute__((target("avx2,fma"), always_inline)) inline void count4(uint32_t* small, __m128i at) {
    const auto q0 = uint64_t(_mm_cvtsi128_si64(at));
    const auto q1 = uint64_t(_mm_extract_epi64(at, 1));
    ++small[uint32_t(q0)];
    ++small[q0 >> 32];
    ++small[uint32_t(q1)];
    ++small[q1 >> 32];
}

} // namespace

// Lanes near a bin edge in Lanes mode: counted at `at` (their truncated
// position, clamped) like the others, taken back there, counted by binOf.
// (Handing them to binOf before counting made the increments wait on the
// edge test: 25 % slower.)
__attribute__((noinline, cold)) static void
recount(BinCounter<float>& c, const float* v, uint64_t i, uint32_t lanes, const uint32_t* at) {
    for (uint32_t m = lanes; m; m &= m - 1)
        --c.small[at[__builtin_ctz(m)]];
    c.addLanes(v, i, lanes);
}

__attribute__((target("avx2,fma"))) static void addAvx2(BinCounter<float>& c, const float* v,
                                                        uint64_t n) {
    const __m256 lo = _mm256_set1_ps(c.lo), scale = _mm256_set1_ps(c.scale);
    const __m256 guard = _mm256_set1_ps(c.guard), guardHi = _mm256_set1_ps(1.0f - c.guard);
    const __m256i last = _mm256_set1_epi32(int(c.bins - 1));
    uint32_t* const small = c.small.data();
    uint64_t i = 0;
    if (c.mode == BinCounter<float>::Mode::Pairs) {
        // Sixteen values a turn: value k pairs with value k + 8, pairs of even
        // lanes count in table 0, of odd lanes in table 1.
        const int table = 1 << (2 * c.shift);
        const __m128i pairShift = _mm_cvtsi32_si128(int(c.shift));
        const __m256i pairTable = _mm256_setr_epi32(0, table, 0, table, 0, table, 0, table);
        for (; i + 16 <= n; i += 16) {
            const Binned a = binEight(_mm256_loadu_ps(v + i), lo, scale, guard, guardHi, last);
            const Binned b = binEight(_mm256_loadu_ps(v + i + 8), lo, scale, guard, guardHi, last);
            const __m256 check = _mm256_or_ps(a.check, b.check);
            if (!_mm256_testz_ps(check, check)) { // rare
                c.addScalar(v, i, i + 16);
                continue;
            }
            const __m256i pair = _mm256_add_epi32(
                _mm256_or_si256(_mm256_sll_epi32(a.bin, pairShift), b.bin), pairTable);
            count4(small, _mm256_castsi256_si128(pair));
            count4(small, _mm256_extracti128_si256(pair, 1));
        }
    } else {
        // Eight values a turn, lane k counting in table k % c.tables.
        alignas(32) int32_t offsets[8];
        for (unsigned k = 0; k < 8; ++k)
            offsets[k] = c.laneTable(k);
        const __m256i laneTable = _mm256_load_si256(reinterpret_cast<const __m256i*>(offsets));
        for (; i + 8 <= n; i += 8) {
            const Binned a = binEight(_mm256_loadu_ps(v + i), lo, scale, guard, guardHi, last);
            // As addLanesAvx512: all counted, the few near an edge taken back.
            const __m256i at = _mm256_add_epi32(_mm256_min_epu32(a.bin, last), laneTable);
            count4(small, _mm256_castsi256_si128(at));
            count4(small, _mm256_extracti128_si256(at, 1));
            if (const int near = _mm256_movemask_ps(a.check)) { // rare
                alignas(32) uint32_t where[8];
                _mm256_store_si256(reinterpret_cast<__m256i*>(where), at);
                recount(c, v, i, uint32_t(near), where);
            }
        }
    }
    c.addScalar(v, i, n);
}

CKPTSCOPE_AVX512_BEGIN

// Sliced lanes near a bin edge: counted at their truncated position `at`
// like the others, taken back there, counted by binOf. A position outside
// the streams' bits sets none (NaN and ±Inf truncate to INT_MIN); one of
// `bins` or more below them (v = hi, whose position is bins + a guard) sets
// a bit SlicedBins counts but never drains: neither is taken back.
__attribute__((noinline, cold)) static void recountSliced(BinCounter<float>& c, const float* v,
                                                          uint64_t i, uint32_t lanes,
                                                          const uint32_t* at) {
    for (uint32_t m = lanes; m; m &= m - 1)
        if (const uint32_t k = at[__builtin_ctz(m)]; k < c.bins)
            --c.counts[k]; // below zero until the drain adds what SlicedBins counted
    c.addLanes(v, i, lanes);
}

// Bins of sixteen values for SlicedBins. The position is computed as in
// binEight, plus the guard: q = (v - lo) × scale + guard in one FMA, within
// 1.8e-7 × bins of binOf's position + guard. Where q's fraction is at least
// 2 × guard, binOf's position lies strictly inside the bin floor(q) (the
// guard exceeds the error), so floor(q) is binOf's bin; it is at most
// bins - 1, since v = hi gives a fraction of about one guard. Every other
// value (near an edge, v = lo, NaN, ±Inf) is counted at floor(q) too, then
// taken back and counted by binOf: the one-hot words need not wait for the
// edge test.
template <bool Tail> struct FloatBins {
    BinCounter<float>& c;
    const float* v;
    uint64_t i, n;
    __m512 lo, scale, guard, twoGuards;

    CKPTSCOPE_AVX512 __attribute__((always_inline)) inline __m512i operator()() {
        __mmask16 valid = 0xffff;
        __m512 x;
        if constexpr (Tail) {
            valid = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
            x = _mm512_maskz_loadu_ps(valid, v + i);
        } else {
            x = _mm512_loadu_ps(v + i);
        }
        const __m512 q = _mm512_fmadd_ps(_mm512_sub_ps(x, lo), scale, guard);
        // Lanes past the end: bin -1, counted nowhere.
        const __m512i bin = _mm512_mask_cvttps_epi32(_mm512_set1_epi32(-1), valid, q);
        const __m512 fraction = _mm512_reduce_ps(q, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __mmask16 near = _mm512_mask_cmp_ps_mask(valid, fraction, twoGuards, _CMP_NGE_UQ);
        if (near) { // rare
            alignas(64) uint32_t at[16];
            _mm512_store_si512(at, bin);
            recountSliced(c, v, i, near, at);
        }
        i += 16;
        return bin;
    }
};

CKPTSCOPE_AVX512 static void addAvx512(BinCounter<float>& c, const float* v, uint64_t n) {
    const __m512 lo = _mm512_set1_ps(c.lo), scale = _mm512_set1_ps(c.scale),
                 guard = _mm512_set1_ps(c.guard), twoGuards = _mm512_set1_ps(2 * c.guard);
    FloatBins<false> full{c, v, 0, n, lo, scale, guard, twoGuards};
    FloatBins<true> tail{c, v, n - n % 256, n, lo, scale, guard, twoGuards};
    sliced512::countValues(*c.sliced, n, full, tail);
}

// More bins than SlicedBins counts: FloatBins' positions, counted in the
// Lanes tables as addAvx2 counts them, lanes near an edge taken back.
struct LaneEntries {
    BinCounter<float>& c;
    const float* v;
    __m512 lo, scale, guard, twoGuards;
    __m512i laneTable, last;

    // The table entries of v[at..at + 16) into out[0..16). Every lane is
    // counted where it truncates (NaN and ±Inf, INT_MIN, as the last bin);
    // the few near an edge are taken back at once, before their increments
    // (the uint32 counter wraps below zero and comes back: modular).
    CKPTSCOPE_AVX512 __attribute__((always_inline)) inline void operator()(uint64_t at,
                                                                           uint32_t* out) const {
        const __m512 q = _mm512_fmadd_ps(_mm512_sub_ps(_mm512_loadu_ps(v + at), lo), scale, guard);
        const __m512i entry = _mm512_add_epi32(
            _mm512_min_epu32(_mm512_maskz_cvttps_epi32(0xffff, q), last), laneTable);
        _mm512_store_si512(out, entry);
        const __m512 fraction = _mm512_reduce_ps(q, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        if (const __mmask16 near = _mm512_cmp_ps_mask(fraction, twoGuards, _CMP_NGE_UQ))
            recount(c, v, at, near, out); // rare
    }
};

CKPTSCOPE_AVX512 static void addLanesAvx512(BinCounter<float>& c, const float* v, uint64_t n) {
    alignas(64) int32_t offsets[16];
    for (unsigned k = 0; k < 16; ++k)
        offsets[k] = c.laneTable(k);
    const LaneEntries entries{c,
                              v,
                              _mm512_set1_ps(c.lo),
                              _mm512_set1_ps(c.scale),
                              _mm512_set1_ps(c.guard),
                              _mm512_set1_ps(2 * c.guard),
                              _mm512_load_si512(offsets),
                              _mm512_set1_epi32(int(c.bins) - 1)};
    uint32_t* const small = c.small.data();
    // The entries pass through a ring: each turn positions sixteen values
    // kLag ahead and counts sixteen positioned before, so the vector work
    // runs beside the increments, which one store a cycle bounds
    // (BM_IncrementFloor). BM_BinCounter at 1 000 bins: a run positioned,
    // then counted, 0.39 ns a value; the ring of 16-bit entries 0.37; of
    // 32-bit ones (no narrowing) 0.35.
    constexpr uint64_t kLag = 512, kRing = 2 * kLag;
    alignas(64) uint32_t ring[kRing];
    const uint64_t whole = n & ~uint64_t(15);
    const uint64_t ahead = std::min(kLag, whole);
    for (uint64_t i = 0; i < ahead; i += 16)
        entries(i, ring + i);
    for (uint64_t i = 0; i < whole; i += 16) {
        if (i + kLag < whole)
            entries(i + kLag, ring + (i + kLag) % kRing);
        const uint32_t* const at = ring + i % kRing;
#pragma GCC unroll 16
        for (int k = 0; k < 16; ++k)
            ++small[at[k]];
    }
    c.addScalar(v, whole, n);
}

// Bins of sixteen doubles for SlicedBins, as FloatBins but in double:
// q = (v - lo) × scale + guard in one FMA is within a few units of 2^-53 ×
// bins of binOf's position + guard, far inside the guard (bins × 2^-40).
// Where q's fraction is at least 2 × guard, floor(q) is binOf's bin; other
// lanes (near an edge, the maximum, NaN, ±Inf) go to binOf by addLanes.
template <bool Tail> struct DoubleBins {
    BinCounter<double>& c;
    const double* d;
    uint64_t i, n;
    __m512d lo, scale, guard, twoGuards;

    CKPTSCOPE_AVX512 __attribute__((always_inline)) inline __mmask8 near(__m512d q,
                                                                         __mmask8 valid) {
        const __m512d fraction = _mm512_reduce_pd(q, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        return _mm512_mask_cmp_pd_mask(valid, fraction, twoGuards, _CMP_NGE_UQ);
    }

    CKPTSCOPE_AVX512 __attribute__((always_inline)) inline __m512i operator()() {
        __mmask8 valid0 = 0xff, valid1 = 0xff;
        if constexpr (Tail) {
            const uint64_t left = n - i;
            valid0 = left >= 8 ? __mmask8(0xff) : __mmask8((1u << left) - 1);
            valid1 = left >= 16  ? __mmask8(0xff)
                     : left <= 8 ? __mmask8(0)
                                 : __mmask8((1u << (left - 8)) - 1);
        }
        const __m512d q0 =
            _mm512_fmadd_pd(_mm512_sub_pd(_mm512_maskz_loadu_pd(valid0, d + i), lo), scale, guard);
        const __m512d q1 = _mm512_fmadd_pd(
            _mm512_sub_pd(_mm512_maskz_loadu_pd(valid1, d + i + 8), lo), scale, guard);
        const __mmask8 near0 = near(q0, valid0), near1 = near(q1, valid1);
        const unsigned nearAll = unsigned(near0) | unsigned(near1) << 8;
        if (nearAll) // rare
            c.addLanes(d, i, nearAll);
        i += 16;
        const __mmask8 take0 = valid0 & ~near0, take1 = valid1 & ~near1;
        // Lanes not to count: bin -1, counted nowhere. (maskz: GCC 12 warns
        // of the plain form's undefined operand)
        const __m256i none = _mm256_set1_epi32(-1);
        return _mm512_maskz_inserti64x4(
            0xff, _mm512_castsi256_si512(_mm512_mask_cvttpd_epi32(none, take0, q0)),
            _mm512_mask_cvttpd_epi32(none, take1, q1), 1);
    }
};

CKPTSCOPE_AVX512 static void addAvx512(BinCounter<double>& c, const double* d, uint64_t n) {
    const __m512d lo = _mm512_set1_pd(c.lo), scale = _mm512_set1_pd(c.scale),
                  guard = _mm512_set1_pd(c.guard), twoGuards = _mm512_set1_pd(2 * c.guard);
    DoubleBins<false> full{c, d, 0, n, lo, scale, guard, twoGuards};
    DoubleBins<true> tail{c, d, n - n % 256, n, lo, scale, guard, twoGuards};
    sliced512::countValues(*c.sliced, n, full, tail);
}

CKPTSCOPE_AVX512_END

// FloatBins with AVX2 for sliced256: eight values a vector, positioned by
// FloatPositions8 (bincounter.h). Lanes past the end (Tail) are not loaded,
// and get bin -1.
template <bool Tail> struct FloatBins8 {
    BinCounter<float>& c;
    const float* v;
    uint64_t i, n;
    const FloatPositions8& positions;

    __attribute__((target("avx2,fma"), always_inline)) inline __m256i operator()() {
        __m256 x;
        __m256i valid = _mm256_set1_epi32(-1);
        if constexpr (Tail) {
            const int left = int(std::min<uint64_t>(n - i, 8));
            valid = _mm256_cmpgt_epi32(_mm256_set1_epi32(left),
                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
            x = _mm256_maskload_ps(v + i, valid);
        } else {
            x = _mm256_loadu_ps(v + i);
        }
        int near = 0;
        __m256i bin = positions.bins(x, near);
        if constexpr (Tail) {
            near &= _mm256_movemask_ps(_mm256_castsi256_ps(valid));
            bin = _mm256_or_si256(bin, _mm256_xor_si256(valid, _mm256_set1_epi32(-1)));
        }
        if (near) { // rare
            alignas(32) uint32_t at[8];
            _mm256_store_si256(reinterpret_cast<__m256i*>(at), bin);
            recountSliced(c, v, i, uint32_t(near), at);
        }
        i += 8;
        return bin;
    }
};

__attribute__((target("avx2,fma"))) static void addSlicedAvx2(BinCounter<float>& c, const float* v,
                                                              uint64_t n) {
    const FloatPositions8 positions(c);
    FloatBins8<false> full{c, v, 0, n, positions};
    FloatBins8<true> tail{c, v, n - n % 128, n, positions};
    sliced256::countValues(*c.sliced, n, full, tail);
}

// Four doubles at a time straight into the counts; a group with a NaN, an
// infinity or a value near a bin edge goes to binOf one by one.
__attribute__((target("avx2,fma"))) static void addDirectAvx2(BinCounter<double>& c,
                                                              const double* d, uint64_t n) {
    const __m256d lo = _mm256_set1_pd(c.lo), scale = _mm256_set1_pd(c.scale);
    const __m256d guard = _mm256_set1_pd(c.guard), guardHi = _mm256_set1_pd(1.0 - c.guard),
                  bins = _mm256_set1_pd(double(c.bins));
    uint64_t* const counts = c.counts.data();
    uint64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const __m256d v = _mm256_loadu_pd(d + i);
        const __m256d pos = _mm256_mul_pd(_mm256_sub_pd(v, lo), scale);
        const __m256d inRange = _mm256_cmp_pd(pos, bins, _CMP_LT_OQ); // false for NaN
        // Out-of-range lanes are zeroed before the conversion; they are checked anyway.
        const __m128i whole = _mm256_cvttpd_epi32(_mm256_and_pd(pos, inRange));
        const __m256d frac = _mm256_sub_pd(pos, _mm256_cvtepi32_pd(whole));
        const __m256d check =
            _mm256_or_pd(_mm256_or_pd(_mm256_cmp_pd(frac, guard, _CMP_NGE_UQ),
                                      _mm256_cmp_pd(frac, guardHi, _CMP_GT_OQ)),
                         _mm256_xor_pd(inRange, _mm256_castsi256_pd(_mm256_set1_epi64x(-1))));
        if (_mm256_movemask_pd(check)) {
            c.addScalar(d, i, i + 4);
            continue;
        }
        alignas(16) int32_t at[4];
        _mm_store_si128(reinterpret_cast<__m128i*>(at), whole);
        ++counts[at[0]];
        ++counts[at[1]];
        ++counts[at[2]];
        ++counts[at[3]];
    }
    c.addScalar(d, i, n);
}

#endif // CKPTSCOPE_STATS_AVX2

template <typename T> BinCounter<T>::~BinCounter() = default;

template <>
BinCounter<float>::BinCounter(const Histogram& histogram, Kernel k, Spread spread,
                              uint64_t expected)
    : h(histogram), bins(h.counts.size()), counts(bins, 0), kernel(k) {
#ifdef CKPTSCOPE_STATS_AVX2
    const size_t n = bins;
    const double width = h.hi - h.lo;
    const double s = double(n) / width;
    // The float path needs the range and the scale as normal floats and a
    // guard well below half a bin.
    if (kernel == Kernel::Scalar || !useAvx2() || n == 0 || n > 4096 ||
        !(width <= double(std::numeric_limits<float>::max())) ||
        !(s <= double(std::numeric_limits<float>::max())) ||
        !(float(s) >= std::numeric_limits<float>::min()))
        return;
    lo = float(h.lo);
    scale = float(s);
    guard = float(double(n) * 0x1p-20);
    const bool wide = kernel == Kernel::Auto && useAvx512();
    inRange = spread == Spread::InRange;
    if (spread == Spread::InRange && n <= SlicedBins::maxBins(wide)) {
        mode = Mode::Sliced;
        sliced = std::make_unique<SlicedBins>(unsigned(n), wide);
    } else if (n <= 64) {
        mode = Mode::Pairs;
        while ((size_t(1) << shift) < n)
            ++shift;
        small.assign(size_t(2) << (2 * shift), 0);
    } else {
        mode = Mode::Lanes;
        tables = expected / 16 < n ? 1 : 8;
        small.assign(tables * n, 0);
        lanes512 = kernel == Kernel::Auto && spread == Spread::InRange && useAvx512();
    }
#else
    (void)spread;
    (void)expected;
#endif
}

template <>
BinCounter<double>::BinCounter(const Histogram& histogram, Kernel k, Spread spread, uint64_t)
    : h(histogram), bins(h.counts.size()), counts(bins, 0), lo(h.lo),
      scale(double(bins) / (h.hi - h.lo)), guard(double(bins) * 0x1p-40), kernel(k) {
#ifdef CKPTSCOPE_STATS_AVX2
    // A width beyond the double range: binOf halves every value.
    if (kernel == Kernel::Scalar || !useAvx2() || bins == 0 || !std::isfinite(h.hi - h.lo))
        return;
    inRange = spread == Spread::InRange;
    // Bit-sliced counting needs a scale that is a normal double.
    if (kernel == Kernel::Auto && spread == Spread::InRange && bins <= SlicedBins::kMaxBins &&
        useAvx512() && std::isfinite(scale) && scale >= std::numeric_limits<double>::min()) {
        mode = Mode::Sliced;
        sliced = std::make_unique<SlicedBins>(unsigned(bins), true);
    } else {
        mode = Mode::Direct;
    }
#else
    (void)spread;
#endif
}

template <> void BinCounter<float>::add(const float* v, uint64_t n) {
#ifdef CKPTSCOPE_STATS_AVX2
    if (mode == Mode::Sliced) {
        if (sliced->wide)
            addAvx512(*this, v, n);
        else
            addSlicedAvx2(*this, v, n);
        return;
    }
    if (mode != Mode::Scalar) {
        // uint32 counters: flush long before one could overflow, also
        // within a call (one table takes every value of a run in one bin).
        constexpr uint64_t kPiece = uint64_t(1) << 31;
        for (; n > kPiece; v += kPiece, n -= kPiece)
            add(v, kPiece);
        if (pending + n > kPiece)
            flush();
        pending += n;
        if (lanes512)
            addLanesAvx512(*this, v, n);
        else
            addAvx2(*this, v, n);
        return;
    }
#endif
    addScalar(v, 0, n);
}

template <> void BinCounter<double>::add(const double* v, uint64_t n) {
#ifdef CKPTSCOPE_STATS_AVX2
    if (mode == Mode::Sliced) {
        addAvx512(*this, v, n);
        return;
    }
    if (mode == Mode::Direct) {
        addDirectAvx2(*this, v, n);
        return;
    }
#endif
    addScalar(v, 0, n);
}

template struct BinCounter<float>;
template struct BinCounter<double>;

} // namespace ckptscope::stats
