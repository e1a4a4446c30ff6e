// accel/interop/vulkan.hpp — accel's Vulkan objects for a program that also
// calls Vulkan itself, and accel tensors over the program's own buffers
// (zero copy). Include it only in a program that uses Vulkan (it includes
// <vulkan/vulkan.h>; libaccel itself links no Vulkan). Every function throws
// InvalidArgument for a device, stream or tensor of another backend, naming
// it: a handle of one runtime is never read as another's. The handles
// returned are accel's, not retained: valid while the device lives.
//
// The queue: a Vulkan device of accel has one VkQueue, which all its streams
// share. accel submits to it from any thread that uses the device, under a
// lock of its own, and a VkQueue is externally synchronized: a program that
// submits to it (vkQueueSubmit, vkQueueWaitIdle) must do so while no other
// thread uses accel on that device. Ordering: each accel command starts with
// a full memory barrier, so accel's work submitted after the program's sees
// its writes; the program's work sees accel's only after the accel stream is
// synchronized (Stream::synchronize, which also submits accel's recorded
// work). A program's own queue (of the family queue_family(d)) follows the
// same rule with a fence or semaphore in place of submission order. There is
// no stream over a program's queue (stream_over_native_queue: Unsupported).
#pragma once

#include <vulkan/vulkan.h>

#include <accel/device.hpp>
#include <accel/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace accel {
namespace interop {
namespace vulkan {

/// The VkInstance accel made (one per process). Thread-safe.
inline VkInstance instance(Device& d) {
    return reinterpret_cast<VkInstance>(d.native_object("vulkan", "instance"));
}

/// The VkPhysicalDevice of `d`. Thread-safe.
inline VkPhysicalDevice physical_device(Device& d) {
    return reinterpret_cast<VkPhysicalDevice>(d.native_object("vulkan", "physical_device"));
}

/// The VkDevice of `d` (made with one compute queue; shaderFloat64 and
/// shaderInt64 enabled where the device has both, storageBuffer16BitAccess
/// where it has it). Create buffers for tensor_over on it. Thread-safe.
inline VkDevice device(Device& d) {
    return reinterpret_cast<VkDevice>(d.native_object("vulkan", "device"));
}

/// The index of the queue family accel's queue comes from (the first with
/// VK_QUEUE_COMPUTE_BIT). Thread-safe.
inline std::uint32_t queue_family(Device& d) {
    return static_cast<std::uint32_t>(d.native_object("vulkan", "queue_family"));
}

/// The VkQueue behind `s`: the device's one queue, shared by all its
/// streams (see the file comment for when a program may submit to it).
inline VkQueue queue(Stream& s) { return reinterpret_cast<VkQueue>(s.device().native_queue("vulkan", s)); }

/// A tensor's memory: the VkBuffer and the byte offset of its first element
/// in it (0 for accel's own buffers, each a VkBuffer of its own; the
/// program's offset for a tensor made by tensor_over).
struct Memory {
    VkBuffer buffer = VK_NULL_HANDLE;
    std::size_t offset = 0;  ///< bytes
};

/// The VkBuffer behind `t` (valid while `t` lives; created with
/// STORAGE_BUFFER, TRANSFER_SRC and TRANSFER_DST usage, device-local memory
/// where the device has it). Throws InvalidArgument for an empty tensor.
inline Memory memory(const Tensor& t) {
    const NativeMemory m = t.device().native_memory("vulkan", t.buffer());
    return {reinterpret_cast<VkBuffer>(m.handle), m.offset};
}

/// A tensor of `shape` and `dtype` over bytes [offset, offset + shape's
/// bytes) of the program's `buffer`, without a copy: accel's ops and copies
/// read and write it in place. `buffer` must be a VkBuffer of device(*d),
/// bound to memory, with usage STORAGE_BUFFER | TRANSFER_SRC | TRANSFER_DST
/// (not checkable: the validation layer reports a wrong one), and stay alive
/// until work on the tensor has completed (synchronize before destroying it);
/// accel never destroys it. `keep_alive` is held while the tensor lives.
/// Throws InvalidArgument for an offset that minStorageBufferOffsetAlignment
/// does not divide (where a storage buffer's range must start), a range past
/// the buffer's memory requirement, a null buffer or zero bytes.
inline Tensor tensor_over(std::shared_ptr<Device> d, VkBuffer buffer, std::size_t offset, Shape shape,
                          DType dtype = DType::f32, std::shared_ptr<const void> keep_alive = nullptr) {
    const std::size_t bytes = shape.elements() * dtype_size(dtype);
    return Tensor::over_native_memory(std::move(d), "vulkan",
                                      {reinterpret_cast<std::uint64_t>(buffer), offset, bytes}, std::move(shape), dtype,
                                      std::move(keep_alive));
}

}  // namespace vulkan
}  // namespace interop
}  // namespace accel
