// accel/interop/opencl.hpp — accel's OpenCL objects for a program that also
// calls OpenCL itself, and accel tensors and streams over the program's own
// objects (zero copy). Include it only in a program that uses OpenCL (it
// includes <CL/cl.h>; libaccel itself links no OpenCL). Every function throws
// InvalidArgument for a device, stream or tensor of another backend, naming
// it: a handle of one runtime is never read as another's.
//
// Ordering: work a program enqueues on its own queue and accel's work on a
// stream over that queue (stream_over) run in the queue's order; across
// different queues, synchronize (Stream::synchronize, clFinish) or use events.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <accel/device.hpp>
#include <accel/tensor.hpp>

#include <cstddef>
#include <memory>

namespace accel {
namespace interop {
namespace opencl {

/// The cl_context accel's buffers, programs and queues of `d` live in (not
/// retained: valid while `d` lives). Thread-safe.
inline cl_context context(Device& d) {
    return reinterpret_cast<cl_context>(d.native_object("opencl", "context"));
}

/// The cl_device_id of `d`. Thread-safe.
inline cl_device_id device_id(Device& d) {
    return reinterpret_cast<cl_device_id>(d.native_object("opencl", "device"));
}

/// The in-order, profiling cl_command_queue behind `s` (not retained: valid
/// while `s` lives). Enqueue on it to run in order with accel's work there.
inline cl_command_queue queue(Stream& s) {
    return reinterpret_cast<cl_command_queue>(s.device().native_queue("opencl", s));
}

/// A tensor's memory: the cl_mem and the byte offset of its first element.
struct Memory {
    cl_mem mem = nullptr;
    std::size_t offset = 0;  ///< bytes
};

/// The cl_mem behind `t` (not retained: valid while `t` lives). Throws
/// InvalidArgument for an empty tensor.
inline Memory memory(const Tensor& t) {
    const NativeMemory m = t.device().native_memory("opencl", t.buffer());
    return {reinterpret_cast<cl_mem>(m.handle), m.offset};
}

/// A tensor of `shape` and `dtype` over bytes [offset, offset + shape's
/// bytes) of the program's `mem` (a buffer of `d`'s context), without a
/// copy: accel's ops read and write it in place. accel retains `mem`
/// (through a sub-buffer) while the tensor lives and never frees it;
/// `keep_alive` is held as long. Throws InvalidArgument for a buffer of
/// another context, a range past its end, or an offset the device's
/// CL_DEVICE_MEM_BASE_ADDR_ALIGN does not divide (OpenCL's sub-buffer rule).
inline Tensor tensor_over(std::shared_ptr<Device> d, cl_mem mem, std::size_t offset, Shape shape,
                          DType dtype = DType::f32, std::shared_ptr<const void> keep_alive = nullptr) {
    const std::size_t bytes = shape.elements() * dtype_size(dtype);
    return Tensor::over_native_memory(std::move(d), "opencl", {reinterpret_cast<std::uint64_t>(mem), offset, bytes},
                                      std::move(shape), dtype, std::move(keep_alive));
}

/// A stream of `d` whose work goes to the program's `queue` (made on `d`'s
/// context and device, in order, with CL_QUEUE_PROFILING_ENABLE: accel
/// times its work with the queue's events), so accel's ops run after the
/// program's earlier work there. The queue stays the program's: it must
/// outlive the stream, which finishes its work when destroyed but never
/// releases it. Throws InvalidArgument for a queue of another context or
/// device, out of order, or without profiling.
inline std::unique_ptr<Stream> stream_over(Device& d, cl_command_queue queue) {
    return d.stream_over_native_queue("opencl", reinterpret_cast<std::uint64_t>(queue));
}

}  // namespace opencl
}  // namespace interop
}  // namespace accel
