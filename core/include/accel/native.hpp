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
#include <string_view>

namespace accel {

class Stream;

/// Deprecated since 0.2, removed in 0.3: a runtime object named by accel
/// 0.1's list; each backend names its own objects now, as a string
/// (Device::native_object(backend, name), the backend's interop header:
/// OpenCL "context" and "device", Vulkan "instance", "physical_device",
/// "device" and "queue_family", CUDA/HIP "device" and "context", Kokkos
/// "execution_space").
enum class NativeObject : int { context, device, physical_device, instance, queue_family, execution_space };

/// "context", "device", "physical_device", "instance", "queue_family",
/// "execution_space": the name NativeObject stood for. Never throws.
const char* native_object_name(NativeObject what) noexcept;

/// Device memory as its runtime names it: `handle` is a cl_mem (OpenCL), a
/// device pointer (CUDA, HIP, host, Kokkos) or a VkBuffer (Vulkan), as an
/// integer; the bytes [offset, offset + bytes) of it are the memory meant.
struct NativeMemory {
    std::uint64_t handle = 0;
    std::size_t offset = 0;  ///< bytes from the start of `handle`
    std::size_t bytes = 0;
};

/// What a backend implements for interop (a capability, accel/capability.hpp); every method
/// gets arguments already checked by the Device that calls it (its own
/// backend, non-null handles, a stream of this device). A backend without
/// interop returns no NativeInterop, and Device says so.
class NativeInterop {
public:
    static constexpr std::string_view capability_name = "accel.native_interop/1";
    virtual ~NativeInterop() = default;
    /// The runtime object the backend calls `name` (its interop header
    /// lists them, e.g. Vulkan's "physical_device"); throws Unsupported
    /// naming the objects it has for any other name.
    virtual std::uint64_t object(const std::string& name) = 0;
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
