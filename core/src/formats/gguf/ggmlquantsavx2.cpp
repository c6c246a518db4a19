#include "formats/gguf/ggmlblocks.h"

// The common types eight values at a time. Each lane does what ggml's
// dequantize_row_* does to one value, in the same order (codes made exactly
// as ints, converted, multiplied by the scale, then the minimum subtracted;
// compiled with -ffp-contract=off), so the results are the plain decoders'
// and ggml's bit for bit (tst_ggmlquants runs both paths).

#ifdef CKPTSCOPE_STATS_AVX2

namespace ckptscope::gguf::blocks {

namespace {

#define GGUF_AVX2 __attribute__((target("avx2,fma")))
#define GGUF_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

// The low eight bytes of v as signed / unsigned ints, converted to float.
GGUF_AVX2_INLINE __m256 int8s(__m128i v) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
}
GGUF_AVX2_INLINE __m256 uint8s(__m128i v) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v));
}
GGUF_AVX2_INLINE __m128i load8(const uint8_t* p) {
    return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
}
GGUF_AVX2_INLINE __m128i load16(const uint8_t* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
// Byte-wise v >> n (n < 8), and the bits of each byte under `mask`.
GGUF_AVX2_INLINE __m128i shiftBytes(__m128i v, int n, int mask) {
    return _mm_and_si128(_mm_srli_epi16(v, n), _mm_set1_epi8(char(mask)));
}

// Q1_0: each byte's bits select d (set) or -d (clear: the sign bit flipped).
GGUF_AVX2 void q1_0(const uint8_t* src, size_t blocks, float* y) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i zero = _mm256_setzero_si256();
    for (size_t i = 0; i < blocks; ++i, src += 18, y += 128) {
        const __m256i d = _mm256_castps_si256(_mm256_set1_ps(f16At(src)));
        for (int k = 0; k < 16; ++k) {
            const __m256i set = _mm256_and_si256(_mm256_set1_epi32(src[2 + k]), bit);
            const __m256i sign = _mm256_slli_epi32(_mm256_cmpeq_epi32(set, zero), 31);
            _mm256_storeu_ps(y + 8 * k, _mm256_castsi256_ps(_mm256_xor_si256(d, sign)));
        }
    }
}

// Q4_0: (nibble - 8) * d; low nibbles are values 0-15, high ones 16-31.
GGUF_AVX2 void q4_0(const uint8_t* src, size_t blocks, float* y) {
    const __m128i eight = _mm_set1_epi8(8);
    for (size_t i = 0; i < blocks; ++i, src += 18, y += 32) {
        const __m256 d = _mm256_set1_ps(f16At(src));
        const __m128i raw = load16(src + 2);
        const __m128i lo = _mm_sub_epi8(_mm_and_si128(raw, _mm_set1_epi8(0x0F)), eight);
        const __m128i hi = _mm_sub_epi8(shiftBytes(raw, 4, 0x0F), eight);
        _mm256_storeu_ps(y, _mm256_mul_ps(int8s(lo), d));
        _mm256_storeu_ps(y + 8, _mm256_mul_ps(int8s(_mm_srli_si128(lo, 8)), d));
        _mm256_storeu_ps(y + 16, _mm256_mul_ps(int8s(hi), d));
        _mm256_storeu_ps(y + 24, _mm256_mul_ps(int8s(_mm_srli_si128(hi, 8)), d));
    }
}

// Q8_0: q * d.
GGUF_AVX2 void q8_0(const uint8_t* src, size_t blocks, float* y) {
    for (size_t i = 0; i < blocks; ++i, src += 34, y += 32) {
        const __m256 d = _mm256_set1_ps(f16At(src));
        for (int k = 0; k < 4; ++k)
            _mm256_storeu_ps(y + 8 * k, _mm256_mul_ps(int8s(load8(src + 2 + 8 * k)), d));
    }
}

// Q4_K: (d * scale) * nibble - dmin * min, per sub-block of 32.
GGUF_AVX2 void q4_K(const uint8_t* src, size_t blocks, float* y) {
    for (size_t i = 0; i < blocks; ++i, src += 144) {
        const float d = f16At(src), min = f16At(src + 2);
        const uint8_t* q = src + 16;
        for (int is = 0; is < 8; is += 2, q += 32, y += 64) {
            const ScalePair s = scalePairK4(d, min, src + 4, is);
            const __m256 d1 = _mm256_set1_ps(s.d1), m1 = _mm256_set1_ps(s.m1);
            const __m256 d2 = _mm256_set1_ps(s.d2), m2 = _mm256_set1_ps(s.m2);
            for (int l = 0; l < 32; l += 8) {
                const __m128i raw = load8(q + l);
                const __m256 lo = uint8s(_mm_and_si128(raw, _mm_set1_epi8(0x0F)));
                const __m256 hi = uint8s(shiftBytes(raw, 4, 0x0F));
                _mm256_storeu_ps(y + l, _mm256_sub_ps(_mm256_mul_ps(d1, lo), m1));
                _mm256_storeu_ps(y + 32 + l, _mm256_sub_ps(_mm256_mul_ps(d2, hi), m2));
            }
        }
    }
}

// Q6_K: (d * scale) * (6-bit code - 32); four values of each 128 per (ql, qh) pair.
GGUF_AVX2 void q6_K(const uint8_t* src, size_t blocks, float* y) {
    const __m128i thirtyTwo = _mm_set1_epi8(32);
    for (size_t i = 0; i < blocks; ++i, src += 210) {
        const float d = f16At(src + 208);
        const uint8_t* ql = src;
        const uint8_t* qh = src + 128;
        const int8_t* sc = reinterpret_cast<const int8_t*>(src + 192);
        for (int n = 0; n < 2; ++n, ql += 64, qh += 32, sc += 8, y += 128) {
            for (int l = 0; l < 32; l += 8) {
                const int is = l / 16;
                const __m128i a = load8(ql + l), b = load8(ql + 32 + l), h = load8(qh + l);
                const __m128i q[4] = {
                    _mm_or_si128(_mm_and_si128(a, _mm_set1_epi8(0x0F)),
                                 _mm_slli_epi16(shiftBytes(h, 0, 3), 4)),
                    _mm_or_si128(_mm_and_si128(b, _mm_set1_epi8(0x0F)),
                                 _mm_slli_epi16(shiftBytes(h, 2, 3), 4)),
                    _mm_or_si128(shiftBytes(a, 4, 0x0F), _mm_slli_epi16(shiftBytes(h, 4, 3), 4)),
                    _mm_or_si128(shiftBytes(b, 4, 0x0F), _mm_slli_epi16(shiftBytes(h, 6, 3), 4)),
                };
                for (int k = 0; k < 4; ++k) {
                    const __m256 s = _mm256_set1_ps(d * float(sc[is + 2 * k]));
                    const __m256 v = int8s(_mm_sub_epi8(q[k], thirtyTwo));
                    _mm256_storeu_ps(y + 32 * k + l, _mm256_mul_ps(s, v));
                }
            }
        }
    }
}

} // namespace

bool dequantizeAvx2(uint32_t id, const uint8_t* src, size_t blocks, float* dst) {
    switch (id) {
    case 2:
        q4_0(src, blocks, dst);
        break;
    case 8:
        q8_0(src, blocks, dst);
        break;
    case 12:
        q4_K(src, blocks, dst);
        break;
    case 14:
        q6_K(src, blocks, dst);
        break;
    case 41:
        q1_0(src, blocks, dst);
        break;
    default:
        return false;
    }
    return true;
}

} // namespace ckptscope::gguf::blocks

#endif // CKPTSCOPE_STATS_AVX2
