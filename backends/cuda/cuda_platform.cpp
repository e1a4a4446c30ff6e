// CUDA backend: what is CUDA's own (the HIP backend has its twin,
// backends/hip/hip_platform.cpp): the sticky error codes, the device facts,
// page-locked host memory, pointer and stream owners, the primary context,
// and a program's kernels compiled by NVRTC.
#include "cuda_device.hpp"
#include "../common/cache_file.hpp"
#include "../common/dynamic_library.hpp"

#include <accel/environment.hpp>
#include <accel/error.hpp>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <vector>

namespace accel {
namespace cuda {

bool is_sticky(cudaError_t e) {
    // The codes the CUDA Runtime API documents as leaving the process in an
    // inconsistent state ("the process must be terminated and relaunched").
    switch (e) {
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchTimeout:
        case cudaErrorAssert:
        case cudaErrorHardwareStackError:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorInvalidAddressSpace:
        case cudaErrorInvalidPc:
        case cudaErrorLaunchFailure:
        // Added by CUDA 12/13, documented the same way.
        case cudaErrorContained:            // 226: an error contained by the hardware (H100 error containment)
        case cudaErrorTensorMemoryLeak:     // 721
        case cudaErrorMpsClientTerminated:  // 810
        case cudaErrorExternalDevice:       // 911
            return true;
        default:
            return false;
    }
}

namespace {

// Read by backends/cuda/emulation, the stand-in runtime this plugin loads in accel's own tests.
const env::Declaration kEmulationVariable{{"ACCEL_CUDA_EMULATION_FAULTS",
                                           "NAME[@DEVICE]=VALUE entries separated by ; "
                                           "(backends/cuda/emulation/control.h)",
                                           "faults the CUDA emulation injects, for accel's own tests (default: none)",
                                           "the cuda backend"}};

// 13020 -> "13.2" (the encoding of cudaDriverGetVersion/cudaRuntimeGetVersion).
std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

int attribute(cudaDeviceAttr a, int index) {
    int v = 0;
    ACCEL_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, index));
    return v;
}

}  // namespace

std::string no_device_reason(cudaError_t e) {
    int driver = 0, runtime = 0;
    (void)cleared(cudaDriverGetVersion(&driver));  // 0 when no driver is installed
    (void)cleared(cudaRuntimeGetVersion(&runtime));
    const std::string error = "cudaGetDeviceCount: " + describe(e);
    // The oldest driver series of each CUDA major version (the CUDA Toolkit release notes: minimum driver versions).
    const char* floor = runtime / 1000 >= 13 ? "R580" : runtime / 1000 == 12 ? "R525" : "one of its series";
    if (e == cudaErrorInsufficientDriver && driver == 0)
        return "no NVIDIA driver is installed (libcuda.so.1 cannot be loaded): install it (" + std::string(floor) +
               " or newer for this build's CUDA " + version_text(runtime) + ") [" + error + "]";
    if (e == cudaErrorInsufficientDriver)
        return "the NVIDIA driver supports CUDA " + version_text(driver) + ", older than this build's CUDA runtime " +
               version_text(runtime) + ": update the driver to " + floor + " or newer, or use a build for CUDA " +
               std::to_string(driver / 1000) + " [" + error + "]";
    if (e == cudaErrorNoDevice)
        return "the NVIDIA driver (CUDA " + version_text(driver) + ") sees no CUDA device [" + error + "]";
    if (e == cudaErrorStubLibrary)
        return "the libcuda.so.1 found is the toolkit's stub, not a driver: take its folder (lib64/stubs) off the "
               "library path [" + error + "]";
    return "cudaGetDeviceCount failed: " + describe(e);
}

DeviceInfo device_info(int index, int ordinal) {
    cudaDeviceProp p{};
    ACCEL_CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
    int driver = 0, runtime = 0;
    ACCEL_CUDA_CHECK(cudaDriverGetVersion(&driver));
    ACCEL_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    // Clocks come from attributes: CUDA 13 removed them from cudaDeviceProp.
    const int sm_khz = attribute(cudaDevAttrClockRate, ordinal);
    const int mem_khz = attribute(cudaDevAttrMemoryClockRate, ordinal);

    DeviceInfo i = common_device_info(p, index);
    i.vendor = "NVIDIA Corporation";
    i.driver_version = "CUDA driver " + version_text(driver);
    i.runtime_version = "CUDA runtime " + version_text(runtime);
    i.timer = "cudaEvent";
    i.kernel_languages = {"cuda"};  // NVRTC
    unsigned char uuid[16];
    std::memcpy(uuid, p.uuid.bytes, sizeof uuid);
    i.uuid = format_uuid(uuid);
    i.extra.push_back({"CUDA device ordinal", std::to_string(ordinal)});
    i.extra.push_back({"compute capability", std::to_string(p.major) + "." + std::to_string(p.minor)});
    i.extra.push_back({"warp size", std::to_string(p.warpSize) + " threads"});
    i.extra.push_back({"SM clock", std::to_string(sm_khz / 1000) + " MHz"});
    add_memory_facts(i, mem_khz, p.memoryBusWidth, p.l2CacheSize);
    i.extra.push_back({"shared memory per block", std::to_string(p.sharedMemPerBlock / 1024) + " KiB"});
    return i;
}

bool page_locked(const void* p) noexcept {
    cudaPointerAttributes a{};
    return cleared(cudaPointerGetAttributes(&a, p)) == cudaSuccess && a.type == cudaMemoryTypeHost;
}

int device_of_pointer(const void* p) noexcept {
    cudaPointerAttributes a{};
    if (cleared(cudaPointerGetAttributes(&a, p)) != cudaSuccess) return -1;
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? a.device : -1;
}

int device_of_stream(cudaStream_t s) noexcept {
    int d = -1;
    return cleared(cudaStreamGetDevice(s, &d)) == cudaSuccess ? d : -1;
}

std::uint64_t primary_context(int ordinal) {
    // cuCtxGetCurrent through the runtime's driver entry points: the plugin
    // links no libcuda. The device is current, so its primary context is.
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cleared(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &status)) !=
            cudaSuccess ||
        !fn)
        throw Unsupported("the CUDA runtime gives no driver entry point cuCtxGetCurrent for device " +
                          std::to_string(ordinal) + ", so no context (the device ordinal is available)");
    void* context = nullptr;
    if (reinterpret_cast<int (*)(void**)>(fn)(&context) != 0 || !context)
        throw DeviceError("cuCtxGetCurrent gave no context for CUDA device " + std::to_string(ordinal), 0, "");
    return reinterpret_cast<std::uint64_t>(context);
}

namespace {

// NVRTC, loaded at the first build (dlopen): the plugin links only cudart
// and cuBLAS, and a program that builds no kernel of its own never needs
// it. Its C API is declared here, so that the CUDA emulation compiles this
// file without the toolkit (and compiles with the real NVRTC all the same).
using nvrtcResult = int;  // NVRTC_SUCCESS = 0
struct NvrtcProgramImpl;
using nvrtcProgram = NvrtcProgramImpl*;

struct Nvrtc {
    std::string missing;  ///< why NVRTC could not be loaded, or empty
    const char* (*error_string)(nvrtcResult) = nullptr;
    nvrtcResult (*version)(int*, int*) = nullptr;
    nvrtcResult (*num_archs)(int*) = nullptr;
    nvrtcResult (*archs)(int*) = nullptr;
    nvrtcResult (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
    nvrtcResult (*destroy)(nvrtcProgram*) = nullptr;
    nvrtcResult (*compile)(nvrtcProgram, int, const char* const*) = nullptr;
    nvrtcResult (*ptx_size)(nvrtcProgram, std::size_t*) = nullptr;
    nvrtcResult (*ptx)(nvrtcProgram, char*) = nullptr;
    nvrtcResult (*log_size)(nvrtcProgram, std::size_t*) = nullptr;
    nvrtcResult (*log)(nvrtcProgram, char*) = nullptr;
    int major = 0, minor = 0;
};

Nvrtc load_nvrtc() {
    Nvrtc n;
    void* lib = nullptr;
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so"})
        if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
        dl::clear_error();
        n.missing = "NVRTC (libnvrtc.so.13) was not found; install the CUDA toolkit's NVRTC (e.g. the "
                    "cuda-nvrtc-13-0 package) or put its lib folder on LD_LIBRARY_PATH";
        return n;
    }
    dl::bind(lib, n.error_string, "nvrtcGetErrorString", "the NVRTC library found", n.missing);
    dl::bind(lib, n.version, "nvrtcVersion", "the NVRTC library found", n.missing);
    dl::bind(lib, n.num_archs, "nvrtcGetNumSupportedArchs", "the NVRTC library found", n.missing);
    dl::bind(lib, n.archs, "nvrtcGetSupportedArchs", "the NVRTC library found", n.missing);
    dl::bind(lib, n.create, "nvrtcCreateProgram", "the NVRTC library found", n.missing);
    dl::bind(lib, n.destroy, "nvrtcDestroyProgram", "the NVRTC library found", n.missing);
    dl::bind(lib, n.compile, "nvrtcCompileProgram", "the NVRTC library found", n.missing);
    dl::bind(lib, n.ptx_size, "nvrtcGetPTXSize", "the NVRTC library found", n.missing);
    dl::bind(lib, n.ptx, "nvrtcGetPTX", "the NVRTC library found", n.missing);
    dl::bind(lib, n.log_size, "nvrtcGetProgramLogSize", "the NVRTC library found", n.missing);
    dl::bind(lib, n.log, "nvrtcGetProgramLog", "the NVRTC library found", n.missing);
    if (n.missing.empty() && n.version(&n.major, &n.minor) != 0) n.missing = "nvrtcVersion failed";
    return n;  // the library stays loaded for the process
}

const Nvrtc& nvrtc() {
    static const Nvrtc n = load_nvrtc();
    if (!n.missing.empty()) throw Unsupported("cannot compile CUDA C++ at run time: " + n.missing);
    return n;
}

// The newest virtual architecture NVRTC knows that device `ordinal` runs:
// its own compute capability, or the newest below it.
int ptx_arch(const Nvrtc& n, int ordinal) {
    cudaDeviceProp p{};
    ACCEL_CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
    const int device_arch = p.major * 10 + p.minor;
    int count = 0;
    std::vector<int> archs;
    if (n.num_archs(&count) == 0 && count > 0) {
        archs.resize(static_cast<std::size_t>(count));
        if (n.archs(archs.data()) != 0) archs.clear();
    }
    int best = 0;
    for (int a : archs)
        if (a <= device_arch) best = std::max(best, a);
    if (!best)
        throw Unsupported("NVRTC " + std::to_string(n.major) + "." + std::to_string(n.minor) +
                          " compiles for no architecture that CUDA device " + std::to_string(ordinal) +
                          " (compute capability " + std::to_string(p.major) + "." + std::to_string(p.minor) +
                          ") runs");
    return best;
}

// NVRTC's PTX for `code`, or a DeviceError with its log.
std::string compile_ptx(const Nvrtc& n, const KernelSource& s, const std::string& code, int arch,
                        const std::string& what) {
    std::vector<std::string> options{"--gpu-architecture=compute_" + std::to_string(arch), "--std=c++17"};
    std::istringstream extra(s.build_options);
    for (std::string o; extra >> o;) options.push_back(o);
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());

    nvrtcProgram p = nullptr;
    if (nvrtcResult r = n.create(&p, code.c_str(), (s.name + ".cu").c_str(), 0, nullptr, nullptr))
        throw DeviceError(what + ": nvrtcCreateProgram failed: " + n.error_string(r), r, "");
    struct Destroy {
        const Nvrtc& n;
        nvrtcProgram& p;
        ~Destroy() { n.destroy(&p); }
    } destroy{n, p};
    const nvrtcResult r = n.compile(p, static_cast<int>(argv.size()), argv.data());
    std::string log;
    std::size_t size = 0;
    if (n.log_size(p, &size) == 0 && size > 1) {
        log.assign(size, '\0');
        if (n.log(p, &log[0]) != 0) log.clear();
        while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    if (r != 0)
        throw DeviceError(what + ": NVRTC " + std::to_string(n.major) + "." + std::to_string(n.minor) + " failed (" +
                              n.error_string(r) + ") with options '" + s.build_options + "'; compiler log:\n" + log,
                          r, "");
    std::string ptx;
    if (n.ptx_size(p, &size) != 0 || size < 2) throw DeviceError(what + ": NVRTC wrote no PTX", 0, "");
    ptx.assign(size, '\0');
    if (n.ptx(p, &ptx[0]) != 0) throw DeviceError(what + ": nvrtcGetPTX failed", 0, "");
    ptx.resize(std::strlen(ptx.c_str()));
    return ptx;
}

constexpr char kPtxMagic[9] = "accelPTX";

class CudaProgramKernel final : public ProgramKernel {
public:
    CudaProgramKernel(cudaLibrary_t library, cudaKernel_t kernel) : library_(library), kernel_(kernel) {}
    ~CudaProgramKernel() override { (void)cleared(cudaLibraryUnload(library_)); }
    cudaError_t launch(dim3 grid, dim3 block, void** args, cudaStream_t stream) noexcept override {
        (void)cudaGetLastError();  // an earlier call's code, already handled
        return cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), grid, block, args, 0, stream);
    }

private:
    cudaLibrary_t library_;
    cudaKernel_t kernel_;
};

}  // namespace

std::unique_ptr<ProgramKernel> compile_program_kernel(const KernelSource& source, int ordinal, const std::string& what) {
    const Nvrtc& n = nvrtc();
    const int arch = ptx_arch(n, ordinal);
    // The PTX depends on NVRTC's version, the target, the options and the source.
    const std::string key = "NVRTC " + std::to_string(n.major) + "." + std::to_string(n.minor) + "\ncompute_" +
                            std::to_string(arch) + "\n" + source.build_options + "\n" + source.code_for("cuda");
    const std::string file = cache_file::keyed_path("cuda-kernels", key, "ptx");
    const std::vector<unsigned char> cached = cache_file::read_keyed(file, kPtxMagic, key, std::uint64_t{64} << 20);
    std::string ptx(cached.begin(), cached.end());
    const bool from_cache = !ptx.empty() && ptx.find('\0') == std::string::npos;
    if (!from_cache) ptx = compile_ptx(n, source, source.code_for("cuda"), arch, what);

    cudaLibrary_t library = nullptr;
    ACCEL_CUDA_CHECK(cudaLibraryLoadData(&library, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    cudaKernel_t kernel = nullptr;
    const cudaError_t e = cudaLibraryGetKernel(&kernel, library, source.name.c_str());
    if (e != cudaSuccess) {
        (void)cleared(e);
        (void)cleared(cudaLibraryUnload(library));
        if (e == cudaErrorSymbolNotFound)
            throw InvalidArgument(what + ": the compiled code has no kernel named '" + source.name +
                                  "' (is it declared extern \"C\" __global__ void " + source.name +
                                  "(...) in KernelSource::code[\"cuda\"]?)");
        ACCEL_CUDA_CHECK(e);
    }
    if (!from_cache)
        cache_file::write_keyed(file, kPtxMagic, key, reinterpret_cast<const unsigned char*>(ptx.data()), ptx.size());
    return std::make_unique<CudaProgramKernel>(library, kernel);
}

}  // namespace cuda
}  // namespace accel
