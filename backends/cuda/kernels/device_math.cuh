// CUDA backend: device-side helpers shared by the kernels.
//
// Accuracy (CUDA C++ Programming Guide, "Mathematical Functions", single
// precision, built without -use_fast_math): expf max 2 ulp, log1pf max 1 ulp,
// sqrtf and x/y correctly rounded (nvcc's defaults -prec-sqrt=true,
// -prec-div=true). nvcc contracts a*b+c to an FMA (-fmad=true), so results may
// differ from the host backend in the last bit; the conformance thresholds
// (NMSE against float64) allow for that.
#pragma once

#include "kernels.hpp"

#include <cuda_runtime.h>  // the kernel language (explicit for the CUDA emulation)

#include <cstddef>

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

/// Stable logistic 1/(1+e^-x): expf only of a non-positive argument, so it
/// never overflows (expf: max 2 ulp; the division is correctly rounded).
__device__ __forceinline__ float sigmoid1(float x) {
    // One expf of −|x| (never overflows) and a select: no divergent branch in a warp.
    const float e = expf(-fabsf(x));
    const float r = 1.0f / (1.0f + e);
    return x >= 0.0f ? r : e * r;
}

/// max(x, 0) that keeps NaN (as PyTorch): NaN <= 0 is false, so NaN passes.
__device__ __forceinline__ float relu1(float x) { return x <= 0.0f ? 0.0f : x; }

/// The activation of a fused epilogue.
__device__ __forceinline__ float activate(float v, Epilogue act) {
    if (act == Epilogue::relu) return relu1(v);
    if (act == Epilogue::sigmoid) return sigmoid1(v);
    return v;
}

}  // namespace cuda
}  // namespace accel
