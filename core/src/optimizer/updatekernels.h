#pragma once

#include <cstddef>

// The sums one pass over a parameter's moments (and weight) gathers for its
// update figures: plain loops, and AVX2 + FMA ones chosen at run time
// (simd::useAvx2), both in double so they agree to rounding.
namespace ckptscope::optimizer {

struct UpdateSums {
    double u2 = 0;   // Σ u²
    double umax = 0; // max |u| (NaN once a u is NaN)
    double w2 = 0;   // Σ w²
    double m2 = 0;   // Σ first moment²
    double v = 0;    // Σ second moment
    bool nan = false;
};

// Adam: u = a · m / (√(b · v) + eps), with a = lr / (1 − β1^step) and
// b = 1 / (1 − β2^step). w may be null (no weight).
void addAdamSums(const float* m, const float* v, const float* w, size_t n, double a, double b,
                 double eps, UpdateSums& sums);
// SGD with momentum: u = lr · m.
void addSgdSums(const float* m, const float* w, size_t n, double lr, UpdateSums& sums);

} // namespace ckptscope::optimizer
