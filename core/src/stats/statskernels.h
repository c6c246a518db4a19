#pragma once

#include "ckptscope/stats/tensorstats.h"
#include "common/simd.h"

#include <cstdint>
#include <cstring>
#include <limits>

// The statistics kernels: counts, extremes and shifted moments of one block
// of values, by a scalar loop or AVX2 (chosen at run time).
namespace ckptscope::stats {

// Values per work unit: 256 KiB, so a block is still in the core's L2 cache
// when it is scanned right after being read. The partition into blocks does
// not depend on the thread count, so neither does any result.
constexpr uint64_t kBlock = uint64_t(1) << 16;

// Partial results of one block. Moments are kept as sums of (x - shift) so
// that large offsets do not cancel catastrophically in double.
struct Partial {
    uint64_t n = 0, finite = 0, nan = 0, posInf = 0, negInf = 0, zeros = 0;
    float min = std::numeric_limits<float>::infinity();
    float max = -std::numeric_limits<float>::infinity();
    double shift = 0, sum = 0, sumShifted = 0, sumSqShifted = 0, sumSq = 0;
};

// Which loop scans: Auto takes the widest vector code the CPU has (AVX-512,
// else AVX2 + FMA; CKPTSCOPE_SIMD=0 or =avx2 in the environment narrows it);
// Scalar the plain loop; Avx2 no AVX-512 (tests compare them).
enum class Kernel { Auto, Scalar, Avx2 };

// Sets the sum, the L2 norm and, with a finite value, the extremes, mean and
// population standard deviation (from M2) of finite values counted in s; a
// zero extreme is +0, whichever zero the kernels met first.
void setMoments(TensorStats& s, double sum, double sumSq, double min, double max, double mean,
                double m2);

// Shifted by the block's first finite value.
Partial scanBlock(const float* v, uint64_t n, Kernel kernel = Kernel::Auto);
// Shifted by `shift`: Partials of one shift add up field by field.
Partial scanBlockShifted(const float* v, uint64_t n, double shift, Kernel kernel = Kernel::Auto);
// Adds q to p, both of one shift.
void addShifted(Partial& p, const Partial& q);

} // namespace ckptscope::stats
