// accel/interop/cuda.hpp — accel's CUDA objects for a program that also
// calls CUDA itself (its own kernels, cuBLAS, PyTorch), and accel tensors and
// streams over the program's own (zero copy). Include it only in a program
// that uses CUDA (it includes <cuda_runtime_api.h>; libaccel itself links no
// CUDA). Every function throws InvalidArgument for a device, stream or tensor
// of another backend, naming it: a handle of one runtime is never read as
// another's.
//
// Ordering: work a program enqueues on a stream and accel's work on a stream
// over it (stream_over) run in that stream's order; across different streams,
// synchronize (Stream::synchronize, cudaStreamSynchronize) or use events.
#pragma once

#include <cuda_runtime_api.h>

#include <accel/interop/detail/gpu_runtime.hpp>

namespace accel {
namespace interop {
namespace cuda {

/// The CUDA device ordinal of `d` (cudaSetDevice's; after
/// CUDA_VISIBLE_DEVICES). Thread-safe.
inline int ordinal(Device& d) { return detail::gpu_ordinal(d, "cuda"); }

/// The primary context of `d` (a CUcontext, for the driver API), not
/// retained. Throws Unsupported where the runtime gives no driver entry
/// point. Thread-safe.
inline void* context(Device& d) { return reinterpret_cast<void*>(d.native_object("cuda", "context")); }

/// The cudaStream_t behind `s` (a non-blocking stream; valid while `s`
/// lives). Enqueue on it to run in order with accel's work there.
inline cudaStream_t stream(Stream& s) { return detail::gpu_stream<cudaStream_t>(s, "cuda"); }

/// The device pointer of `t`'s first element (valid while `t` lives).
/// Throws InvalidArgument for an empty tensor.
template <class T = void>
T* data(const Tensor& t) {
    return static_cast<T*>(detail::gpu_data(t, "cuda"));
}

/// A tensor of `shape` and `dtype` over device memory at `data` that the
/// program owns (cudaMalloc'd or managed, on `d`'s device: its first and
/// last byte are checked), without a copy: accel's ops read and write it in
/// place, and never free it; `keep_alive` (e.g. the owner of the memory) is
/// held while the tensor lives. Throws InvalidArgument for memory the
/// runtime does not know as device memory or of another device.
inline Tensor tensor_over(std::shared_ptr<Device> d, void* data, Shape shape, DType dtype = DType::f32,
                          std::shared_ptr<const void> keep_alive = nullptr) {
    return detail::gpu_tensor_over(std::move(d), "cuda", data, std::move(shape), dtype, std::move(keep_alive));
}

/// A stream of `d` whose work goes to the program's `stream` (one of `d`'s
/// device; 0, the legacy default stream, too: e.g. PyTorch's
/// torch.cuda.current_stream().cuda_stream), so accel's ops run after the
/// program's earlier work there. The stream stays the program's: it must
/// outlive accel's, which synchronizes it when destroyed but never destroys
/// it. Throws InvalidArgument for a stream of another device or one the
/// runtime does not know.
inline std::unique_ptr<Stream> stream_over(Device& d, cudaStream_t stream) {
    return detail::gpu_stream_over(d, "cuda", stream);
}

}  // namespace cuda
}  // namespace interop
}  // namespace accel
