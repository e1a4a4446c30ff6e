// HIP backend: the CUDA backend's sources (backends/cuda) compiled as HIP.
//
// The CUDA backend is written in the CUDA runtime API and kernel language;
// HIP mirrors both name for name. This header, reached through the shim
// headers of cuda_names/ (cuda_runtime.h, cuda_fp16.h, ... each include it in
// place of the CUDA toolkit's header of that name), includes HIP's headers
// and maps every CUDA name those sources use to its HIP twin, so that one
// source is compiled by nvcc for NVIDIA GPUs and by hipcc for AMD GPUs (and,
// in the tests, as host C++ on accel's emulated HIP runtime, emulation/).
// A CUDA name used in backends/cuda and missing here fails the HIP build.
//
// Where HIP has no twin (cp.async, a double → f16/bf16 conversion) the gap is
// filled below and says so. What differs beyond names (sticky error codes,
// device facts, pointer attributes, the vendor BLAS) is in hip_platform.cpp
// and hip_vendor.cpp, the twins of the CUDA backend's platform and vendor
// files.
//
// Verification status: compiled by hipcc 5.2.3 (Debian 12) for gfx908,
// gfx90a and gfx1030, device and host code free of warnings under -Werror;
// without an AMD GPU the plugin loads and reports hipErrorNoDevice (100).
// The same sources pass the conformance, training and reliability suites on
// the emulated HIP runtime at wavefront 64 and 32 (tests *.hip-emulated*).
// Not yet run on an AMD GPU.
#pragma once

#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstring>
#include <new>

#define ACCEL_HIP 1

// ---- the backend's identity (cuda_device.hpp has the CUDA values) ---------------
#define ACCEL_GPU_BACKEND "hip"
#define ACCEL_GPU_RUNTIME "HIP"
#define ACCEL_GPU_ARCHS_VARIABLE "ACCEL_HIP_ARCHS"
#define ACCEL_GPU_AUTO_RANK 35  // auto: after a CUDA GPU, before OpenCL

// ---- types ---------------------------------------------------------------------
#define cudaError_t hipError_t
#define cudaStream_t hipStream_t
#define cudaEvent_t hipEvent_t
#define cudaDeviceProp hipDeviceProp_t
#define cudaDeviceAttr hipDeviceAttribute_t
#define cudaFuncAttributes hipFuncAttributes
#define cudaPointerAttributes hipPointerAttribute_t
#define CUDART_CB

// ---- error codes ---------------------------------------------------------------
#define cudaSuccess hipSuccess
#define cudaErrorInvalidValue hipErrorInvalidValue
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaErrorNotReady hipErrorNotReady
#define cudaErrorInsufficientDriver hipErrorInsufficientDriver
#define cudaErrorNoKernelImageForDevice hipErrorNoBinaryForGpu
#define cudaErrorCudartUnloading hipErrorDeinitialized
#define cudaErrorNotSupported hipErrorNotSupported
// A device that another process holds: CUDA's exclusive-process refusal; the
// HIP runtime's nearest code is "context already in use".
#define cudaErrorDevicesUnavailable hipErrorContextAlreadyInUse

// ---- enumerators and flags ------------------------------------------------------
#undef cudaStreamNonBlocking  // the emulated runtime's CUDA headers define these too
#undef cudaEventDisableTiming
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemoryTypeHost hipMemoryTypeHost
#define cudaDevAttrComputeMode hipDeviceAttributeComputeMode
#define cudaDevAttrClockRate hipDeviceAttributeClockRate
#define cudaDevAttrMemoryClockRate hipDeviceAttributeMemoryClockRate
#define cudaDevAttrWarpSize hipDeviceAttributeWarpSize
#define cudaComputeModeDefault hipComputeModeDefault
#define cudaComputeModeProhibited hipComputeModeProhibited
#define cudaComputeModeExclusiveProcess hipComputeModeExclusiveProcess

// ---- runtime functions ------------------------------------------------------------
#define cudaGetErrorName hipGetErrorName
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDevice hipGetDevice
#define cudaSetDevice hipSetDevice
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDriverGetVersion hipDriverGetVersion
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaMallocHost hipHostMalloc
#define cudaFreeHost hipHostFree
#define cudaMemGetInfo hipMemGetInfo
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaPointerGetAttributes hipPointerGetAttributes
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamDestroy hipStreamDestroy
#define cudaEventCreate hipEventCreate
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventRecord hipEventRecord
#define cudaEventQuery hipEventQuery
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventDestroy hipEventDestroy
#define cudaGraph_t hipGraph_t
#define cudaGraphExec_t hipGraphExec_t
#define cudaStreamCaptureModeRelaxed hipStreamCaptureModeRelaxed
#define cudaStreamBeginCapture hipStreamBeginCapture
#define cudaStreamEndCapture hipStreamEndCapture
#define cudaGraphInstantiateWithFlags hipGraphInstantiateWithFlags
#define cudaGraphLaunch hipGraphLaunch
#define cudaGraphExecDestroy hipGraphExecDestroy
#define cudaGraphDestroy hipGraphDestroy
// HIP takes the kernel as const void*.
#define cudaFuncGetAttributes(attr, ...) hipFuncGetAttributes((attr), reinterpret_cast<const void*>(__VA_ARGS__))

// cudaLaunchHostFunc: hipLaunchHostFunc is declared by HIP 5 but not every
// libamdhip64 exports it (Debian's 5.2 does not), so host functions go
// through hipStreamAddCallback, which every HIP has: a trampoline calls
// fn(data) from the runtime's callback thread after the stream's earlier work.
namespace accel {
namespace hip_compat {
struct HostCall {
    void (*fn)(void*);
    void* data;
};
inline void run_host_call(hipStream_t, hipError_t, void* p) {
    const HostCall call = *static_cast<HostCall*>(p);
    delete static_cast<HostCall*>(p);
    call.fn(call.data);
}
/// Enqueues fn(data) on `stream`; hipErrorOutOfMemory when the trampoline
/// cannot be allocated. Never throws.
inline hipError_t launch_host_func(hipStream_t stream, void (*fn)(void*), void* data) noexcept {
    auto* call = new (std::nothrow) HostCall{fn, data};
    if (!call) return hipErrorOutOfMemory;
    const hipError_t e = hipStreamAddCallback(stream, run_host_call, call, 0);
    if (e != hipSuccess) delete call;
    return e;
}
}  // namespace hip_compat
}  // namespace accel
#define cudaLaunchHostFunc ::accel::hip_compat::launch_host_func

// ---- kernel language --------------------------------------------------------------
// HIP's shuffles take no mask (a wavefront runs in lockstep on AMD GPUs).
#define __shfl_down_sync(mask, value, delta) __shfl_down((value), (delta))

// f16: HIP's __half is CUDA's. bf16: HIP 5's hip_bfloat16 (round to nearest
// even from float, NaN kept) stands for CUDA's __nv_bfloat16.
#define __nv_bfloat16 hip_bfloat16

// The device-side conversions: for hipcc's device and host passes. (The
// plugin's plain C++ files only name the types; the emulated HIP runtime
// takes these from accel's CUDA emulation.)
#ifdef __HIPCC__
namespace accel {
namespace hip_compat {
/// The float nearest to d, rounded to odd when inexact (Boldo and Melquiond's
/// rounding to odd; accel/round_to_odd.hpp explains why a double rounded so to
/// float and then to nearest even in f16 or bf16 is rounded once): the float
/// toward zero, plus one ulp when that one is even. NaN stays NaN, ±Inf ±Inf,
/// beyond the float range ±FLT_MAX (odd). Bit operations only, so that it
/// runs in device code.
__host__ __device__ inline float round_to_odd_float(double d) {
    const float f = static_cast<float>(d);
    if (d != d || static_cast<double>(f) == d) return f;
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    const double af = f < 0 ? -static_cast<double>(f) : static_cast<double>(f), ad = d < 0 ? -d : d;
    if (af > ad) --bits;  // f was rounded away from zero: step back (Inf steps back to FLT_MAX)
    bits |= 1u;           // the odd one of the two floats around d
    float r;
    std::memcpy(&r, &bits, sizeof r);
    return r;
}
}  // namespace hip_compat
}  // namespace accel

/// CUDA's __double2half / __double2bfloat16: d rounded once to nearest even.
__host__ __device__ inline __half __double2half(double d) {
    return __float2half_rn(accel::hip_compat::round_to_odd_float(d));
}
__host__ __device__ inline hip_bfloat16 __double2bfloat16(double d) {
    return hip_bfloat16(accel::hip_compat::round_to_odd_float(d));
}
__host__ __device__ inline float __bfloat162float(hip_bfloat16 v) { return static_cast<float>(v); }
__host__ __device__ inline hip_bfloat16 __float2bfloat16_rn(float v) { return hip_bfloat16(v); }

#endif  // __HIPCC__

// cp.async (cuda_pipeline.h) has no AMD twin: matmul.cu takes its register
// path on HIP (ACCEL_CUDA_MATMUL_ASYNC 0); these only let it compile.
#if defined(__HIPCC__) || defined(ACCEL_CUDA_EMULATION)
__device__ inline void __pipeline_memcpy_async(void* dst, const void* src, std::size_t bytes) {
    std::memcpy(dst, src, bytes);
}
__device__ inline void __pipeline_commit() {}
__device__ inline void __pipeline_wait_prior(std::size_t) {}
#endif
