// Device's interop with the runtime underneath and its build of a program's
// own kernels (accel/native.hpp, accel/kernel_source.hpp): the checks every
// backend shares, then the backend's NativeInterop / KernelBuilder capabilities.
#include <accel/device.hpp>
#include <accel/error.hpp>
#include <accel/tensor.hpp>

#include <accel_internal/text.hpp>

#include <algorithm>
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
    NativeInterop* interop = capability<NativeInterop>();
    if (!interop)
        throw Unsupported(std::string(what) + ": the " + info().backend + " backend (" + selector() +
                          ") has no interop with its runtime");
    return *interop;
}

std::uint64_t Device::native_object(const std::string& backend, const std::string& name) {
    return interop_for(backend, "native_object").object(name);
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
    if (NativeInterop* interop = capability<NativeInterop>()) interop->release(h);
}

std::unique_ptr<Stream> Device::stream_over_native_queue(const std::string& backend, std::uint64_t queue) {
    NativeInterop& interop = interop_for(backend, "stream_over_native_queue");
    if (queue == 0 && !interop.zero_is_a_queue())
        throw InvalidArgument("stream_over_native_queue: a null queue given for " + selector() +
                              "; pass a queue of the device's own context");
    return interop.stream_over(queue);
}

namespace {

// `s` with accel 0.1's per-language fields moved into `code` (where `code`
// has no entry of that language yet), so that backends read `code` alone.
KernelSource with_code_map(const KernelSource& s) {
    KernelSource out = s;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    auto move_in = [&](std::string& field, const char* language) {
        if (!field.empty() && out.code_for(language).empty()) out.code[language] = field;
        field.clear();
    };
    move_in(out.opencl, "opencl");
    move_in(out.cuda, "cuda");
    move_in(out.hip, "hip");
    move_in(out.glsl, "glsl");
    if (!out.spirv.empty() && out.code_for("spirv").empty()) out.set_spirv(out.spirv);
    out.spirv.clear();
#pragma GCC diagnostic pop
    return out;
}

bool has_code(const KernelSource& s, const std::string& language) {
    return language == "host" ? static_cast<bool>(s.host) : !s.code_for(language).empty();
}

}  // namespace

std::shared_ptr<BuiltKernel> Device::build_kernel(const KernelSource& given) {
    if (given.name.empty())
        throw InvalidArgument("build_kernel: the kernel has no name; set KernelSource::name to its entry point");
    const std::vector<std::string>& languages = info().kernel_languages;
    const KernelSource source = with_code_map(given);
    KernelBuilder* builder = capability<KernelBuilder>();
    if (!builder)
        throw Unsupported("kernel '" + source.name + "': the " + info().backend + " backend (" + selector() +
                          ") builds no program kernels");
    if (languages.empty()) return builder->build_program_kernel(source);  // the backend's own "not here" message
    if (std::none_of(languages.begin(), languages.end(), [&](const std::string& l) { return has_code(source, l); })) {
        std::vector<std::string> given_languages;
        for (const auto& [l, code] : source.code)
            if (!code.empty()) given_languages.push_back(l);
        const std::string& first = languages.front();
        throw Unsupported("kernel '" + source.name + "' has no code for " + selector() + ", which builds " + detail::join(languages, " or ") +
                          (given_languages.empty() ? std::string()
                                                   : " (the kernel has " + detail::join(given_languages) + ")") +
                          "; give " +
                          (first == "host" ? std::string("KernelSource::host (a C++ callable; a Python kernel "
                                                         "cannot run here)")
                                           : "KernelSource::code[\"" + first + "\"] (in Python, accel.Kernel's " +
                                                 first + "= keyword)"));
    }
    auto built = builder->build_program_kernel(source);
    if (!built) throw DeviceError("kernel '" + source.name + "': " + selector() + " built nothing", 0, "");
    return built;
}

}  // namespace accel
