// What the emulated runtime's other files (cublas.cpp) use of its core
// (runtime.cpp): the current device and its streams. Internal to the
// emulation; not a CUDA API. Thread-safe as the runtime's calls are.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

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

/// Stream capture (graphs.cpp's calls over runtime.cpp's streams): from
/// begin_capture, what would be queued on `stream` is recorded instead;
/// end_capture hands the recorded tasks over. Each task runs on whichever
/// stream's worker runs it. Codes as cudaStreamBeginCapture and
/// cudaStreamEndCapture return them (left in the thread's last error).
cudaError_t begin_capture(cudaStream_t stream);
cudaError_t end_capture(cudaStream_t stream, std::vector<std::function<void()>>& tasks);
/// Leaves `e`, when a failure, in the calling thread's last-error slot
/// (cudaGetLastError) and returns it.
cudaError_t returned(cudaError_t e);
/// Counts a graph launch on `device` (control.h's "cudaGraphLaunch").
void count_graph_launch(int device);

}  // namespace emulation
}  // namespace cuda
}  // namespace accel
