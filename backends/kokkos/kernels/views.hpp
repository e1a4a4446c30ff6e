// Kokkos backend: the spaces, view types and math every kernel uses.
#pragma once

#include <Kokkos_Core.hpp>

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
/// A device array of n floats wrapping memory accel allocated (not owned).
using FloatView = Kokkos::View<float*, MemSpace, Unmanaged>;
/// Read-only form of FloatView.
using ConstView = Kokkos::View<const float*, MemSpace, Unmanaged>;

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
KOKKOS_INLINE_FUNCTION float sigmoid1(float x) {
    // One exp of -|x| and a select: no divergent branch on GPU spaces.
    const float e = kmath::exp(-kmath::fabs(x));
    const float r = 1.0f / (1.0f + e);
    return x >= 0.0f ? r : e * r;
}

/// The stable BCE-with-logits term max(z,0) − z·t + log1p(exp(−|z|))
/// (the formulation of PyTorch's BCEWithLogitsLoss).
KOKKOS_INLINE_FUNCTION float bce1(float z, float t) {
    return kmath::fmax(z, 0.0f) - z * t + kmath::log1p(kmath::exp(-kmath::fabs(z)));
}

/// Activation codes passed into kernels (Activation as a plain int so that
/// device code needs no accel headers).
enum ActCode : int { act_none = 0, act_sigmoid = 1, act_relu = 2 };

/// max(x, 0) that keeps NaN (as PyTorch): NaN <= 0 is false, so NaN passes.
KOKKOS_INLINE_FUNCTION float relu1(float x) { return x <= 0.0f ? 0.0f : x; }

/// Applies activation `act` (an ActCode) to v.
KOKKOS_INLINE_FUNCTION float activate(float v, int act) {
    if (act == act_relu) return relu1(v);
    if (act == act_sigmoid) return sigmoid1(v);
    return v;
}

}  // namespace kokkos
}  // namespace accel
