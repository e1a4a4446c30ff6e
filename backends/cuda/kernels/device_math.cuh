// CUDA backend: device-side helpers shared by the kernels: thread indexing,
// loads and stores of the storage types, the math of the compute types.
//
// Accuracy (CUDA C++ Programming Guide, "Mathematical Functions", built
// without -use_fast_math): single precision expf max 2 ulp, log1pf max 1 ulp,
// erfcf max 4 ulp; double precision exp and log1p max 1 ulp, erfc max 5 ulp; sqrt and x/y correctly rounded
// in both (nvcc's defaults -prec-sqrt=true, -prec-div=true). nvcc contracts
// a*b+c to an FMA (-fmad=true), so results may differ from the host backend
// in the last bit; the conformance thresholds (NMSE against float64) allow
// for that. f16 and bf16 values are converted exactly to float on load and
// rounded to nearest even on store (__float2half_rn, __float2bfloat16_rn),
// once per stored value.
#pragma once

#include "kernels.hpp"
#include "../../common/gelu_math.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>  // the kernel language (explicit for the CUDA emulation)

#include <cstddef>
#include <type_traits>

namespace accel {
namespace cuda {

/// Index of this block in the grid, numbered x-fastest.
__device__ __forceinline__ std::size_t flat_block_index() {
    return blockIdx.x + static_cast<std::size_t>(gridDim.x) * (blockIdx.y + static_cast<std::size_t>(gridDim.y) * blockIdx.z);
}

/// Blocks in the grid.
__device__ __forceinline__ std::size_t flat_block_count() {
    return static_cast<std::size_t>(gridDim.x) * gridDim.y * gridDim.z;
}

/// Index of this thread in its block, x-fastest.
__device__ __forceinline__ unsigned block_thread_index() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

/// Threads per block.
__device__ __forceinline__ unsigned block_thread_count() { return blockDim.x * blockDim.y * blockDim.z; }

/// Index of this thread in the flattened launch: blocks numbered x-fastest
/// over the grid, threads x-fastest within a block.
__device__ __forceinline__ std::size_t flat_thread_index() {
    return flat_block_index() * block_thread_count() + block_thread_index();
}

/// Threads in the whole launch: the stride of a grid-stride loop.
__device__ __forceinline__ std::size_t flat_thread_count() { return flat_block_count() * block_thread_count(); }

// ---- storage and compute types -------------------------------------------------

/// A stored value widened (exactly) to its compute type: float and double
/// as they are, f16 and bf16 to float.
__device__ __forceinline__ float to_compute(float v) { return v; }
__device__ __forceinline__ double to_compute(double v) { return v; }
__device__ __forceinline__ float to_compute(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_compute(__nv_bfloat16 v) { return __bfloat162float(v); }

/// A computed value as storage type T: unchanged for float and double,
/// rounded to the nearest f16 / bf16 value (ties to even; overflow gives
/// ±Inf, NaN stays NaN) for __half and __nv_bfloat16.
template <class T>
__device__ __forceinline__ T from_compute(Compute<T> v);
template <>
__device__ __forceinline__ float from_compute<float>(float v) {
    return v;
}
template <>
__device__ __forceinline__ double from_compute<double>(double v) {
    return v;
}
template <>
__device__ __forceinline__ __half from_compute<__half>(float v) {
    return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_compute<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

/// `x` (storage type S) as storage type T, rounded once to nearest even
/// (the convert op; host_ops.cpp's convert_range is the reference):
/// identical types copy; widening (f16/bf16 → f32/f64, f32 → f64) is exact;
/// f32 → f16/bf16 and f16 ↔ bf16 (through the exact float value) round with
/// __float2half_rn / __float2bfloat16_rn; f64 → f32 is the C++ conversion;
/// f64 → f16/bf16 round straight from the double (__double2half,
/// __double2bfloat16), never through a rounded float. Overflow gives ±Inf,
/// NaN stays NaN.
template <class T, class S>
__device__ __forceinline__ T convert_to(S x) {
    if constexpr (std::is_same<T, S>::value) {
        return x;
    } else if constexpr (std::is_same<S, double>::value) {
        if constexpr (std::is_same<T, __half>::value) return __double2half(x);
        else if constexpr (std::is_same<T, __nv_bfloat16>::value) return __double2bfloat16(x);
        else return static_cast<T>(x);  // float
    } else {
        const float f = to_compute(x);  // exact: S is float, __half or __nv_bfloat16
        if constexpr (std::is_same<T, double>::value) return static_cast<double>(f);
        else return from_compute<T>(f);
    }
}

/// The math the kernels use, overloaded on the compute type: the single
/// precision functions for float, the double precision ones for double
/// (accuracy in the file comment).
namespace math {
__device__ __forceinline__ float exp(float x) { return ::expf(x); }
__device__ __forceinline__ double exp(double x) { return ::exp(x); }
__device__ __forceinline__ float log1p(float x) { return ::log1pf(x); }
__device__ __forceinline__ double log1p(double x) { return ::log1p(x); }
__device__ __forceinline__ float fabs(float x) { return ::fabsf(x); }
__device__ __forceinline__ double fabs(double x) { return ::fabs(x); }
__device__ __forceinline__ float fmax(float x, float y) { return ::fmaxf(x, y); }
__device__ __forceinline__ double fmax(double x, double y) { return ::fmax(x, y); }
__device__ __forceinline__ float erfc(float x) { return ::erfcf(x); }
__device__ __forceinline__ double erfc(double x) { return ::erfc(x); }
__device__ __forceinline__ float sqrt(float x) { return ::sqrtf(x); }
__device__ __forceinline__ double sqrt(double x) { return ::sqrt(x); }
/// x·y + z rounded once.
__device__ __forceinline__ float fma(float x, float y, float z) { return ::fmaf(x, y, z); }
__device__ __forceinline__ double fma(double x, double y, double z) { return ::fma(x, y, z); }
}  // namespace math

// ---- activations (F: float or double) -------------------------------------------

/// Stable logistic 1/(1+e^-x): exp only of a non-positive argument, so it
/// never overflows (the division is correctly rounded).
template <class F>
__device__ __forceinline__ F sigmoid1(F x) {
    // One exp of −|x| (never overflows) and a select: no divergent branch in a warp.
    const F e = math::exp(-math::fabs(x));
    const F r = F(1) / (F(1) + e);
    return x >= F(0) ? r : e * r;
}

/// max(x, 0) that keeps NaN (as PyTorch): NaN <= 0 is false, so NaN passes.
template <class F>
__device__ __forceinline__ F relu1(F x) {
    return x <= F(0) ? F(0) : x;
}

/// The math of the gelu ops here (backends/common/gelu_math.hpp).
struct DeviceMath {
    template <class F>
    __device__ __forceinline__ static F erfc(F x) { return math::erfc(x); }
    template <class F>
    __device__ __forceinline__ static F exp(F x) { return math::exp(x); }
    template <class F>
    __device__ __forceinline__ static F sigmoid(F x) { return sigmoid1(x); }
};

/// The gelu activations of a fused epilogue, out of line: inlined into the
/// 128×128 product tile's unrolled epilogue, erfc's temporaries beside its
/// accumulators spill registers (ptxas, f16/bf16 on sm_100/sm_120).
#if defined(__CUDACC__) || defined(__HIPCC__)
#define ACCEL_DEVICE_NOINLINE __noinline__
#else  // the emulation compiles device code as host C++ (a macro __noinline__ would break GCC's attributes)
#define ACCEL_DEVICE_NOINLINE inline
#endif
template <class F>
__device__ ACCEL_DEVICE_NOINLINE F activate_gelu(F v, Epilogue act) {
    return act == Epilogue::gelu ? gelu_math::gelu<DeviceMath>(v) : gelu_math::gelu_tanh<DeviceMath>(v);
}

/// The activation of a fused epilogue.
template <class F>
__device__ __forceinline__ F activate(F v, Epilogue act) {
    if (act == Epilogue::relu) return relu1(v);
    if (act == Epilogue::sigmoid) return sigmoid1(v);
    if (act == Epilogue::gelu || act == Epilogue::gelu_tanh) return activate_gelu(v, act);
    return v;
}

}  // namespace cuda
}  // namespace accel
