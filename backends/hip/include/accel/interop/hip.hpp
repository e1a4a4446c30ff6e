// accel/interop/hip.hpp — accel's HIP objects for a program that also
// calls HIP itself (its own kernels, rocBLAS, PyTorch on ROCm), and accel tensors and
// streams over the program's own (zero copy). Include it only in a program
// that uses HIP (it includes <hip/hip_runtime_api.h>; libaccel itself links no
// HIP). Every function throws InvalidArgument for a device, stream or tensor
// of another backend, naming it: a handle of one runtime is never read as
// another's.
//
// Ordering: work a program enqueues on a stream and accel's work on a stream
// over it (stream_over) run in that stream's order; across different streams,
// synchronize (Stream::synchronize, hipStreamSynchronize) or use events.
#pragma once

#include <hip/hip_runtime_api.h>

#include <accel/interop/detail/gpu_runtime.hpp>

namespace accel {
namespace interop {
namespace hip {

/// The HIP device ordinal of `d` (hipSetDevice's; after
/// HIP_VISIBLE_DEVICES). Thread-safe.
inline int ordinal(Device& d) { return detail::gpu_ordinal(d, "hip"); }

/// The hipStream_t behind `s` (a non-blocking stream; valid while `s`
/// lives). Enqueue on it to run in order with accel's work there.
inline hipStream_t stream(Stream& s) { return detail::gpu_stream<hipStream_t>(s, "hip"); }

/// The device pointer of `t`'s first element (valid while `t` lives).
/// Throws InvalidArgument for an empty tensor.
template <class T = void>
T* data(const Tensor& t) {
    return static_cast<T*>(detail::gpu_data(t, "hip"));
}

/// A tensor of `shape` and `dtype` over device memory at `data` that the
/// program owns (hipMalloc'd or managed, on `d`'s device: its first and
/// last byte are checked), without a copy: accel's ops read and write it in
/// place, and never free it; `keep_alive` (e.g. the owner of the memory) is
/// held while the tensor lives. Throws InvalidArgument for memory the
/// runtime does not know as device memory or of another device.
inline Tensor tensor_over(std::shared_ptr<Device> d, void* data, Shape shape, DType dtype = DType::f32,
                          std::shared_ptr<const void> keep_alive = nullptr) {
    return detail::gpu_tensor_over(std::move(d), "hip", data, std::move(shape), dtype, std::move(keep_alive));
}

/// A stream of `d` whose work goes to the program's `stream` (one of `d`'s
/// device; 0, the legacy default stream, too: e.g. PyTorch on ROCm's
/// torch.cuda.current_stream().cuda_stream), so accel's ops run after the
/// program's earlier work there. HIP 5 cannot tell a stream's device: pass
/// one of `d`'s. The stream stays the program's: it must
/// outlive accel's, which synchronizes it when destroyed but never destroys
/// it. Throws InvalidArgument for a stream of another device or one the
/// runtime does not know.
inline std::unique_ptr<Stream> stream_over(Device& d, hipStream_t stream) {
    return detail::gpu_stream_over(d, "hip", stream);
}

}  // namespace hip
}  // namespace interop
}  // namespace accel
