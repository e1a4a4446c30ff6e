// Kokkos backend: the spaces, view types and math every kernel uses.
#pragma once

#include <Kokkos_Core.hpp>

#include "../../common/compute_type.hpp"

#include <accel/activation_codes.h>

#include <cstdint>

namespace accel {
namespace kokkos {

/// Where every kernel runs: Kokkos' default execution space (Serial, OpenMP,
/// Threads, Cuda, HIP, SYCL ... whatever Kokkos was built with).
using ExecSpace = Kokkos::DefaultExecutionSpace;
/// The memory the default execution space works on; device memory of accel.
using MemSpace = ExecSpace::memory_space;
/// Kernel index type (signed, 64-bit: tensors may exceed 2^31 elements).
using Index = std::int64_t;
using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
/// A device array of n elements of storage type T wrapping memory accel
/// allocated (not owned). T: float, double, Eigen::half (f16) or
/// Eigen::bfloat16 (bf16) — Eigen's types, callable in device code, because
/// Kokkos' own half_t is a float where the space has no native half
/// (KOKKOS_HALF_T_IS_FLOAT: every host space in Kokkos 3), so it cannot hold
/// accel's 16-bit storage.
template <class T>
using TypedView = Kokkos::View<T*, MemSpace, Unmanaged>;
/// Read-only form of TypedView.
template <class T>
using ConstTypedView = Kokkos::View<const T*, MemSpace, Unmanaged>;
/// The float32 views of the tuned f32 kernels.
using FloatView = TypedView<float>;
using ConstView = ConstTypedView<float>;

/// The type a kernel computes in for storage type T (backends/common).
using compute::Compute;

/// Whether the default execution space runs on the host CPU (Serial, OpenMP,
/// Threads, HPX): its memory is host memory. Host spaces get kernel bodies of
/// their own (one thread per team, multi-versioned vector loops).
constexpr bool kHostSpace = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;

/// Compiles a hot host loop for several x86 levels and picks one at load
/// time (GCC function multi-versioning): AVX-512, AVX2+FMA, baseline x86-64.
/// Used only in host-space kernel bodies; other compilers and targets get
/// one plain version.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && \
    !defined(__HIPCC__) && !defined(__SYCL_DEVICE_ONLY__) && !defined(__SANITIZE_ADDRESS__)
#define ACCEL_KOKKOS_MULTIVERSION __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ACCEL_KOKKOS_MULTIVERSION
#endif

/// Kokkos' device-callable math: namespace Kokkos since 3.7,
/// Kokkos::Experimental before (3.4 to 3.6).
#if KOKKOS_VERSION >= 30700
namespace kmath = ::Kokkos;
#else
namespace kmath = ::Kokkos::Experimental;
#endif

/// Stable logistic 1/(1+e^-x): exp() only of a non-positive argument, so it
/// never overflows and keeps full relative accuracy for large negative x.
template <class F>
KOKKOS_INLINE_FUNCTION F sigmoid1(F x) {
    // One exp of -|x| and a select: no divergent branch on GPU spaces.
    const F e = kmath::exp(-kmath::fabs(x));
    const F r = F(1) / (F(1) + e);
    return x >= F(0) ? r : e * r;
}

/// The stable BCE-with-logits term max(z,0) − z·t + log1p(exp(−|z|))
/// (the formulation of PyTorch's BCEWithLogitsLoss).
template <class F>
KOKKOS_INLINE_FUNCTION F bce1(F z, F t) {
    return kmath::fmax(z, F(0)) - z * t + kmath::log1p(kmath::exp(-kmath::fabs(z)));
}


/// max(x, 0) that keeps NaN (as PyTorch): NaN <= 0 is false, so NaN passes.
template <class F>
KOKKOS_INLINE_FUNCTION F relu1(F x) {
    return x <= F(0) ? F(0) : x;
}

/// GELU x·Φ(x), Φ(x) = erfc(−x/√2)/2 (accel/elementwise_math.hpp: full
/// relative accuracy in the negative tail; −0 at −Inf, not −Inf·0).
template <class F>
KOKKOS_INLINE_FUNCTION F gelu1(F x) {
    const F p = F(0.5) * kmath::erfc(-x * F(0.70710678118654752440));
    return p == F(0) ? (x < F(0) ? -F(0) : F(0)) : x * p;
}

/// 2u = 2√(2/π)·x·(1 + 0.044715·x²), ±Inf once x³ overflows (σ saturates).
template <class F>
KOKKOS_INLINE_FUNCTION F gelu_tanh_arg2(F x) {
    return F(2 * 0.79788456080286535588) * x * (F(1) + F(0.044715) * x * x);
}

/// The tanh form x·(1 + tanh u)/2 as x·σ(2u), the same value; −0 at −Inf.
template <class F>
KOKKOS_INLINE_FUNCTION F gelu_tanh1(F x) {
    const F s = sigmoid1(gelu_tanh_arg2(x));
    return s == F(0) ? (x < F(0) ? -F(0) : F(0)) : x * s;
}

/// dy·(Φ(x) + x·φ(x)); x·φ(x) is 0 where φ underflows (x = ±Inf included).
template <class F>
KOKKOS_INLINE_FUNCTION F gelu_backward1(F dy, F x) {
    const F phi = F(0.39894228040143267794) * kmath::exp(F(-0.5) * x * x);
    const F p = F(0.5) * kmath::erfc(-x * F(0.70710678118654752440));
    return dy * (p + (phi == F(0) ? F(0) : x * phi));
}

/// dy·(s + 2x·s·σ(−2u)·u'), s = σ(2u), u' = √(2/π)(1 + 3·0.044715x²): the
/// tanh form's derivative; the second term is 0 where s·σ(−2u) underflows.
template <class F>
KOKKOS_INLINE_FUNCTION F gelu_tanh_backward1(F dy, F x) {
    const F u2 = gelu_tanh_arg2(x);
    const F s = sigmoid1(u2), ss = s * sigmoid1(-u2);
    const F du = F(0.79788456080286535588) * (F(1) + F(3 * 0.044715) * x * x);
    return dy * (s + (ss == F(0) ? F(0) : F(2) * ss * x * du));
}

/// Applies activation `act` (an ACCEL_ACTIVATION_* code: accel::Activation
/// as a plain int) to v.
template <class F>
KOKKOS_INLINE_FUNCTION F activate(F v, int act) {
    if (act == ACCEL_ACTIVATION_RELU) return relu1(v);
    if (act == ACCEL_ACTIVATION_SIGMOID) return sigmoid1(v);
    if (act == ACCEL_ACTIVATION_GELU) return gelu1(v);
    if (act == ACCEL_ACTIVATION_GELU_TANH) return gelu_tanh1(v);
    return v;
}

}  // namespace kokkos
}  // namespace accel
