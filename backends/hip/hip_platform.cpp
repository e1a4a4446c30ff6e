// HIP backend: what is HIP's own, the twin of backends/cuda/cuda_platform.cpp
// (the rest of the backend is the CUDA backend's sources compiled as HIP, see
// cuda_to_hip.h): the sticky error codes, the device facts, page-locked host
// memory, pointer and stream owners, the current context, and a program's
// kernels compiled by hiprtc.
#include "../cuda/cuda_device.hpp"
#include "../common/cache_file.hpp"

#include <accel/environment.hpp>
#include <accel/error.hpp>

#include <unistd.h>

#include <cstring>
#include <sstream>
#include <vector>

#ifndef ACCEL_CUDA_EMULATION
#include <hip/hiprtc.h>
#endif

namespace accel {
namespace cuda {

bool is_sticky(hipError_t e) {
    // The codes after which the HIP runtime leaves the device unusable for
    // the process (a memory fault, a kernel abort, a timed-out or failed
    // kernel): every later call returns them.
    switch (e) {
        case hipErrorIllegalAddress:
        case hipErrorLaunchTimeOut:
        case hipErrorAssert:
        case hipErrorLaunchFailure:
        case hipErrorECCNotCorrectable:
            return true;
        default:
            return false;
    }
}

namespace {

// Read by the emulated HIP runtime this plugin loads in accel's own tests.
const env::Declaration kEmulationVariable{{"ACCEL_HIP_EMULATION_FAULTS",
                                           "NAME[@DEVICE]=VALUE entries separated by ; "
                                           "(backends/cuda/emulation/control.h)",
                                           "faults and the wavefront width (warp_size=32|64) of the emulated HIP "
                                           "runtime, for accel's own tests (default: none, wavefront 64)",
                                           "the hip backend"}};

// HIP's version encoding (HIP_VERSION): major·10^7 + minor·10^5 + patch.
std::string version_text(int v) {
    return std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100) + "." + std::to_string(v % 100000);
}

}  // namespace

std::string no_device_reason(hipError_t e) {
    const std::string error = "hipGetDeviceCount: " + describe(e);
    // ROCm's kernel driver (amdgpu with KFD) shows itself as /dev/kfd.
    if (access("/dev/kfd", F_OK) != 0)
        return "no AMD GPU driver is loaded (/dev/kfd is absent: the amdgpu kernel driver with ROCm support) [" +
               error + "]";
    if (e == hipErrorNoDevice) return "the AMD GPU driver sees no HIP device (/dev/kfd is there) [" + error + "]";
    return "hipGetDeviceCount failed: " + describe(e);
}

DeviceInfo device_info(int index, int ordinal) {
    hipDeviceProp_t p{};
    ACCEL_CUDA_CHECK(hipGetDeviceProperties(&p, ordinal));
    int driver = 0, runtime = 0;
    ACCEL_CUDA_CHECK(hipDriverGetVersion(&driver));
    ACCEL_CUDA_CHECK(hipRuntimeGetVersion(&runtime));
    hipUUID uuid{};
    ACCEL_CUDA_CHECK(hipDeviceGetUuid(&uuid, ordinal));

    DeviceInfo i = common_device_info(p, index);
    i.vendor = "Advanced Micro Devices, Inc.";
    i.driver_version = "HIP driver " + version_text(driver);
    i.runtime_version = "HIP runtime " + version_text(runtime);
    i.timer = "hipEvent";
    i.kernel_languages = {"hip", "cuda"};  // hiprtc compiles CUDA C++ of the HIP subset too
    unsigned char bytes[16];
    std::memcpy(bytes, uuid.bytes, sizeof bytes);
    i.uuid = format_uuid(bytes);
    i.extra.push_back({"HIP device ordinal", std::to_string(ordinal)});
    i.extra.push_back({"architecture", p.gcnArchName});
    i.extra.push_back({"wavefront size", std::to_string(p.warpSize) + " threads"});
    i.extra.push_back({"compute unit clock", std::to_string(p.clockRate / 1000) + " MHz"});
    add_memory_facts(i, p.memoryClockRate, p.memoryBusWidth, p.l2CacheSize);
    i.extra.push_back({"LDS per block", std::to_string(p.sharedMemPerBlock / 1024) + " KiB"});
    return i;
}

bool page_locked(const void* p) noexcept {
    hipPointerAttribute_t a{};
    if (cleared(hipPointerGetAttributes(&a, p)) != hipSuccess) return false;
#if HIP_VERSION_MAJOR >= 6
    return a.type == hipMemoryTypeHost;  // ROCm 6 renamed the field after CUDA's
#else
    return a.memoryType == hipMemoryTypeHost;
#endif
}

int device_of_pointer(const void* p) noexcept {
    hipPointerAttribute_t a{};
    if (cleared(hipPointerGetAttributes(&a, p)) != hipSuccess) return -1;
#if HIP_VERSION_MAJOR >= 6
    const bool device = a.type == hipMemoryTypeDevice || a.type == hipMemoryTypeManaged;
#else
    const bool device = a.memoryType == hipMemoryTypeDevice || a.isManaged;
#endif
    return device ? a.device : -1;
}

// HIP 5 cannot name a stream's device (hipStreamGetDevice came with 6.0).
int device_of_stream(hipStream_t) noexcept { return -2; }

std::uint64_t primary_context(int ordinal) {
    throw Unsupported("HIP has deprecated its context API (hipCtx*), so accel gives no context of HIP device " +
                      std::to_string(ordinal) + "; use the device ordinal (hipSetDevice)");
}

#ifdef ACCEL_CUDA_EMULATION

std::unique_ptr<ProgramKernel> compile_program_kernel(const KernelSource&, int, const std::string& what) {
    throw Unsupported(what + ": the emulated HIP runtime compiles no HIP code (hiprtc needs ROCm and an AMD GPU)");
}

#else

namespace {

constexpr char kCodeObjectMagic[9] = "accelHCO";

// The code hiprtc compiles: code["hip"], else code["cuda"].
std::string hip_code(const KernelSource& s) {
    const std::string hip = s.code_for("hip");
    return hip.empty() ? s.code_for("cuda") : hip;
}

// hiprtc's code object for the kernel's HIP (else CUDA) code for the
// device's architecture, or a DeviceError with its log.
std::vector<char> compile_code_object(const KernelSource& s, const std::string& arch, const std::string& what) {
    const std::string code = hip_code(s);
    std::vector<std::string> options{"--offload-arch=" + arch, "-std=c++17"};
    std::istringstream extra(s.build_options);
    for (std::string o; extra >> o;) options.push_back(o);
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());
    hiprtcProgram p = nullptr;
    if (hiprtcResult r = hiprtcCreateProgram(&p, code.c_str(), (s.name + ".hip").c_str(), 0, nullptr, nullptr))
        throw DeviceError(what + ": hiprtcCreateProgram failed: " + hiprtcGetErrorString(r), r, "");
    struct Destroy {
        hiprtcProgram& p;
        ~Destroy() { hiprtcDestroyProgram(&p); }
    } destroy{p};
    const hiprtcResult r = hiprtcCompileProgram(p, static_cast<int>(argv.size()), argv.data());
    std::string log;
    std::size_t size = 0;
    if (hiprtcGetProgramLogSize(p, &size) == HIPRTC_SUCCESS && size > 1) {
        log.assign(size, '\0');
        if (hiprtcGetProgramLog(p, &log[0]) != HIPRTC_SUCCESS) log.clear();
        while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    if (r != HIPRTC_SUCCESS)
        throw DeviceError(what + ": hiprtc failed (" + hiprtcGetErrorString(r) + ") for " + arch + " with options '" +
                              s.build_options + "'; compiler log:\n" + log,
                          r, "");
    std::vector<char> object;
    if (hiprtcGetCodeSize(p, &size) != HIPRTC_SUCCESS || size == 0)
        throw DeviceError(what + ": hiprtc wrote no code object", 0, "");
    object.resize(size);
    if (hiprtcGetCode(p, object.data()) != HIPRTC_SUCCESS) throw DeviceError(what + ": hiprtcGetCode failed", 0, "");
    return object;
}

class HipProgramKernel final : public ProgramKernel {
public:
    HipProgramKernel(hipModule_t module, hipFunction_t function) : module_(module), function_(function) {}
    ~HipProgramKernel() override { (void)cleared(hipModuleUnload(module_)); }
    hipError_t launch(dim3 grid, dim3 block, void** args, hipStream_t stream) noexcept override {
        (void)hipGetLastError();  // an earlier call's code, already handled
        return hipModuleLaunchKernel(function_, grid.x, grid.y, grid.z, block.x, block.y, block.z, 0, stream, args,
                                     nullptr);
    }

private:
    hipModule_t module_;
    hipFunction_t function_;
};

}  // namespace

std::unique_ptr<ProgramKernel> compile_program_kernel(const KernelSource& source, int ordinal, const std::string& what) {
    hipDeviceProp_t prop{};
    ACCEL_CUDA_CHECK(hipGetDeviceProperties(&prop, ordinal));
    const std::string arch = prop.gcnArchName;
    int runtime = 0;
    ACCEL_CUDA_CHECK(hipRuntimeGetVersion(&runtime));
    // The code object depends on the runtime's compiler, the target, the options and the source.
    const std::string key = "hiprtc " + std::to_string(runtime) + "\n" + arch + "\n" + source.build_options + "\n" +
                            hip_code(source);
    const std::string file = cache_file::keyed_path("hip-kernels", key, "hsaco");
    const std::vector<unsigned char> cached =
        cache_file::read_keyed(file, kCodeObjectMagic, key, std::uint64_t{256} << 20);
    std::vector<char> object(cached.begin(), cached.end());
    const bool from_cache = !object.empty();
    if (!from_cache) object = compile_code_object(source, arch, what);
    hipModule_t module = nullptr;
    ACCEL_CUDA_CHECK(hipModuleLoadData(&module, object.data()));
    hipFunction_t function = nullptr;
    const hipError_t e = hipModuleGetFunction(&function, module, source.name.c_str());
    if (e != hipSuccess) {
        (void)cleared(e);
        (void)cleared(hipModuleUnload(module));
        throw InvalidArgument(what + ": the compiled code has no kernel named '" + source.name +
                              "' (is it declared extern \"C\" __global__ void " + source.name + "(...)?): " +
                              describe(e));
    }
    if (!from_cache)
        cache_file::write_keyed(file, kCodeObjectMagic, key, reinterpret_cast<const unsigned char*>(object.data()),
                                object.size());
    return std::make_unique<HipProgramKernel>(module, function);
}

#endif  // ACCEL_CUDA_EMULATION

}  // namespace cuda
}  // namespace accel
