// Kokkos backend: the spaces, view types and math every kernel uses.
#pragma once

#include <Kokkos_Core.hpp>

#include "../../common/compute_type.hpp"
#include "../../common/gelu_math.hpp"

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

/// The math of the gelu ops here (backends/common/gelu_math.hpp).
struct KokkosMath {
    template <class F>
    KOKKOS_INLINE_FUNCTION static F erfc(F x) { return kmath::erfc(x); }
    template <class F>
    KOKKOS_INLINE_FUNCTION static F exp(F x) { return kmath::exp(x); }
    template <class F>
    KOKKOS_INLINE_FUNCTION static F sigmoid(F x) { return sigmoid1(x); }
};

/// Applies activation `act` (an ACCEL_ACTIVATION_* code: accel::Activation
/// as a plain int) to v.
template <class F>
KOKKOS_INLINE_FUNCTION F activate(F v, int act) {
    if (act == ACCEL_ACTIVATION_RELU) return relu1(v);
    if (act == ACCEL_ACTIVATION_SIGMOID) return sigmoid1(v);
    if (act == ACCEL_ACTIVATION_GELU) return gelu_math::gelu<KokkosMath>(v);
    if (act == ACCEL_ACTIVATION_GELU_TANH) return gelu_math::gelu_tanh<KokkosMath>(v);
    return v;
}

}  // namespace kokkos
}  // namespace accel
