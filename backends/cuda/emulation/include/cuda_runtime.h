// The CUDA C++ kernel language, as far as the CUDA backend's kernels use it,
// for compiling those kernels as host C++ in accel's CUDA emulation.
//
// Test infrastructure (see cuda_runtime_api.h). Mapping:
//   __global__, __device__, __host__, __launch_bounds__  nothing (plain functions)
//   __forceinline__                                      inline
//   __shared__                                           static thread_local: every
//       thread of a block runs on one OS thread (as fibers), so the block's
//       threads share it and blocks on other OS threads have their own
//   threadIdx, blockIdx, blockDim, gridDim               thread_local, set by the
//       emulation before it resumes each emulated thread
//   __syncthreads()                                      a barrier of the block's
//       threads (runtime.cpp)
//   warpSize                                             thread_local, the device's
//       warp width (the "warp_size" setting of control.h: 32 by default)
//   __shfl_down_sync()                                   an exchange through the
//       block between two barriers, so every thread of the block must reach
//       it (as the kernels' uniform reductions do); reaching it from only
//       some threads fails the launch as a divergent __syncthreads does
//   kernel launches                                      emulation::launch(), reached
//       through accel::cuda::launch_kernel (kernels/launch.cuh)
#pragma once

#include "cuda_runtime_api.h"

#include <math.h>

#include <functional>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static thread_local

/// A thread or block index (x fastest).
struct uint3 {
    unsigned x, y, z;
};

extern thread_local uint3 threadIdx;  ///< index of the running thread in its block
extern thread_local uint3 blockIdx;   ///< index of the running block in the grid
extern thread_local dim3 blockDim;    ///< threads per block of the running launch
extern thread_local dim3 gridDim;     ///< blocks of the running launch
extern thread_local int warpSize;     ///< threads per warp of the running launch's device

/// Waits until every thread of the block still running has reached it.
/// Reached by only some threads of a block (a divergent barrier, undefined in
/// CUDA), it fails the launch with cudaErrorIllegalInstruction.
void __syncthreads();

/// Four floats, 16-byte aligned, as CUDA's vector type.
struct alignas(16) float4 {
    float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }

namespace accel {
namespace cuda {
namespace emulation {

/// Enqueues `body` (one emulated thread's work: the kernel called with its
/// arguments) on `stream` for every thread of `grid` × `block`. Like a
/// <<<>>> launch, it reports a failure in the calling thread's last-error
/// slot (for cudaGetLastError), and also returns it: cudaErrorInvalidConfiguration for
/// an empty or oversized grid/block, cudaErrorInvalidResourceHandle for a
/// stream of another device than the current one, the device's sticky error,
/// cudaErrorNoKernelImageForDevice under that fault, else cudaSuccess. The
/// kernel runs later on the stream's thread; blocks run one after another,
/// the threads of a block as fibers on that thread.
cudaError_t launch(dim3 grid, dim3 block, cudaStream_t stream, std::function<void()> body);

/// One shuffle of the calling emulated thread: publishes its `bytes` (at
/// most 8) at `value`, waits for the whole block, copies what thread
/// `source` (its index in the block) published into `out`, and waits again.
/// A source past the block's last thread fails the launch with
/// cudaErrorIllegalInstruction (on a GPU the value would be undefined).
void shuffle(const void* value, void* out, std::size_t bytes, unsigned source);

/// The most bytes one thread publishes in a warp_exchange.
constexpr std::size_t kMaxExchangeBytes = 64;

/// One exchange among the 32 lanes of the calling thread's warp (threads
/// 32w..32w+31 of the block, numbered x-fastest): publishes the calling
/// thread's `bytes` (at most kMaxExchangeBytes) at `value`, waits for the
/// whole block, and returns where lane 0's bytes are; lane l's follow at
/// l·kMaxExchangeBytes. They stay there until the thread's next exchange.
/// The warp-wide instructions of the PTX ISA (ldmatrix, mma) are built on
/// it (warp_mma.cpp), so, as with a shuffle, every thread of the block must
/// reach it. A block whose last warp has fewer than 32 threads fails the
/// launch with cudaErrorIllegalInstruction (undefined on a GPU).
const unsigned char* warp_exchange(const void* value, std::size_t bytes);

/// Fails the running launch with cudaErrorIllegalInstruction, the message
/// naming the block and `what` (an access a GPU would fault on or leave
/// undefined). Only from kernel code.
[[noreturn]] void illegal_in_block(const char* what);

/// cudaFuncGetAttributes of any kernel: cudaErrorNoKernelImageForDevice on a
/// device with that fault (see control.h), else fixed attributes.
cudaError_t func_attributes(cudaFuncAttributes* attr);

}  // namespace emulation
}  // namespace cuda
}  // namespace accel

/// As CUDA's: the value of lane (this lane + delta) of this thread's
/// `width`-lane segment of its warp, or its own when that lane is past the
/// segment. The mask is not checked: every lane of the warp takes part.
template <class V>
V __shfl_down_sync(unsigned /*mask*/, V value, unsigned delta, int width = warpSize) {
    static_assert(sizeof(V) <= 8, "a shuffle moves at most 8 bytes");
    const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned lane = t % static_cast<unsigned>(width);
    V out;
    accel::cuda::emulation::shuffle(&value, &out, sizeof value,
                                    lane + delta < static_cast<unsigned>(width) ? t + delta : t);
    return out;
}

/// As CUDA's template overload: attributes of `kernel` on the current device.
template <class F>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, F* /*kernel*/) {
    return accel::cuda::emulation::func_attributes(attr);
}
