#include "formats/gguf/ggmlblocks.h"
#include "formats/gguf/ggmltables.h"

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

// Q2_K: (d * scale) * (2-bit code) - dmin * min, per sub-block of 16
// (scales[16]: the scale in the low nibble, the min in the high one).
GGUF_AVX2 void q2_K(const uint8_t* src, size_t blocks, float* y) {
    for (size_t i = 0; i < blocks; ++i, src += 84) {
        const float d = f16At(src + 80), min = f16At(src + 82);
        const uint8_t* q = src + 16;
        int is = 0;
        for (int n = 0; n < 2; ++n, q += 32)
            for (int shift = 0; shift < 8; shift += 2)
                for (int half = 0; half < 32; half += 16, y += 16) {
                    const uint8_t sc = src[is++];
                    const __m256 dl = _mm256_set1_ps(d * float(sc & 0xF));
                    const __m256 ml = _mm256_set1_ps(min * float(sc >> 4));
                    for (int l = 0; l < 16; l += 8) {
                        const __m256 v = uint8s(shiftBytes(load8(q + half + l), shift, 3));
                        _mm256_storeu_ps(y + l, _mm256_sub_ps(_mm256_mul_ps(dl, v), ml));
                    }
                }
    }
}

// Q3_K: (d * scale) * (2-bit code - 4, plus 4 where hmask's bit is set),
// per sub-block of 16; the scales as the plain decoder unpacks them.
GGUF_AVX2 void q3_K(const uint8_t* src, size_t blocks, float* y) {
    const __m128i four = _mm_set1_epi8(4);
    for (size_t i = 0; i < blocks; ++i, src += 110) {
        const float dAll = f16At(src + 108);
        int scales[16];
        q3kScales(src + 96, scales);
        for (int group = 0; group < 8; ++group) { // bit `group` of hmask
            const uint8_t* q = src + 32 + 32 * (group / 4);
            const int shift = 2 * (group % 4);
            for (int half = 0; half < 32; half += 16, y += 16) {
                const __m256 dl = _mm256_set1_ps(dAll * float(scales[2 * group + half / 16]));
                for (int l = 0; l < 16; l += 8) {
                    const __m128i low = shiftBytes(load8(q + half + l), shift, 3);
                    const __m128i high = shiftBytes(load8(src + half + l), group, 1);
                    const __m128i code =
                        _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 2)), four);
                    _mm256_storeu_ps(y + l, _mm256_mul_ps(dl, int8s(code)));
                }
            }
        }
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

// The 32 codes of 16 bytes of nibbles in ggml's order: the low nibbles are
// values 0-15, the high ones values 16-31.
struct Nibbles {
    __m128i lo, hi;
};
GGUF_AVX2_INLINE Nibbles nibbles(const uint8_t* qs) {
    const __m128i raw = load16(qs);
    return {_mm_and_si128(raw, _mm_set1_epi8(0x0F)), shiftBytes(raw, 4, 0x0F)};
}
// Bits 0-15 (`from` 0) or 16-31 (`from` 2) of qh as 16 bytes of 0x10 or 0.
GGUF_AVX2_INLINE __m128i fifthBits(uint32_t qh, int from) {
    const __m128i spread = _mm_shuffle_epi8(
        _mm_set1_epi32(int(qh)),
        _mm_setr_epi8(char(from), char(from), char(from), char(from), char(from), char(from),
                      char(from), char(from), char(from + 1), char(from + 1), char(from + 1),
                      char(from + 1), char(from + 1), char(from + 1), char(from + 1),
                      char(from + 1)));
    const __m128i bit = _mm_set1_epi64x(int64_t(0x8040201008040201));
    const __m128i set = _mm_cmpeq_epi8(_mm_and_si128(spread, bit), bit);
    return _mm_and_si128(set, _mm_set1_epi8(0x10));
}
// 16 values: the int8 codes of v times d (then plus m when `Offset`).
template <bool Offset>
GGUF_AVX2_INLINE void store16(float* y, __m128i v, __m256 d, __m256 m = _mm256_setzero_ps()) {
    const __m256 a = _mm256_mul_ps(int8s(v), d);
    const __m256 b = _mm256_mul_ps(int8s(_mm_srli_si128(v, 8)), d);
    _mm256_storeu_ps(y, Offset ? _mm256_add_ps(a, m) : a);
    _mm256_storeu_ps(y + 8, Offset ? _mm256_add_ps(b, m) : b);
}

// Q4_1: nibble * d + m.
GGUF_AVX2 void q4_1(const uint8_t* src, size_t blocks, float* y) {
    for (size_t i = 0; i < blocks; ++i, src += 20, y += 32) {
        const __m256 d = _mm256_set1_ps(f16At(src)), m = _mm256_set1_ps(f16At(src + 2));
        const Nibbles q = nibbles(src + 4);
        store16<true>(y, q.lo, d, m);
        store16<true>(y + 16, q.hi, d, m);
    }
}

// Q5_0 / Q5_1 (`Offset`): (nibble | fifth bit << 4) - 16, times d; or the
// 5-bit code times d plus m.
template <bool Offset> GGUF_AVX2 void q5(const uint8_t* src, size_t blocks, float* y) {
    constexpr size_t bytes = Offset ? 24 : 22, scales = Offset ? 4 : 2;
    const __m128i bias = _mm_set1_epi8(Offset ? 0 : 16);
    for (size_t i = 0; i < blocks; ++i, src += bytes, y += 32) {
        const __m256 d = _mm256_set1_ps(f16At(src));
        const __m256 m = Offset ? _mm256_set1_ps(f16At(src + 2)) : _mm256_setzero_ps();
        const uint32_t qh = u32At(src + scales);
        const Nibbles q = nibbles(src + scales + 4);
        store16<Offset>(y, _mm_sub_epi8(_mm_or_si128(q.lo, fifthBits(qh, 0)), bias), d, m);
        store16<Offset>(y + 16, _mm_sub_epi8(_mm_or_si128(q.hi, fifthBits(qh, 2)), bias), d, m);
    }
}

// IQ4_NL and MXFP4: a 16-entry int8 table looked up by nibble, times d.
GGUF_AVX2_INLINE void lookup32(float* y, const uint8_t* qs, __m128i table, __m256 d) {
    const Nibbles q = nibbles(qs);
    store16<false>(y, _mm_shuffle_epi8(table, q.lo), d);
    store16<false>(y + 16, _mm_shuffle_epi8(table, q.hi), d);
}
GGUF_AVX2 void iq4_nl(const uint8_t* src, size_t blocks, float* y) {
    const __m128i table = load16(reinterpret_cast<const uint8_t*>(kValuesIq4nl));
    for (size_t i = 0; i < blocks; ++i, src += 18, y += 32)
        lookup32(y, src + 2, table, _mm256_set1_ps(f16At(src)));
}
GGUF_AVX2 void mxfp4(const uint8_t* src, size_t blocks, float* y) {
    const __m128i table = load16(reinterpret_cast<const uint8_t*>(kValuesFp4));
    for (size_t i = 0; i < blocks; ++i, src += 17, y += 32)
        lookup32(y, src + 1, table, _mm256_set1_ps(e8m0Half(src[0])));
}

// IQ4_XS: eight sub-blocks of 32 with 6-bit scales minus 32, dl = d * scale.
GGUF_AVX2 void iq4_xs(const uint8_t* src, size_t blocks, float* y) {
    const __m128i table = load16(reinterpret_cast<const uint8_t*>(kValuesIq4nl));
    for (size_t i = 0; i < blocks; ++i, src += 136) {
        const float d = f16At(src);
        const uint32_t scalesH = u16At(src + 2);
        for (int ib = 0; ib < 8; ++ib, y += 32) {
            const int ls =
                ((src[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | int(((scalesH >> (2 * ib)) & 3) << 4);
            lookup32(y, src + 8 + 16 * ib, table, _mm256_set1_ps(d * float(ls - 32)));
        }
    }
}

// NVFP4: four sub-blocks of 16 (8 bytes of nibbles each), each with its scale.
GGUF_AVX2 void nvfp4(const uint8_t* src, size_t blocks, float* y) {
    const __m128i table = load16(reinterpret_cast<const uint8_t*>(kValuesFp4));
    for (size_t i = 0; i < blocks; ++i, src += 36) {
        for (int s = 0; s < 4; ++s, y += 16) {
            const __m256 d = _mm256_set1_ps(ue4m3HalfOf(src[s]));
            const __m128i raw = load8(src + 4 + 8 * s);
            const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(raw, _mm_set1_epi8(0x0F)));
            const __m128i hi = _mm_shuffle_epi8(table, shiftBytes(raw, 4, 0x0F));
            _mm256_storeu_ps(y, _mm256_mul_ps(int8s(lo), d));
            _mm256_storeu_ps(y + 8, _mm256_mul_ps(int8s(hi), d));
        }
    }
}

} // namespace

bool dequantizeAvx2(uint32_t id, const uint8_t* src, size_t blocks, float* dst) {
    switch (id) {
    case 2:
        q4_0(src, blocks, dst);
        break;
    case 3:
        q4_1(src, blocks, dst);
        break;
    case 6:
        q5<false>(src, blocks, dst);
        break;
    case 7:
        q5<true>(src, blocks, dst);
        break;
    case 8:
        q8_0(src, blocks, dst);
        break;
    case 10:
        q2_K(src, blocks, dst);
        break;
    case 11:
        q3_K(src, blocks, dst);
        break;
    case 12:
        q4_K(src, blocks, dst);
        break;
    case 14:
        q6_K(src, blocks, dst);
        break;
    case 20:
        iq4_nl(src, blocks, dst);
        break;
    case 23:
        iq4_xs(src, blocks, dst);
        break;
    case 39:
        mxfp4(src, blocks, dst);
        break;
    case 40:
        nvfp4(src, blocks, dst);
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
