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

/// Elements per call of fma_probe_block: the chains of 16 neighbouring
/// elements are the lanes of vector FMAs (16 floats or doubles: one or two
/// AVX-512 registers per chain, 16 of 32 registers in all).
constexpr std::size_t kFmaProbeLanes = 16;

/// The peak-FMA probe (accel::Probes::fma_throughput) for elements
/// [begin, min(end, begin + kFmaProbeLanes)) in F (float or double): 8
/// chains a_j = a_j·0.9999 + 1e-4 per element, y[i] = Σ_j a_j. Plain arrays
/// the vectorizer keeps in registers (GCC spilled explicit 128-byte vector
/// types of double to the stack: 1/4 of the rate). Call it from a
/// multi-versioned function.
template <class F>
__attribute__((always_inline)) inline void fma_probe_block(F* y, std::size_t begin, std::size_t end,
                                                           std::size_t iterations) {
    constexpr std::size_t L = kFmaProbeLanes;
    F a[8][L];
    for (int j = 0; j < 8; ++j)
        for (std::size_t l = 0; l < L; ++l)
            a[j][l] = static_cast<F>(static_cast<float>(begin + l) * 1e-9f + static_cast<float>(j));
    for (std::size_t it = 0; it < iterations; ++it)
        for (int j = 0; j < 8; ++j)
            for (std::size_t l = 0; l < L; ++l) a[j][l] = a[j][l] * F(0.9999f) + F(1e-4f);
    for (std::size_t l = 0; l < L && begin + l < end; ++l) {
        F s = 0;
        for (int j = 0; j < 8; ++j) s += a[j][l];
        y[begin + l] = s;
    }
}

}  // namespace cpu
}  // namespace accel
