// binQ4K (q4kbinner.h): a Q4_K tensor's histogram from its codes.
#include "stats/q4kbinner.h"

#include "stats/q4ksuperblock.h"
#include "stats/slicedbins.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

namespace ckptscope::stats {

namespace {

using namespace q4k;
#ifdef CKPTSCOPE_STATS_AVX2
using namespace sliced512; // carrySave, loadCarries, storeCarries
#endif

#ifdef CKPTSCOPE_STATS_AVX2
// The counts of the binners by code counts (Q4KCodeCounts with AVX-512,
// Q4KCodeCounts8 with AVX2): the bins, then a spare entry for the counts
// of codes whose level lies outside the histogram (0 unless such a code is
// held: then it is binned by binOf of its level); added to the counter's
// counts at the end.
class LevelCounts {
protected:
    explicit LevelCounts(BinCounter<float>& c)
        : m_h(c.h), m_out(c.counts), m_bins(uint32_t(c.bins)), m_counts(c.bins + 1, 0) {}
    ~LevelCounts() {
        for (uint32_t k = 0; k < m_bins; ++k)
            m_out[k] += m_counts[k];
    }
    void addByBinOf(float d1, float m1, int q) { m_counts[m_h.binOf(level(d1, m1, q))] += 1; }

    const Histogram& m_h;
    std::vector<uint64_t>& m_out;
    const uint32_t m_bins;
    std::vector<uint64_t> m_counts; // bins, then the spare
};
#endif

#ifdef CKPTSCOPE_STATS_AVX2
CKPTSCOPE_AVX512_BEGIN

// Pass 2 straight from the codes, for SlicedBins: per sub-block the bins of
// its sixteen levels, turned into one-hot words (bit k: bin k), then each
// value's word by a permutation on its code. Only the codes a sub-block
// holds matter: their levels lie in [lo, hi], so a bin past the counted
// ones (a level outside the range) belongs to a code that is not there.
//
// A position is computed either (fused) as A q + B, with A = d1 × scale and
// B = (−m1 − lo) × scale + guard (BinCounter's guard, by which positions
// are offset), one rounding per term: within ε (2 bins + 30 |A| + 3 |B| +
// M + 1) of binOf's (ε = 2^-24, M = max(|lo|, |hi|) × scale; the decoder's
// own rounding of a level included), below the guard of 16 bins ε when
// 30 |A| + 3 |B| + M < 12 bins, true of nearly every super-block; or (else)
// as BinCounter does, from the level the decoder computes. A position
// within the guard of an edge goes to binOf, so the bins are binOf's.
struct Q4KBinner {
    const Histogram& h;
    __m512 codes, lo, scale, guard, twoGuards;
    __m256 scale8, lo8, guard8, fusedLimit, spread8;

    CKPTSCOPE_AVX512 explicit Q4KBinner(const BinCounter<float>& c) : h(c.h) {
        codes = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        lo = _mm512_set1_ps(c.lo);
        scale = _mm512_set1_ps(c.scale);
        guard = _mm512_set1_ps(c.guard);
        twoGuards = _mm512_set1_ps(2 * c.guard);
        scale8 = _mm256_set1_ps(c.scale);
        lo8 = _mm256_set1_ps(c.lo);
        guard8 = _mm256_set1_ps(c.guard);
        fusedLimit = _mm256_set1_ps(12 * float(c.bins));
        spread8 =
            _mm256_set1_ps(std::max(std::fabs(float(h.lo)), std::fabs(float(h.hi))) * c.scale);
    }

    // Sub-block j's positions (see above); `dm`: d1 in lanes 0..7, m1 in 8..15.
    CKPTSCOPE_AVX512 __attribute__((always_inline)) inline __m512
    positions(bool fused, __m512 ab, __m512 dm, int j) const {
        const __m512i lane = _mm512_set1_epi32(j), high = _mm512_set1_epi32(j + 8);
        if (fused)
            return _mm512_fmadd_ps(codes, _mm512_permutexvar_ps(lane, ab),
                                   _mm512_permutexvar_ps(high, ab));
        const __m512 level = _mm512_sub_ps(_mm512_mul_ps(_mm512_permutexvar_ps(lane, dm), codes),
                                           _mm512_permutexvar_ps(high, dm));
        return _mm512_fmadd_ps(_mm512_sub_ps(level, lo), scale, guard);
    }

    // Lanes within the guard of an edge (q − floor(q) below twice the
    // guard, or NaN). A position below 0 truncates to a bin of no value.
    CKPTSCOPE_AVX512 __attribute__((always_inline)) inline __mmask16 nearEdge(__m512 q) const {
        return _mm512_cmp_ps_mask(_mm512_reduce_ps(q, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC),
                                  twoGuards, _CMP_NGE_UQ);
    }

    // A super-block's A and B (`ab`: lanes 0..7 and 8..15), d1 and m1
    // (`dm`), and whether its positions are fused.
    struct Scales {
        __m512 ab, dm;
        bool fused;
    };
    CKPTSCOPE_AVX512 __attribute__((always_inline)) inline Scales scales(const uint8_t* b) const {
        __m256 d1, m1;
        scalesOf(b, d1, m1);
        const __m256 a = _mm256_mul_ps(d1, scale8);
        const __m256 b0 =
            _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(_mm256_setzero_ps(), m1), lo8), scale8);
        const __m256 absMask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
        const __m256 error = _mm256_fmadd_ps(
            _mm256_set1_ps(30.0f), _mm256_and_ps(a, absMask),
            _mm256_fmadd_ps(_mm256_set1_ps(3.0f), _mm256_and_ps(b0, absMask), spread8));
        return {_mm512_insertf32x8(_mm512_castps256_ps512(a), _mm256_add_ps(b0, guard8), 1),
                _mm512_insertf32x8(_mm512_castps256_ps512(d1), m1, 1),
                _mm256_cmp_ps_mask(error, fusedLimit, _CMP_LT_OQ) == 0xFF};
    }

    // The eight sub-blocks' bin indices; false when a lane is near an edge
    // (then fix() must correct them).
    CKPTSCOPE_AVX512 __attribute__((always_inline)) inline bool bins(const Scales& s,
                                                                     __m512i* idx) const {
        __mmask16 near = 0;
        // Unrolled (GCC's -O2 kept both loops here rolled): pass 2 5-9 %
        // faster over 70 MiB of codes in memory, 32 and 64 bins.
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) {
            const __m512 q = positions(s.fused, s.ab, s.dm, j);
            near |= nearEdge(q);
            idx[j] = _mm512_cvttps_epi32(q);
        }
        return near == 0;
    }

    // The lanes near an edge by binOf of the level as the decoder computes
    // it (rare, and out of the loop: a call there would spill the counting
    // state).
    CKPTSCOPE_AVX512 __attribute__((noinline, cold)) void fix(const Scales& s, __m512i* idx) const {
        alignas(64) float dm[16];
        _mm512_store_ps(dm, s.dm);
        for (int j = 0; j < 8; ++j) {
            const __mmask16 near = nearEdge(positions(s.fused, s.ab, s.dm, j));
            if (near == 0)
                continue;
            alignas(64) int32_t out[16];
            _mm512_store_si512(out, idx[j]);
            for (unsigned m = near; m; m &= m - 1) {
                const int q = std::countr_zero(m);
                out[q] = int32_t(h.binOf(level(dm[j], dm[j + 8], q)));
            }
            idx[j] = _mm512_load_si512(out);
        }
    }

    // Super-block b's scales and its levels' bins; false when d or dmin is
    // infinite or NaN (every d1 * q - m1 is then: no finite value to count).
    CKPTSCOPE_AVX512 __attribute__((always_inline)) inline bool
    levelBins(const uint8_t* b, Scales& s, __m512i* idx) const {
        if (specialScales(b))
            return false;
        s = scales(b);
        if (!bins(s, idx))
            fix(s, idx);
        return true;
    }
};

// Counts the values of `superBlocks` super-blocks into c (its mode Sliced,
// `Streams` of 32 bins): each super-block is one batch of sixteen vectors
// of SlicedBins, added pair of sub-blocks by pair as countBatches adds. One
// with an infinite or NaN scale has no finite value (d1 or m1 is ±Inf or
// NaN, so every d1 * q - m1 is, 0 · Inf being NaN): nothing of it is
// counted.
template <unsigned Streams>
CKPTSCOPE_AVX512 void binQ4KSliced(BinCounter<float>& c, const uint8_t* raw, uint64_t superBlocks) {
    SlicedBins& sliced = *c.sliced;
    const Q4KBinner binner(c);
    const __m512i one = _mm512_set1_epi32(1);
    __m512i ones[Streams], twos[Streams], fours[Streams], eights[Streams];
    for (unsigned g = 0; g < Streams; ++g)
        loadCarries(sliced, g, ones[g], twos[g], fours[g], eights[g]);
    for (uint64_t k = 0; k < superBlocks; ++k) {
        const uint8_t* b = raw + k * kSuperBytes;
        Q4KBinner::Scales scales;
        __m512i idx[8];
        if (!binner.levelBins(b, scales, idx))
            continue;
        __m512i four[2][Streams], eight[2][Streams];
#pragma GCC unroll 4
        for (int p = 0; p < 4; ++p) {
            // Pair p: sub-blocks 2p (low nibbles) and 2p + 1 (high) of bytes
            // 32p..32p+31, sixteen bytes a vector; a permutation reads only
            // the low four bits of its index, so no mask.
            const uint8_t* qs = b + 16 + 32 * p;
            const __m512i x0 =
                _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
            const __m512i x1 =
                _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs + 16)));
            const __m512i y0 = _mm512_srli_epi32(x0, 4), y1 = _mm512_srli_epi32(x1, 4);
            for (unsigned g = 0; g < Streams; ++g) {
                // This stream's one-hot words (a shift past 31, or below 0:
                // none).
                const __m512i shift = _mm512_set1_epi32(int(32 * g));
                const __m512i low = _mm512_sllv_epi32(one, _mm512_sub_epi32(idx[2 * p], shift));
                const __m512i high =
                    _mm512_sllv_epi32(one, _mm512_sub_epi32(idx[2 * p + 1], shift));
                __m512i twoA, twoB;
                carrySave(twoA, ones[g], ones[g], _mm512_permutexvar_epi32(x0, low),
                          _mm512_permutexvar_epi32(x1, low));
                carrySave(twoB, ones[g], ones[g], _mm512_permutexvar_epi32(y0, high),
                          _mm512_permutexvar_epi32(y1, high));
                carrySave(four[p % 2][g], twos[g], twos[g], twoA, twoB);
                if (p % 2)
                    carrySave(eight[p / 2][g], fours[g], fours[g], four[0][g], four[1][g]);
            }
        }
        for (unsigned g = 0; g < Streams; ++g) {
            __m512i sixteen;
            carrySave(sixteen, eights[g], eights[g], eight[0][g], eight[1][g]);
            _mm512_store_si512(sliced.sixteens[g][sliced.held], sixteen);
        }
        if (++sliced.held == 16)
            fold(sliced);
    }
    for (unsigned g = 0; g < Streams; ++g)
        storeCarries(sliced, g, ones[g], twos[g], fours[g], eights[g]);
}

// Any number of bins: per super-block, how many codes of each sub-block
// take each of the sixteen values (a byte compare and a popcount per value
// and pair of sub-blocks), each count then added to its level's bin: 128
// additions per 256 values, no value decoded. (Runs of levels sharing a bin,
// counted at their ends, measured slower: at 65 bins a sub-block's sixteen
// levels mostly lie in sixteen bins.) A level whose bin is outside the
// histogram belongs to a code the sub-block does not hold (its level lies
// outside [min, max]): its count, 0, goes to a spare entry; should a code be
// there, it is binned by binOf of its level.
class Q4KCodeCounts : LevelCounts {
public:
    CKPTSCOPE_AVX512 explicit Q4KCodeCounts(BinCounter<float>& c) : LevelCounts(c), m_binner(c) {}

    CKPTSCOPE_AVX512 void add(const uint8_t* raw, uint64_t superBlocks) {
        const __m512i nibble = _mm512_set1_epi8(0x0f);
        const __m512i spare = _mm512_set1_epi32(int(m_bins));
        uint64_t* const counts = m_counts.data();
        for (uint64_t k = 0; k < superBlocks; ++k) {
            const uint8_t* b = raw + k * kSuperBytes;
            Q4KBinner::Scales scales;
            __m512i idx[8];
            if (!m_binner.levelBins(b, scales, idx))
                continue;
            alignas(64) uint32_t at[8][16];
            for (int j = 0; j < 8; ++j) // a bin past the last (or below 0): the spare
                _mm512_store_si512(at[j], _mm512_min_epu32(idx[j], spare));
            const __m512i z0 = _mm512_loadu_si512(b + 16), z1 = _mm512_loadu_si512(b + 80);
            const __m512i part[4] = {
                _mm512_and_si512(z0, nibble), _mm512_and_si512(_mm512_srli_epi16(z0, 4), nibble),
                _mm512_and_si512(z1, nibble), _mm512_and_si512(_mm512_srli_epi16(z1, 4), nibble)};
            // Each count is added as it is found: kept in a table first, its
            // stores and loads cost more than the counting.
            for (int q = 0; q < 16; ++q) {
                const __m512i value = _mm512_set1_epi8(char(q));
#pragma GCC unroll 4
                for (int r = 0; r < 4; ++r) {
                    const uint64_t m = _mm512_cmpeq_epi8_mask(part[r], value);
                    counts[at[kFirst[r]][q]] += uint64_t(std::popcount(uint32_t(m)));
                    counts[at[kFirst[r] + 2][q]] += uint64_t(std::popcount(m >> 32));
                }
            }
            if (counts[m_bins] != 0) [[unlikely]]
                outside(scales, idx, part);
        }
    }

private:
    // Bytes 0..63 of the codes hold sub-blocks 0 and 2 (low nibbles), 1 and
    // 3 (high); bytes 64..127 sub-blocks 4 and 6, 5 and 7: part r holds
    // sub-block kFirst[r] in its first 32 bytes and kFirst[r] + 2 after.
    static constexpr int kFirst[4] = {0, 1, 4, 5};

    // The codes of the super-block whose level's bin (idx, unclamped) is
    // outside the histogram, each by binOf of its level.
    CKPTSCOPE_AVX512 __attribute__((noinline, cold)) void
    outside(const Q4KBinner::Scales& s, const __m512i (&idx)[8], const __m512i (&part)[4]) {
        alignas(64) float dm[16];
        _mm512_store_ps(dm, s.dm);
        alignas(64) uint32_t at[8][16];
        for (int j = 0; j < 8; ++j)
            _mm512_store_si512(at[j], idx[j]);
        alignas(64) uint8_t codes[4][64];
        for (int r = 0; r < 4; ++r)
            _mm512_store_si512(codes[r], part[r]);
        for (int r = 0; r < 4; ++r)
            for (int i = 0; i < 64; ++i) {
                const int j = kFirst[r] + (i < 32 ? 0 : 2), q = codes[r][i];
                if (at[j][q] >= m_bins)
                    addByBinOf(dm[j], dm[j + 8], q);
            }
        m_counts[m_bins] = 0;
    }

    const Q4KBinner m_binner;
};

CKPTSCOPE_AVX512_END

// With AVX2 alone (a `Sliced` counter of eight lanes): per super-block the
// bins of each sub-block's sixteen levels, as the float counter would find
// them from the decoded values (the same position, one FMA; near an edge by
// binOf), packed into a 16-byte table; each sub-block's 32 codes turned
// into their bins by one vpshufb; then eight bins at a time to the
// bit-sliced counter. No value decoded, no position computed per value.
// (With AVX-512, sixteen bins a call, this measured slower than the
// permutation into one-hot words above: 187-215 ms against 145-168 ms for
// 471 MiB at 10-64 bins.)
#define Q4K_AVX2 __attribute__((target("avx2,fma,f16c")))

// The bins of a super-block's levels with AVX2, as the float counter would
// find them from the decoded values: the same positions (FloatPositions8),
// and by binOf near an edge. A level outside [lo, hi] belongs to a code its
// sub-block does not hold: near an edge it gets −1.
class Q4KLevelBins8 {
public:
    __attribute__((target("avx2"))) explicit Q4KLevelBins8(const BinCounter<float>& c)
        : m_h(c.h), m_positions(c) {}

    // Sub-block j's levels 0-7 in bin[j][0], 8-15 in bin[j][1]; d1 and m1
    // into d and m. Precondition: d and dmin finite (!specialScales(b)).
    Q4K_AVX2 __attribute__((always_inline)) inline void of(const uint8_t* b, __m256i (&bin)[8][2],
                                                           float* d, float* m) const {
        __m256 d1, m1;
        scalesOfAvx2(b, d1, m1);
        _mm256_store_ps(d, d1);
        _mm256_store_ps(m, m1);
        const __m256 low = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256 high = _mm256_setr_ps(8, 9, 10, 11, 12, 13, 14, 15);
        for (int j = 0; j < 8; ++j) {
            const __m256 dj = _mm256_set1_ps(d[j]), mj = _mm256_set1_ps(m[j]);
            int near[2];
            for (int h = 0; h < 2; ++h) // levels 0-7, 8-15, as level() computes them
                bin[j][h] =
                    m_positions.bins(_mm256_sub_ps(_mm256_mul_ps(dj, h ? high : low), mj), near[h]);
            if (near[0] | near[1]) // rare: those levels by binOf
                fix(bin[j], d[j], m[j], unsigned(near[0] | near[1] << 8));
        }
    }

private:
    // Bins of the levels flagged in `near` (bit q: level q) by binOf.
    Q4K_AVX2 __attribute__((noinline, cold)) void fix(__m256i* bin, float d1, float m1,
                                                      unsigned near) const {
        alignas(32) int32_t at[16];
        _mm256_store_si256(reinterpret_cast<__m256i*>(at), bin[0]);
        _mm256_store_si256(reinterpret_cast<__m256i*>(at + 8), bin[1]);
        for (unsigned w = near; w; w &= w - 1) {
            const int q = std::countr_zero(w);
            const float x = level(d1, m1, q);
            at[q] = x >= float(m_h.lo) && x <= float(m_h.hi) ? int32_t(m_h.binOf(x)) : -1;
        }
        bin[0] = _mm256_load_si256(reinterpret_cast<const __m256i*>(at));
        bin[1] = _mm256_load_si256(reinterpret_cast<const __m256i*>(at + 8));
    }

    const Histogram& m_h;
    const FloatPositions8 m_positions;
};

// The 32 codes of sub-block j of super-block b (low nibbles for even j).
Q4K_AVX2 __attribute__((always_inline)) inline __m256i subBlockCodes(const uint8_t* b, int j) {
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 + 32 * (j / 2)));
    return _mm256_and_si256(j % 2 ? _mm256_srli_epi16(raw, 4) : raw, _mm256_set1_epi8(0x0F));
}

class Q4KByteBins {
public:
    __attribute__((target("avx2"))) Q4KByteBins(const BinCounter<float>& c, const uint8_t* raw)
        : m_levels(c), m_raw(raw) {}

    // The bins of the next eight values (sliced256's `next`: its target,
    // without F16C, so that it inlines there).
    __attribute__((target("avx2,fma"), always_inline)) inline __m256i operator()() {
        if (m_at == kSuperValues) { // once per super-block
            prepare(m_raw + m_next * kSuperBytes);
            ++m_next;
            m_at = 0;
        }
        const __m256i bins =
            _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(m_bins + m_at)));
        m_at += 8;
        return bins;
    }

private:
    // The super-block's 256 bins into m_bins (all −1, counted nowhere, when
    // d or dmin is infinite or NaN: no value of it is finite).
    Q4K_AVX2 __attribute__((noinline)) void prepare(const uint8_t* b) {
        if (specialScales(b)) {
            std::fill(m_bins, m_bins + kSuperValues, int8_t(-1));
            return;
        }
        __m256i bin[8][2];
        alignas(32) float d[8], m[8];
        m_levels.of(b, bin, d, m);
        for (int j = 0; j < 8; ++j) {
            // int32 to int8 (saturated: a bin past 127 or below −128 stays
            // outside every stream), levels 0-15 in order.
            const __m128i table = simd::packBytes16(bin[j][0], bin[j][1]);
            _mm256_store_si256(
                reinterpret_cast<__m256i*>(m_bins + 32 * j),
                _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(table), subBlockCodes(b, j)));
        }
    }

    const Q4KLevelBins8 m_levels;
    const uint8_t* const m_raw;
    uint64_t m_next = 0;          // the super-block prepare() reads next
    unsigned m_at = kSuperValues; // the next value of m_bins to hand out
    alignas(32) int8_t m_bins[kSuperValues];
};

// Past 64 bins with AVX2 alone (a Sliced counter of three streams, or a
// Lanes counter with values in range): as Q4KCodeCounts, each sub-block's
// count of each code (a byte
// compare, a mask and a popcount) added to its level's bin, no value
// decoded.
class Q4KCodeCounts8 : LevelCounts {
public:
    __attribute__((target("avx2"))) explicit Q4KCodeCounts8(BinCounter<float>& c)
        : LevelCounts(c), m_levels(c) {}

    Q4K_AVX2 void add(const uint8_t* raw, uint64_t superBlocks) {
        uint64_t* const counts = m_counts.data();
        const __m256i spare = _mm256_set1_epi32(int(m_bins));
        for (uint64_t k = 0; k < superBlocks; ++k) {
            const uint8_t* b = raw + k * kSuperBytes;
            if (specialScales(b)) // no finite value
                continue;
            __m256i bin[8][2];
            alignas(32) float d[8], m[8];
            m_levels.of(b, bin, d, m);
            // A bin past the last (or below 0, or −1): the spare entry.
            alignas(32) uint32_t at[8][16];
            __m256i codes[8];
            for (int j = 0; j < 8; ++j) {
                for (int h = 0; h < 2; ++h)
                    _mm256_store_si256(reinterpret_cast<__m256i*>(at[j] + 8 * h),
                                       _mm256_min_epu32(bin[j][h], spare));
                codes[j] = subBlockCodes(b, j);
            }
            for (int q = 0; q < 16; ++q) {
                const __m256i value = _mm256_set1_epi8(char(q));
                for (int j = 0; j < 8; ++j)
                    counts[at[j][q]] += uint64_t(std::popcount(
                        unsigned(_mm256_movemask_epi8(_mm256_cmpeq_epi8(codes[j], value)))));
            }
            if (counts[m_bins] != 0) [[unlikely]]
                outside(b, at, d, m);
        }
    }

private:
    // The codes whose level's bin is outside the histogram, each by binOf
    // of its level (should one be held at all).
    Q4K_AVX2 __attribute__((noinline, cold)) void
    outside(const uint8_t* b, const uint32_t (&at)[8][16], const float* d, const float* m) {
        for (int j = 0; j < 8; ++j) {
            alignas(32) uint8_t codes[32];
            _mm256_store_si256(reinterpret_cast<__m256i*>(codes), subBlockCodes(b, j));
            for (const uint8_t q : codes)
                if (at[j][q] >= m_bins)
                    addByBinOf(d[j], m[j], q);
        }
        m_counts[m_bins] = 0;
    }

    const Q4KLevelBins8 m_levels;
};

// The values of `superBlocks` super-blocks into c (mode Sliced): a whole
// number of batches (256 values a super-block), so the tail functor is
// never asked.
Q4K_AVX2 void binQ4KBytes8(BinCounter<float>& c, const uint8_t* raw, uint64_t superBlocks) {
    Q4KByteBins bins(c, raw), none(c, raw);
    sliced256::countValues(*c.sliced, superBlocks * kSuperValues, bins, none);
}

#endif

} // namespace

bool canBinQ4K(const BinCounter<float>& counter) {
#ifdef CKPTSCOPE_STATS_AVX2
    // Sliced (AVX-512, or AVX2 with F16C), or AVX-512 Lanes: the counter has
    // its range and scale (past 4096 bins,
    // or a range past the float one, it counts by binOf alone, and so must
    // pass 2: by decoding).
    return (counter.mode == BinMode::Sliced && (counter.sliced->wide || simd::useF16C())) ||
           (counter.mode == BinMode::Lanes &&
            (counter.lanes512 || (counter.inRange && simd::useF16C())));
#else
    (void)counter;
    return false;
#endif
}

void binQ4K(BinCounter<float>& counter, const uint8_t* raw, uint64_t superBlocks) {
#ifdef CKPTSCOPE_STATS_AVX2
    if (!canBinQ4K(counter))
        return;
    // Up to 64 bins into SlicedBins; past that each code's count into the
    // counts themselves (also where SlicedBins counts 65-128 bins of other
    // types: the code counts measured faster for Q4_K, 238-250 ms against
    // 256-318 ms for 471 MiB at 65 and 100 bins).
    // With AVX2 alone the same split (byte tables past two streams measured
    // 304 ms at 65 bins against the code counts' 272 at 100).
    const bool narrow = counter.mode == BinMode::Sliced ? !counter.sliced->wide : !counter.lanes512;
    if (narrow && counter.mode == BinMode::Sliced && counter.sliced->streams <= 2)
        binQ4KBytes8(counter, raw, superBlocks);
    else if (narrow)
        Q4KCodeCounts8(counter).add(raw, superBlocks);
    else if (counter.mode == BinMode::Sliced && counter.sliced->streams == 1)
        binQ4KSliced<1>(counter, raw, superBlocks);
    else if (counter.mode == BinMode::Sliced && counter.sliced->streams == 2)
        binQ4KSliced<2>(counter, raw, superBlocks);
    else
        Q4KCodeCounts(counter).add(raw, superBlocks);
#else
    (void)counter, (void)raw, (void)superBlocks;
#endif
}

} // namespace ckptscope::stats
