// What the emulated runtime's other files (cublas.cpp) use of its core
// (runtime.cpp): the current device and its streams. Internal to the
// emulation; not a CUDA API. Thread-safe as the runtime's calls are.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

namespace accel {
namespace cuda {
namespace emulation {

/// The device this host thread has current (cudaSetDevice's; 0 at first).
int current_device() noexcept;

/// cudaSuccess where `device` may be used now, else the error every runtime
/// call on it returns (no such device, no driver, a sticky error, busy).
cudaError_t device_state(int device);

/// Enqueues `task` on `stream` (nullptr: the current device's null stream)
/// where the stream belongs to `device` and the device may be used; false,
/// nothing enqueued, otherwise. The task runs on the stream's worker thread,
/// in order with the stream's kernels and copies.
bool enqueue(int device, cudaStream_t stream, std::function<void()> task);

}  // namespace emulation
}  // namespace cuda
}  // namespace accel
