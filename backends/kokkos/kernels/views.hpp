// Kokkos backend: the spaces, view types and math every kernel uses.
#pragma once

#include <Kokkos_Core.hpp>

#include "host_loops.hpp"  // Index

#include "../../common/compute_type.hpp"
#include "../../common/gelu_math.hpp"

#include <accel/activation_codes.h>

#include <cstdint>
#include <type_traits>

namespace accel {
namespace kokkos {

/// The execution spaces a device can run on: every space the linked Kokkos
/// enabled that accel knows (KOKKOS_ENABLE_<SPACE>), plus the default one.
/// ACCEL_KOKKOS_FOR_EACH_SPACE(X) expands X(space type) once for each known
/// enabled space, in the order devices are listed after the default space
/// (kokkos_backend.cpp); the .cpp files instantiate their templates with it.
#if defined(KOKKOS_ENABLE_HIP)
/// The HIP execution space: Kokkos::HIP since Kokkos 4.0, Kokkos::Experimental::HIP before.
#if KOKKOS_VERSION >= 40000
using HipSpace = Kokkos::HIP;
#else
using HipSpace = Kokkos::Experimental::HIP;
#endif
#define ACCEL_KOKKOS_IF_HIP(X) X(::accel::kokkos::HipSpace)
#else
#define ACCEL_KOKKOS_IF_HIP(X)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
#define ACCEL_KOKKOS_IF_CUDA(X) X(::Kokkos::Cuda)
#else
#define ACCEL_KOKKOS_IF_CUDA(X)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
#define ACCEL_KOKKOS_IF_OPENMP(X) X(::Kokkos::OpenMP)
#else
#define ACCEL_KOKKOS_IF_OPENMP(X)
#endif
#if defined(KOKKOS_ENABLE_THREADS)
#define ACCEL_KOKKOS_IF_THREADS(X) X(::Kokkos::Threads)
#else
#define ACCEL_KOKKOS_IF_THREADS(X)
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
#define ACCEL_KOKKOS_IF_SERIAL(X) X(::Kokkos::Serial)
#else
#define ACCEL_KOKKOS_IF_SERIAL(X)
#endif
#define ACCEL_KOKKOS_FOR_EACH_SPACE(X) \
    ACCEL_KOKKOS_IF_CUDA(X) ACCEL_KOKKOS_IF_HIP(X) ACCEL_KOKKOS_IF_OPENMP(X) ACCEL_KOKKOS_IF_THREADS(X) \
        ACCEL_KOKKOS_IF_SERIAL(X)

/// kokkos:0's space: Kokkos' default execution space.
using DefaultSpace = Kokkos::DefaultExecutionSpace;

/// Whether the default space is one of ACCEL_KOKKOS_FOR_EACH_SPACE's.
#define ACCEL_KOKKOS_OR_IS_DEFAULT(S) || std::is_same<S, DefaultSpace>::value
constexpr bool kDefaultSpaceKnown = false ACCEL_KOKKOS_FOR_EACH_SPACE(ACCEL_KOKKOS_OR_IS_DEFAULT);
#undef ACCEL_KOKKOS_OR_IS_DEFAULT

/// Whether execution space `Space` runs on the host CPU (Serial, OpenMP,
/// Threads): it reaches host memory and its memory is host memory (a GPU
/// space over unified memory, CudaUVMSpace, is not one). Host spaces get
/// kernel bodies of their own (one thread per team, multi-versioned vector
/// loops).
template <class Space>
constexpr bool is_host_space = Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible &&
                               Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;

using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
/// An array of n elements of storage type T wrapping memory accel allocated
/// (not owned) in the memory space of the device's execution space; the
/// view's own space is Kokkos::AnonymousSpace, which any execution space may
/// access, so one functor serves every space. T: float, double, Eigen::half
/// (f16) or Eigen::bfloat16 (bf16) — Eigen's types, callable in device code,
/// because Kokkos' own half_t is a float where the space has no native half
/// (KOKKOS_HALF_T_IS_FLOAT: every host space in Kokkos 3), so it cannot hold
/// accel's 16-bit storage.
template <class T>
using TypedView = Kokkos::View<T*, Kokkos::AnonymousSpace, Unmanaged>;
/// Read-only form of TypedView.
template <class T>
using ConstTypedView = Kokkos::View<const T*, Kokkos::AnonymousSpace, Unmanaged>;
/// The float32 views of the tuned f32 kernels.
using FloatView = TypedView<float>;
using ConstView = ConstTypedView<float>;

/// The type a kernel computes in for storage type T (backends/common).
using compute::Compute;


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
