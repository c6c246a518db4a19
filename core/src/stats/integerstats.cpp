#include "stats/integerstats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace ckptscope::stats {

namespace {

__extension__ typedef unsigned __int128 u128; // GCC and Clang; -Wpedantic off
__extension__ typedef __int128 i128;

constexpr uint64_t kBlock = uint64_t(1) << 16;

// An unsigned 256-bit integer, little-endian limbs: a sum of squares of
// 64-bit values passes 128 bits, n × that and the square of a sum pass 192.
struct U256 {
    uint64_t w[4] = {};

    static U256 of(u128 x) { return {{uint64_t(x), uint64_t(x >> 64), 0, 0}}; }
    void add(const U256& b) {
        u128 carry = 0;
        for (int k = 0; k < 4; ++k) {
            const u128 t = u128(w[k]) + b.w[k] + carry;
            w[k] = uint64_t(t);
            carry = t >> 64;
        }
    }
    // this − b, for b ≤ this.
    void subtract(const U256& b) {
        uint64_t borrow = 0;
        for (int k = 0; k < 4; ++k) {
            const uint64_t x = w[k], y = b.w[k];
            w[k] = x - y - borrow;
            borrow = (x < y) || (x - y < borrow) ? 1 : 0;
        }
    }
    // this × b, both small enough that the product fits.
    U256 times(const U256& b) const {
        U256 r;
        for (int i = 0; i < 4; ++i) {
            u128 carry = 0;
            for (int j = 0; i + j < 4; ++j) {
                const u128 t = u128(w[i]) * b.w[j] + r.w[i + j] + carry;
                r.w[i + j] = uint64_t(t);
                carry = t >> 64;
            }
        }
        return r;
    }
    // The nearest double (one rounding: the top 64 bits with a sticky bit).
    double toDouble() const {
        int top = 3;
        while (top > 0 && w[top] == 0)
            --top;
        if (top == 0)
            return double(w[0]);
        const int lead = 64 - __builtin_clzll(w[top]) + 64 * top; // bit width
        const int drop = lead - 64;
        uint64_t bits = 0;
        bool sticky = false;
        for (int k = 0; k < 4; ++k) { // bits [drop, drop + 64) and whether any below is set
            const int lo = 64 * k;
            if (w[k] == 0)
                continue;
            if (lo + 64 <= drop) {
                sticky = true;
                continue;
            }
            const int s = lo - drop; // position of limb k's bit 0 in `bits`
            if (s >= 0)
                bits |= w[k] << s;
            else {
                bits |= w[k] >> -s;
                sticky = sticky || (w[k] << (64 + s)) != 0;
            }
        }
        return std::ldexp(double(bits | (sticky ? 1 : 0)), drop);
    }
};

u128 magnitude(i128 x) {
    return u128(x < 0 ? -x : x); // |sum| of up to 2^63 values < 2^127
}

// Exact sums of one tensor: Σx, Σx² and the extremes.
struct Sums {
    i128 min = std::numeric_limits<i128>::max(), max = std::numeric_limits<i128>::min();
    i128 sum = 0;
    U256 sumSq;
    uint64_t zeros = 0;
};

template <typename T> T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

// One block of n elements of type T. Up to 32 bits a block's sums fit in
// 64 and 128 bits (2^16 × 2^64: a u32's square needs all 64 bits, unsigned);
// 64-bit values go through 128/256 bits.
template <typename T> void scanBlock(const uint8_t* raw, uint64_t n, Sums& s) {
    T mn = std::numeric_limits<T>::max(), mx = std::numeric_limits<T>::lowest();
    uint64_t zeros = 0;
    if constexpr (sizeof(T) <= 4) {
        int64_t sum = 0;
        u128 sumSq = 0;
        for (uint64_t i = 0; i < n; ++i) {
            const T v = load<T>(raw + i * sizeof(T));
            mn = std::min(mn, v);
            mx = std::max(mx, v);
            zeros += v == 0;
            const int64_t x = v;
            sum += x;
            const uint64_t m = uint64_t(x < 0 ? -x : x);
            sumSq += m * m;
        }
        s.sum += sum;
        s.sumSq.add(U256::of(sumSq));
    } else {
        for (uint64_t i = 0; i < n; ++i) {
            const T v = load<T>(raw + i * sizeof(T));
            mn = std::min(mn, v);
            mx = std::max(mx, v);
            zeros += v == 0;
            s.sum += v;
            const u128 m = magnitude(v);
            s.sumSq.add(U256::of(m * m));
        }
    }
    s.zeros += zeros;
    s.min = std::min(s.min, i128(mn));
    s.max = std::max(s.max, i128(mx));
}

void scan(Dtype dtype, const uint8_t* raw, uint64_t n, Sums& s) {
    withIntegerType(dtype, [&](auto type) { scanBlock<decltype(type)>(raw, n, s); });
}

double toDouble(i128 x) {
    const double m = U256::of(magnitude(x)).toDouble();
    return x < 0 ? -m : m;
}

StoredInteger stored(i128 x) {
    return {x < 0, uint64_t(magnitude(x))};
}

} // namespace

TensorStats integerStats(Dtype dtype, uint64_t count, const RawReader& reader,
                         const StatsOptions& options, double passes) {
    TensorStats st;
    st.count = count;
    st.finite = count;
    Sums s;
    const size_t size = dtypeSize(dtype);
    std::vector<uint8_t> raw(size_t(std::min(count, kBlock)) * size);
    for (uint64_t first = 0; first < count; first += kBlock) {
        options.throwIfCancelled();
        const uint64_t n = std::min(kBlock, count - first);
        reader(first, n, raw.data());
        scan(dtype, raw.data(), n, s);
        options.report(double(first + n) / double(count) / passes);
    }
    st.zeros = s.zeros;
    st.finiteSum = toDouble(s.sum);
    st.l2 = std::sqrt(s.sumSq.toDouble());
    if (count == 0)
        return st;
    st.intMin = stored(s.min);
    st.intMax = stored(s.max);
    st.min = toDouble(s.min);
    st.max = toDouble(s.max);
    const double n = double(count);
    st.mean = st.finiteSum / n;
    // n² var = n Σx² − (Σx)² ≥ 0, exact in 256 bits.
    U256 nVar = s.sumSq.times(U256::of(count));
    const U256 sum = U256::of(magnitude(s.sum));
    nVar.subtract(sum.times(sum));
    st.std = std::sqrt(nVar.toDouble()) / n;
    return st;
}

} // namespace ckptscope::stats
