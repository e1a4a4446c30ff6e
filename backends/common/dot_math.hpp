// The dot op's chunk sum for the backends whose blocks are contiguous chunks
// (host, Kokkos): one fixed order per chunk, which vectorizes because its
// accumulators are the lanes. GPU kernels take their own strided order
// (KernelArgs' DotArgs); both are fixed by n and the geometry alone.
#pragma once

#include "compute_type.hpp"  // ACCEL_COMPUTE_FN

#include <cstddef>

// The lanes as one vector (GCC leaves the 8 accumulators of float scalar
// otherwise); the pragma needs -fopenmp or -fopenmp-simd, which the CPU
// loops' files have, and is left out of GPU compilers' passes.
#if (defined(_OPENMP) || defined(ACCEL_OPENMP_SIMD)) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define ACCEL_DOT_LANES_SIMD _Pragma("omp simd")
#else
#define ACCEL_DOT_LANES_SIMD
#endif

namespace accel {
namespace dot_math {

/// Accumulators of dot_chunk: 8 (an AVX register of float, two of double).
constexpr std::size_t kLanes = 8;

/// Σ a[i]·b[i] for i in [begin, end) in Compute<T> (T: a storage type,
/// widened exactly): element i goes to accumulator (i − begin) mod kLanes,
/// each summed in order, and the accumulators are combined as
/// ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)). The accumulators are
/// independent, so the loop vectorizes without changing the order.
template <class T>
ACCEL_COMPUTE_FN compute::Compute<T> dot_chunk(const T* a, const T* b, std::size_t begin, std::size_t end) {
    using F = compute::Compute<T>;
    F s[kLanes] = {};
    std::size_t i = begin;
    for (; i + kLanes <= end; i += kLanes) {
        ACCEL_DOT_LANES_SIMD
        for (std::size_t j = 0; j < kLanes; ++j) s[j] += compute::to_compute(a[i + j]) * compute::to_compute(b[i + j]);
    }
    for (std::size_t j = 0; i + j < end; ++j) s[j] += compute::to_compute(a[i + j]) * compute::to_compute(b[i + j]);
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/// The elements of block j of `blocks` over n: [j·c, min(n, (j + 1)·c)) with
/// c = ⌈n / blocks⌉ (empty past n).
ACCEL_COMPUTE_FN std::size_t chunk_begin(std::size_t j, std::size_t n, std::size_t blocks) {
    const std::size_t c = (n + blocks - 1) / blocks, b = j * c;
    return b < n ? b : n;
}
ACCEL_COMPUTE_FN std::size_t chunk_end(std::size_t j, std::size_t n, std::size_t blocks) {
    return chunk_begin(j + 1, n, blocks);
}

}  // namespace dot_math
}  // namespace accel
