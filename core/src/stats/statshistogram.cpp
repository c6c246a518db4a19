#include "stats/statshistogram.h"
#include "stats/slicedbins.h"
#include "stats/statssimd.h"

#include <cmath>
#include <limits>

#ifdef CKPTSCOPE_STATS_AVX2
#include <immintrin.h>
#endif

namespace ckptscope::stats {

void BinCounter::flush() {
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
        for (size_t t = 0; t < 8; ++t)
            for (size_t k = 0; k < bins; ++k) {
                counts[k] += small[t * bins + k];
                small[t * bins + k] = 0;
            }
        small[8 * bins] = 0; // the spare entry: counted by binOf instead
    }
    pending = 0;
}

void BinCounter::mergeInto(std::vector<uint64_t>& out) {
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

__attribute__((target("avx2,fma"))) static void addAvx2(BinCounter& c, const float* v, uint64_t n) {
    const __m256 lo = _mm256_set1_ps(c.lo), scale = _mm256_set1_ps(c.scale);
    const __m256 guard = _mm256_set1_ps(c.guard), guardHi = _mm256_set1_ps(1.0f - c.guard);
    const __m256i last = _mm256_set1_epi32(int(c.bins - 1));
    uint32_t* const small = c.small.data();
    uint64_t i = 0;
    if (c.mode == BinCounter::Mode::Pairs) {
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
        // Eight values a turn, lane k counting in table k.
        const int b = int(c.bins);
        const __m256i laneTable = _mm256_setr_epi32(0, b, 2 * b, 3 * b, 4 * b, 5 * b, 6 * b, 7 * b);
        for (; i + 8 <= n; i += 8) {
            const Binned a = binEight(_mm256_loadu_ps(v + i), lo, scale, guard, guardHi, last);
            if (!_mm256_testz_ps(a.check, a.check)) { // rare
                c.addScalar(v, i, i + 8);
                continue;
            }
            const __m256i at = _mm256_add_epi32(a.bin, laneTable);
            count4(small, _mm256_castsi256_si128(at));
            count4(small, _mm256_extracti128_si256(at, 1));
        }
    }
    c.addScalar(v, i, n);
}

CKPTSCOPE_AVX512_BEGIN

// Bins of sixteen values for SlicedBins. The position is computed as in
// binEight, plus the guard: q = (v - lo) × scale + guard in one FMA, within
// 1.8e-7 × bins of binOf's position + guard. Where q's fraction is at least
// 2 × guard, binOf's position lies strictly inside the bin floor(q) (the
// guard exceeds the error), so floor(q) is binOf's bin; it is at most
// bins - 1, since v = hi gives a fraction of about one guard. Every other
// value (near an edge, v = lo, NaN, ±Inf) goes to binOf by addLanes.
template <bool Tail> struct FloatBins {
    BinCounter& c;
    const float* v;
    uint64_t i, n;
    __m512 lo, scale, guard, twoGuards;

    CKPTSCOPE_AVX512 __attribute__((always_inline)) inline SixteenBins operator()() {
        __mmask16 valid = 0xffff;
        __m512 x;
        if constexpr (Tail) {
            valid = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
            x = _mm512_maskz_loadu_ps(valid, v + i);
        } else {
            x = _mm512_loadu_ps(v + i);
        }
        const __m512 q = _mm512_fmadd_ps(_mm512_sub_ps(x, lo), scale, guard);
        const __m512 fraction = _mm512_reduce_ps(q, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __mmask16 near = _mm512_mask_cmp_ps_mask(valid, fraction, twoGuards, _CMP_NGE_UQ);
        if (near) // rare
            c.addLanes(v, i, near);
        i += 16;
        const __mmask16 take = valid & ~near;
        // (maskz: GCC 12 warns of the unmasked form's undefined operand)
        return {_mm512_maskz_cvttps_epi32(take, q), take};
    }
};

CKPTSCOPE_AVX512 static void addAvx512(BinCounter& c, const float* v, uint64_t n) {
    const __m512 lo = _mm512_set1_ps(c.lo), scale = _mm512_set1_ps(c.scale),
                 guard = _mm512_set1_ps(c.guard), twoGuards = _mm512_set1_ps(2 * c.guard);
    FloatBins<false> full{c, v, 0, n, lo, scale, guard, twoGuards};
    FloatBins<true> tail{c, v, n - n % 256, n, lo, scale, guard, twoGuards};
    countValues(*c.sliced, n, full, tail);
}

// More bins than SlicedBins counts: FloatBins' bins, counted in eight
// tables as addAvx2's Lanes mode; lanes it hands to binOf count in the
// spare entry after the tables.
CKPTSCOPE_AVX512 static void addLanesAvx512(BinCounter& c, const float* v, uint64_t n) {
    const __m512 lo = _mm512_set1_ps(c.lo), scale = _mm512_set1_ps(c.scale),
                 guard = _mm512_set1_ps(c.guard), twoGuards = _mm512_set1_ps(2 * c.guard);
    const int b = int(c.bins);
    const __m512i laneTable = _mm512_setr_epi32(0, b, 2 * b, 3 * b, 4 * b, 5 * b, 6 * b, 7 * b, 0,
                                                b, 2 * b, 3 * b, 4 * b, 5 * b, 6 * b, 7 * b);
    const __m512i spare = _mm512_set1_epi32(8 * b);
    uint32_t* const small = c.small.data();
    FloatBins<false> next{c, v, 0, n, lo, scale, guard, twoGuards};
    alignas(64) uint32_t at[16];
    for (; next.i + 16 <= n;) {
        const SixteenBins x = next();
        _mm512_store_si512(at, _mm512_mask_add_epi32(spare, x.take, x.bin, laneTable));
        for (int k = 0; k < 16; ++k)
            ++small[at[k]];
    }
    c.addScalar(v, next.i, n);
}

CKPTSCOPE_AVX512_END

#endif // CKPTSCOPE_STATS_AVX2

BinCounter::~BinCounter() = default;

BinCounter::BinCounter(const Histogram& histogram, size_t n, Kernel k)
    : h(histogram), bins(n), counts(n, 0), kernel(k) {
#ifdef CKPTSCOPE_STATS_AVX2
    const double width = h.hi - h.lo;
    const double s = double(n) / width;
    // The float path needs the range and the scale as normal floats and a
    // guard well below half a bin.
    if (kernel == Kernel::Scalar || !useAvx2() || n > 4096 ||
        !(width <= double(std::numeric_limits<float>::max())) ||
        !(s <= double(std::numeric_limits<float>::max())) ||
        !(float(s) >= std::numeric_limits<float>::min()))
        return;
    lo = float(h.lo);
    scale = float(s);
    guard = float(double(n) * 0x1p-20);
    if (kernel == Kernel::Auto && n <= SlicedBins::kMaxBins && useAvx512()) {
        mode = Mode::Sliced;
        sliced = std::make_unique<SlicedBins>(unsigned(n));
    } else if (n <= 64) {
        mode = Mode::Pairs;
        while ((size_t(1) << shift) < n)
            ++shift;
        small.assign(size_t(2) << (2 * shift), 0);
    } else {
        mode = Mode::Lanes;
        small.assign(8 * n + 1, 0); // + the spare entry of addLanesAvx512
    }
#else
    (void)kernel;
#endif
}

void BinCounter::add(const float* v, uint64_t n) {
#ifdef CKPTSCOPE_STATS_AVX2
    if (mode == Mode::Sliced) {
        addAvx512(*this, v, n);
        return;
    }
    if (mode != Mode::Scalar) {
        // uint32 counters: flush long before one could overflow.
        if (pending + n > (uint64_t(1) << 31))
            flush();
        pending += n;
        if (mode == Mode::Lanes && kernel == Kernel::Auto && useAvx512())
            addLanesAvx512(*this, v, n);
        else
            addAvx2(*this, v, n);
        return;
    }
#endif
    addScalar(v, 0, n);
}

} // namespace ckptscope::stats
