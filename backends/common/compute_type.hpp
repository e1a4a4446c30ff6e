// The type a kernel computes in for each storage type, for every backend
// written in C++ (host, Kokkos, the CPU GEMM): double for double, float for
// float and the 16-bit storage types (f16, bf16: widened on load, rounded
// once on store), and the two conversions.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define ACCEL_COMPUTE_FN __host__ __device__ inline
#elif defined(__GNUC__)
#define ACCEL_COMPUTE_FN inline __attribute__((always_inline))  // inlined into multi-versioned clones
#else
#define ACCEL_COMPUTE_FN inline
#endif

namespace accel {
namespace compute {

/// ComputeOf<T>::type: float unless T is double.
template <class T>
struct ComputeOf {
    using type = float;
};
template <>
struct ComputeOf<double> {
    using type = double;
};
/// The type a kernel computes in for storage type T.
template <class T>
using Compute = typename ComputeOf<T>::type;

/// A stored value widened to the compute type (exact).
template <class T>
ACCEL_COMPUTE_FN Compute<T> to_compute(const T& v) {
    return static_cast<Compute<T>>(v);
}
/// A computed value rounded to the storage type (to nearest, ties to even).
template <class T>
ACCEL_COMPUTE_FN T from_compute(Compute<T> v) {
    return static_cast<T>(v);
}

}  // namespace compute
}  // namespace accel
