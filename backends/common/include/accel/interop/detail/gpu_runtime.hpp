// accel/interop/detail/gpu_runtime.hpp — what accel/interop/cuda.hpp and
// accel/interop/hip.hpp share: the two runtimes name a device, a stream and
// device memory alike (an ordinal, a stream handle, a device pointer), so
// each of those headers is these functions with its runtime's name and types.
#pragma once

#include <accel/device.hpp>
#include <accel/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace accel {
namespace interop {
namespace detail {

inline int gpu_ordinal(Device& d, const char* backend) {
    return static_cast<int>(d.native_object(backend, "device"));
}

template <class StreamHandle>
StreamHandle gpu_stream(Stream& s, const char* backend) {
    return reinterpret_cast<StreamHandle>(s.device().native_queue(backend, s));
}

inline void* gpu_data(const Tensor& t, const char* backend) {
    const NativeMemory m = t.device().native_memory(backend, t.buffer());
    return reinterpret_cast<char*>(m.handle) + m.offset;
}

inline Tensor gpu_tensor_over(std::shared_ptr<Device> d, const char* backend, void* data, Shape shape, DType dtype,
                              std::shared_ptr<const void> keep_alive) {
    const std::size_t bytes = shape.elements() * dtype_size(dtype);
    return Tensor::over_native_memory(std::move(d), backend, {reinterpret_cast<std::uint64_t>(data), 0, bytes},
                                      std::move(shape), dtype, std::move(keep_alive));
}

template <class StreamHandle>
std::unique_ptr<Stream> gpu_stream_over(Device& d, const char* backend, StreamHandle stream) {
    return d.stream_over_native_queue(backend, reinterpret_cast<std::uint64_t>(stream));
}

}  // namespace detail
}  // namespace interop
}  // namespace accel
