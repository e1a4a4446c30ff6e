// Device's interop with the runtime underneath and its build of a program's
// own kernels (accel/native.hpp, accel/kernel_source.hpp): the checks every
// backend shares, then the backend's NativeInterop / do_build_kernel.
#include <accel/device.hpp>
#include <accel/error.hpp>
#include <accel/tensor.hpp>

#include <mutex>
#include <string>

namespace accel {

const char* native_object_name(NativeObject what) noexcept {
    switch (what) {
        case NativeObject::context: return "context";
        case NativeObject::device: return "device";
        case NativeObject::physical_device: return "physical_device";
        case NativeObject::instance: return "instance";
        case NativeObject::queue_family: return "queue_family";
        case NativeObject::execution_space: return "execution_space";
    }
    return "?";
}

const char* param_type_name(ParamType t) noexcept {
    switch (t) {
        case ParamType::tensor: return "tensor";
        case ParamType::i32: return "i32";
        case ParamType::u32: return "u32";
        case ParamType::i64: return "i64";
        case ParamType::u64: return "u64";
        case ParamType::f32: return "f32";
        case ParamType::f64: return "f64";
    }
    return "?";
}

std::size_t param_type_size(ParamType t) noexcept {
    switch (t) {
        case ParamType::tensor: return 0;
        case ParamType::i32:
        case ParamType::u32:
        case ParamType::f32: return 4;
        case ParamType::i64:
        case ParamType::u64:
        case ParamType::f64: return 8;
    }
    return 0;
}

NativeInterop& Device::interop_for(const std::string& backend, const char* what) {
    if (backend != info().backend)
        throw InvalidArgument(std::string(what) + ": asked for the " + backend + " runtime's object of " + selector() +
                              ", a " + info().backend + " device; use accel/interop/" + info().backend +
                              ".hpp for it (a handle of one runtime is never read as another's)");
    NativeInterop* interop = do_interop();
    if (!interop)
        throw Unsupported(std::string(what) + ": the " + info().backend + " backend (" + selector() +
                          ") has no interop with its runtime");
    return *interop;
}

std::uint64_t Device::native_object(const std::string& backend, NativeObject what) {
    return interop_for(backend, "native_object").object(what);
}

std::uint64_t Device::native_queue(const std::string& backend, Stream& stream) {
    NativeInterop& interop = interop_for(backend, "native_queue");
    if (&stream.device() != this)
        throw InvalidArgument("native_queue: the stream belongs to " + stream.device().selector() + ", not " +
                              selector() + "; ask the stream's own device");
    return interop.queue(stream);
}

NativeMemory Device::native_memory(const std::string& backend, const Buffer& buffer) {
    NativeInterop& interop = interop_for(backend, "native_memory");
    if (!buffer.handle())
        throw InvalidArgument("native_memory: the buffer is empty (no memory on " + selector() + ")");
    if (&buffer.device() != this)
        throw InvalidArgument("native_memory: the buffer belongs to " + buffer.device().selector() + ", not " +
                              selector());
    return interop.memory(buffer.handle(), buffer.size());
}

DeviceHandle Device::adopt_native_memory(const std::string& backend, const NativeMemory& memory) {
    NativeInterop& interop = interop_for(backend, "adopt_native_memory");
    if (memory.handle == 0 || memory.bytes == 0)
        throw InvalidArgument("adopt_native_memory: " +
                              std::string(memory.handle == 0 ? "a null handle" : "zero bytes") + " given for " +
                              selector() + "; pass the runtime's memory object and its size in bytes");
    const DeviceHandle h = interop.adopt(memory);
    std::lock_guard<std::mutex> lock(memory_mutex_);
    mapped_.emplace(h, memory.bytes);
    return h;
}

void Device::release_native_memory(DeviceHandle h) noexcept {
    if (!h) return;
    forget_mapped(h);
    if (NativeInterop* interop = do_interop()) interop->release(h);
}

std::unique_ptr<Stream> Device::stream_over_native_queue(const std::string& backend, std::uint64_t queue) {
    NativeInterop& interop = interop_for(backend, "stream_over_native_queue");
    if (queue == 0 && !interop.zero_is_a_queue())
        throw InvalidArgument("stream_over_native_queue: a null queue given for " + selector() +
                              "; pass a queue of the device's own context");
    return interop.stream_over(queue);
}

namespace {

// The KernelSource field with this backend's code, and whether it is filled.
bool has_code_for(const KernelSource& s, const std::string& backend, std::string& field) {
    if (backend == "opencl") return field = "opencl", !s.opencl.empty();
    if (backend == "cuda") return field = "cuda", !s.cuda.empty();
    if (backend == "hip") return field = "hip (or cuda)", !s.hip.empty() || !s.cuda.empty();
    if (backend == "vulkan") return field = "glsl (or spirv)", !s.glsl.empty() || !s.spirv.empty();
    field = "host";
    return static_cast<bool>(s.host);
}

}  // namespace

std::shared_ptr<BuiltKernel> Device::build_kernel(const KernelSource& source) {
    if (source.name.empty())
        throw InvalidArgument("build_kernel: the kernel has no name; set KernelSource::name to its entry point");
    std::string field;
    if (!has_code_for(source, info().backend, field))
        throw Unsupported("kernel '" + source.name + "' has no code for " + selector() + " (" + info().backend +
                          "); give KernelSource::" + field +
                          (field == "host" ? std::string(" (a C++ callable; a Python kernel cannot run here)")
                                           : " (in Python, accel.Kernel's " + field.substr(0, field.find(' ')) + "=)"));
    auto built = do_build_kernel(source);
    if (!built) throw DeviceError("kernel '" + source.name + "': " + selector() + " built nothing", 0, "");
    return built;
}

std::shared_ptr<BuiltKernel> Device::do_build_kernel(const KernelSource& source) {
    throw Unsupported("kernel '" + source.name + "': the " + info().backend + " backend (" + selector() +
                      ") builds no program kernels");
}

}  // namespace accel
