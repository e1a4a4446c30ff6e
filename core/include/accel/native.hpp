// accel/native.hpp — the runtime objects under a device, for programs that
// use that runtime directly beside accel (interop), both ways: out (a
// device's cl_context, a stream's cudaStream_t, a tensor's cl_mem) and in
// (a Tensor over memory another library allocated, a Stream over a queue it
// made). libaccel links no runtime, so handles cross as integers here; the
// headers accel/interop/<backend>.hpp give them their runtime's types and are
// what a program includes. Part of the plugin ABI (ACCEL_PLUGIN_ABI).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace accel {

class Stream;

/// A runtime object of a device, by what it is. Which backend has which
/// (the others throw Unsupported naming what they have):
///  - context: OpenCL cl_context; CUDA the device's primary context
///    (CUcontext; HIP has deprecated contexts: none).
///  - device: OpenCL cl_device_id; Vulkan VkDevice; CUDA/HIP the device
///    ordinal (cudaSetDevice's).
///  - physical_device: Vulkan VkPhysicalDevice.
///  - instance: Vulkan VkInstance.
///  - queue_family: Vulkan, the index of the compute queue family accel's
///    queues come from.
///  - execution_space: Kokkos, a pointer to the device's default execution
///    space instance (Kokkos::DefaultExecutionSpace).
enum class NativeObject : int { context, device, physical_device, instance, queue_family, execution_space };

/// "context", "device", "physical_device", "instance", "queue_family",
/// "execution_space". Never throws.
const char* native_object_name(NativeObject what) noexcept;

/// Device memory as its runtime names it: `handle` is a cl_mem (OpenCL), a
/// device pointer (CUDA, HIP, host, Kokkos) or a VkBuffer (Vulkan), as an
/// integer; the bytes [offset, offset + bytes) of it are the memory meant.
struct NativeMemory {
    std::uint64_t handle = 0;
    std::size_t offset = 0;  ///< bytes from the start of `handle`
    std::size_t bytes = 0;
};

/// What a backend implements for interop (Device::interop()); every method
/// gets arguments already checked by the Device that calls it (its own
/// backend, non-null handles, a stream of this device). A backend without
/// interop returns no NativeInterop, and Device says so.
class NativeInterop {
public:
    virtual ~NativeInterop() = default;
    /// The object `what`; throws Unsupported where the backend has none such.
    virtual std::uint64_t object(NativeObject what) = 0;
    /// The native queue behind `stream`: cl_command_queue, cudaStream_t
    /// (hipStream_t), VkQueue (shared by accel's streams: submit after
    /// accel's work is synchronized), Kokkos execution space instance.
    virtual std::uint64_t queue(Stream& stream) = 0;
    /// The memory behind `handle` (one this device handed out), `bytes` long.
    virtual NativeMemory memory(void* handle, std::size_t bytes) = 0;
    /// A handle for `memory` (owned elsewhere) that this device's copies and
    /// kernels address like its own, released by release() and never freed
    /// by accel. Throws InvalidArgument where `memory` cannot be used so
    /// (e.g. an OpenCL sub-buffer offset the device does not align).
    virtual void* adopt(const NativeMemory& memory) = 0;
    /// Releases a handle from adopt(). Never throws.
    virtual void release(void* handle) noexcept = 0;
    /// A stream whose work goes to `queue` (a queue of this device's context
    /// made by the program), which stays the program's: accel never destroys
    /// it, and it must outlive the stream.
    virtual std::unique_ptr<Stream> stream_over(std::uint64_t queue) = 0;
    /// Whether 0 names a queue in this runtime (CUDA's and HIP's legacy
    /// default stream), rather than none.
    virtual bool zero_is_a_queue() const noexcept { return false; }
};

}  // namespace accel
