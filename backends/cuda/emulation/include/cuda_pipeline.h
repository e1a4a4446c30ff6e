// CUDA's asynchronous-copy primitives (cuda_pipeline.h: cp.async on sm_80 and
// newer), as far as the CUDA backend's kernels use them, for compiling those
// kernels as host C++ in accel's CUDA emulation (test infrastructure; see
// cuda_runtime_api.h).
//
// The emulation copies at once: __pipeline_memcpy_async is a plain copy
// (plus the zero fill), so every batch is complete when it is committed and
// __pipeline_commit / __pipeline_wait_prior have nothing to wait for. A kernel
// that reads shared memory before waiting (or before the __syncthreads after
// the wait) is thus not caught here: the order of wait and barrier is for
// review and the real device.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>

/// Copies size_and_align - zfill bytes from src_global to dst_shared and
/// zeroes the zfill bytes after them. size_and_align is 4, 8 or 16, both
/// pointers aligned to it and zfill ≤ size_and_align, as CUDA requires
/// (asserted in debug builds).
inline void __pipeline_memcpy_async(void* __restrict__ dst_shared, const void* __restrict__ src_global,
                                    std::size_t size_and_align, std::size_t zfill = 0) {
    assert(size_and_align == 4 || size_and_align == 8 || size_and_align == 16);
    assert(zfill <= size_and_align);
    assert(reinterpret_cast<std::uintptr_t>(dst_shared) % size_and_align == 0);
    assert(reinterpret_cast<std::uintptr_t>(src_global) % size_and_align == 0);
    std::memcpy(dst_shared, src_global, size_and_align - zfill);
    std::memset(static_cast<char*>(dst_shared) + (size_and_align - zfill), 0, zfill);
}

/// Ends the calling thread's current batch of asynchronous copies (nothing
/// to do: the copies are done).
inline void __pipeline_commit() {}

/// Waits until at most `prior` of the calling thread's committed batches
/// are still in flight (none ever is here).
inline void __pipeline_wait_prior(std::size_t /*prior*/) {}
