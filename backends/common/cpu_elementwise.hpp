// Elementwise loops shared by the CPU backends (the host backend and Kokkos'
// host execution spaces): written once, inlined into each backend's
// multi-versioned functions so that every clone vectorizes them for its
// instruction set.
#pragma once

#include <cmath>
#include <cstddef>

// glibc's libmvec has SIMD versions of expf (SSE, AVX2, AVX-512). Declaring
// them lets the vectorizer call them from the sigmoid loop instead of one
// scalar expf per element; it needs OpenMP's simd pragmas (-fopenmp or
// -fopenmp-simd, the latter announced by ACCEL_OPENMP_SIMD) and
// -fno-math-errno, which the backends set for the files that include this.
#if defined(__x86_64__) && defined(__GLIBC__) && (defined(_OPENMP) || defined(ACCEL_OPENMP_SIMD))
extern "C" {
#pragma omp declare simd notinbranch
float expf(float);
}
#endif

namespace accel {
namespace cpu {

/// Stable logistic: e = exp(−|x|) never overflows; σ(x) = 1/(1+e) for x ≥ 0
/// and e/(1+e) otherwise. One exp, one division and a select, no branch.
inline float sigmoid1(float x) {
    const float e = expf(-std::fabs(x));
    const float r = 1.0f / (1.0f + e);
    return x >= 0.0f ? r : e * r;
}

/// y[i] = sigmoid1(x[i]) for i in [b, e) (float32; x may equal y). Call it
/// from a multi-versioned function: forced inline, it vectorizes there.
__attribute__((always_inline)) inline void sigmoid_range(const float* x, float* y, std::size_t b, std::size_t e) {
#pragma omp simd
    for (std::size_t i = b; i < e; ++i) y[i] = sigmoid1(x[i]);
}

}  // namespace cpu
}  // namespace accel
