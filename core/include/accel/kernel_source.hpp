// accel/kernel_source.hpp — a program's own kernel: its signature and its
// code per kernel language, which a device builds (Device::build_kernel) and the
// front-end accel::UserKernel (accel/user_kernel.hpp) launches with accel's
// geometry, streams and tensors. Part of the plugin ABI (ACCEL_PLUGIN_ABI).
//
// Arguments are passed in signature order; the in-tree backends' languages:
//  - OpenCL C: `__kernel void NAME(...)`, a tensor as `__global T*`, a scalar
//    as its C type (int, uint, long, ulong, float, double); launched with
//    local size = block and global size = grid × block.
//  - CUDA C++ (NVRTC; HIP through hiprtc): `extern "C" __global__ void
//    NAME(...)`, a tensor as `T*`, a scalar as its C++ type; <<<grid, block>>>.
//  - Vulkan GLSL 450 (shaderc) or SPIR-V: tensors are the storage buffers
//    of set 0 at bindings 0, 1, ... in signature order; scalars are one push
//    constant block, members in signature order at their natural alignment
//    (std430); the work-group size must be given as specialization constants
//    0, 1, 2 (`layout(local_size_x_id = 0, local_size_y_id = 1,
//    local_size_z_id = 2) in;`), which accel sets to the block; vkCmdDispatch
//    of the grid.
//  - host and Kokkos host execution spaces: a C++ callable run once per
//    block (HostBlock), blocks in parallel; the callable loops over the
//    block's threads itself.
#pragma once

#include <accel/dtype.hpp>
#include <accel/geometry.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace accel {

class Stream;

/// The type of one kernel parameter.
enum class ParamType : int { tensor, i32, u32, i64, u64, f32, f64 };

/// "tensor", "i32", "u32", "i64", "u64", "f32", "f64". Never throws.
const char* param_type_name(ParamType t) noexcept;

/// Bytes of a scalar of type t (4 or 8); 0 for ParamType::tensor.
std::size_t param_type_size(ParamType t) noexcept;

/// One parameter of a kernel's signature.
struct KernelParam {
    std::string name;                  ///< for messages and the trace, e.g. "a"
    ParamType type = ParamType::tensor;
    DType dtype = DType::f32;          ///< a tensor's element type (tensors only)
    bool written = false;              ///< a tensor the kernel writes (tensors only)

    /// A tensor the kernel only reads.
    static KernelParam in(std::string name, DType dtype = DType::f32) {
        return {std::move(name), ParamType::tensor, dtype, false};
    }
    /// A tensor the kernel writes (and may read).
    static KernelParam out(std::string name, DType dtype = DType::f32) {
        return {std::move(name), ParamType::tensor, dtype, true};
    }
    /// A scalar passed by value.
    static KernelParam scalar(std::string name, ParamType type) { return {std::move(name), type, DType::f32, false}; }
};

/// One argument as a backend's BuiltKernel receives it, checked against its
/// parameter: a tensor's device handle and size in bytes, or a scalar's
/// value in `bits` (its bytes in the low bytes, host byte order).
struct ResolvedArg {
    ParamType type = ParamType::tensor;
    void* handle = nullptr;   ///< tensors: the buffer's DeviceHandle
    std::size_t bytes = 0;    ///< tensors: size in bytes
    std::uint64_t bits = 0;   ///< scalars

    /// The scalar as T (T's size must be param_type_size(type)).
    template <class T>
    T scalar() const noexcept {
        T v;
        std::memcpy(&v, &bits, sizeof v);
        return v;
    }
};

/// One block of a host kernel's launch (KernelSource::host): which block it
/// is, the launch's shape and the arguments. Tensors are host pointers here.
struct HostBlock {
    Dim3 block_idx;  ///< this block, within grid_dim
    Dim3 block_dim;  ///< threads per block (the callable loops over them)
    Dim3 grid_dim;
    const std::vector<ResolvedArg>* args = nullptr;

    /// Argument i as a pointer to T (a tensor parameter; T its element type).
    template <class T>
    T* tensor(std::size_t i) const noexcept {
        return static_cast<T*>((*args)[i].handle);
    }
    /// Argument i as a T (a scalar parameter of T's type).
    template <class T>
    T scalar(std::size_t i) const noexcept {
        return (*args)[i].scalar<T>();
    }
};

/// The host code of a kernel: called once per block, from several threads
/// at once for different blocks; must not throw across blocks it does not
/// own (an exception fails the launch with its message).
using HostKernelFn = std::function<void(const HostBlock&)>;

/// A kernel as a program writes it: its entry point, signature and code per
/// kernel language (see the file comment for each in-tree backend's
/// conventions). A device builds the first of its languages
/// (DeviceInfo::kernel_languages) that has code here; one with none of them
/// cannot build it (Unsupported naming the languages it takes).
// The deprecated fields warn where a program uses them, not in the special
// members the compiler writes for the struct (their location is here).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct KernelSource {
    std::string name;                 ///< the entry point (OpenCL, CUDA, HIP); names the kernel everywhere
    std::vector<KernelParam> params;  ///< the signature, in argument order
    /// The code per language, keyed by the language's name as backends
    /// state it: "opencl" (OpenCL C), "cuda" (CUDA C++ for NVRTC; the HIP
    /// backend takes it too), "hip" (HIP C++ for hiprtc), "glsl" (a Vulkan
    /// GLSL 450 compute shader, entry point main), "spirv" (SPIR-V words as
    /// bytes in host order: set_spirv), or the language of a backend built
    /// outside accel (its docs name it). Empty code is no code.
    std::map<std::string, std::string> code;
    HostKernelFn host;                ///< language "host": the host backend and Kokkos host execution spaces
    std::string build_options;        ///< OpenCL clBuildProgram / NVRTC options, e.g. "-DTILE=16"; GLSL: -DNAME[=VALUE] only

    /// Sets code["spirv"] to `words`' bytes. Never throws but std::bad_alloc.
    void set_spirv(const std::vector<std::uint32_t>& words) {
        code["spirv"].assign(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(std::uint32_t));
    }
    /// The code of `language`, or "" when there is none. Never throws but std::bad_alloc.
    std::string code_for(const std::string& language) const {
        const auto it = code.find(language);
        return it == code.end() ? std::string() : it->second;
    }

    // Deprecated since 0.2, removed in 0.3: accel 0.1's one field per
    // language. Device::build_kernel moves a filled one into `code` when
    // `code` has no entry for its language.
    [[deprecated("use code[\"opencl\"]")]] std::string opencl;
    [[deprecated("use code[\"cuda\"]")]] std::string cuda;
    [[deprecated("use code[\"hip\"]")]] std::string hip;
    [[deprecated("use code[\"glsl\"]")]] std::string glsl;
    [[deprecated("use set_spirv(words)")]] std::vector<std::uint32_t> spirv;
};
#pragma GCC diagnostic pop

/// A kernel built for one device (Device::build_kernel). Thread-safe: any
/// number of threads may launch it at once, on any streams of its device.
class BuiltKernel {
public:
    virtual ~BuiltKernel() = default;
    /// Enqueues one launch on `stream` (of the device that built it); the
    /// geometry is within the device's limits and the arguments match the
    /// signature (checked by the caller). Throws DeviceError when the
    /// runtime refuses it.
    virtual void launch(const LaunchGeometry& geometry, const std::vector<ResolvedArg>& args, Stream& stream) = 0;
};

/// The capability of building a program's own kernels (accel/capability.hpp;
/// Device::build_kernel calls it after its checks). A backend that builds
/// none hands out no KernelBuilder, and Device::build_kernel says so.
class KernelBuilder {
public:
    static constexpr std::string_view capability_name = "accel.kernel_builder/1";
    virtual ~KernelBuilder() = default;
    /// Builds `source` for this device: it has a name and code in one of the
    /// device's DeviceInfo::kernel_languages (checked by the caller). Throws
    /// DeviceError with the build log when the code fails to build. Never
    /// returns null. Thread-safe.
    virtual std::shared_ptr<BuiltKernel> build_program_kernel(const KernelSource& source) = 0;
};

}  // namespace accel
