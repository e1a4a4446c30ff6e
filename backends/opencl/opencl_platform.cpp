// OpenCL backend, the platforms: error names, the devices of every platform
// in the backend's order, and each device's facts (DeviceInfo, the gemm
// parameters and tiles chosen for it). Declared in opencl_device.hpp.
#include "opencl_device.hpp"
#include "../common/device_names.hpp"

#include <accel/error.hpp>

#include <CL/cl_ext.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace accel {
namespace opencl {

const char* cl_error_name(cl_int code) noexcept {
    switch (code) {
#define ACCEL_CL_ERROR(name) \
    case name: return #name;
        ACCEL_CL_ERROR(CL_SUCCESS)
        ACCEL_CL_ERROR(CL_DEVICE_NOT_FOUND)
        ACCEL_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
        ACCEL_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
        ACCEL_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        ACCEL_CL_ERROR(CL_OUT_OF_RESOURCES)
        ACCEL_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
        ACCEL_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
        ACCEL_CL_ERROR(CL_MEM_COPY_OVERLAP)
        ACCEL_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
        ACCEL_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        ACCEL_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
        ACCEL_CL_ERROR(CL_MAP_FAILURE)
        ACCEL_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        ACCEL_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        ACCEL_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
        ACCEL_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
        ACCEL_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
        ACCEL_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
        ACCEL_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
        ACCEL_CL_ERROR(CL_INVALID_VALUE)
        ACCEL_CL_ERROR(CL_INVALID_DEVICE_TYPE)
        ACCEL_CL_ERROR(CL_INVALID_PLATFORM)
        ACCEL_CL_ERROR(CL_INVALID_DEVICE)
        ACCEL_CL_ERROR(CL_INVALID_CONTEXT)
        ACCEL_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
        ACCEL_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
        ACCEL_CL_ERROR(CL_INVALID_HOST_PTR)
        ACCEL_CL_ERROR(CL_INVALID_MEM_OBJECT)
        ACCEL_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        ACCEL_CL_ERROR(CL_INVALID_IMAGE_SIZE)
        ACCEL_CL_ERROR(CL_INVALID_SAMPLER)
        ACCEL_CL_ERROR(CL_INVALID_BINARY)
        ACCEL_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
        ACCEL_CL_ERROR(CL_INVALID_PROGRAM)
        ACCEL_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
        ACCEL_CL_ERROR(CL_INVALID_KERNEL_NAME)
        ACCEL_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
        ACCEL_CL_ERROR(CL_INVALID_KERNEL)
        ACCEL_CL_ERROR(CL_INVALID_ARG_INDEX)
        ACCEL_CL_ERROR(CL_INVALID_ARG_VALUE)
        ACCEL_CL_ERROR(CL_INVALID_ARG_SIZE)
        ACCEL_CL_ERROR(CL_INVALID_KERNEL_ARGS)
        ACCEL_CL_ERROR(CL_INVALID_WORK_DIMENSION)
        ACCEL_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
        ACCEL_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
        ACCEL_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
        ACCEL_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
        ACCEL_CL_ERROR(CL_INVALID_EVENT)
        ACCEL_CL_ERROR(CL_INVALID_OPERATION)
        ACCEL_CL_ERROR(CL_INVALID_GL_OBJECT)
        ACCEL_CL_ERROR(CL_INVALID_BUFFER_SIZE)
        ACCEL_CL_ERROR(CL_INVALID_MIP_LEVEL)
        ACCEL_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
        ACCEL_CL_ERROR(CL_INVALID_PROPERTY)
        ACCEL_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
        ACCEL_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
        ACCEL_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
        ACCEL_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
        ACCEL_CL_ERROR(CL_PLATFORM_NOT_FOUND_KHR)
#undef ACCEL_CL_ERROR
    }
    return "unknown OpenCL error";
}

std::string cl_error_text(const std::string& where, cl_int code) {
    return where + ": " + cl_error_name(code) + " (" + std::to_string(code) + ")";
}

void check_cl(cl_int code, const std::string& where, const std::string& detail) {
    if (code != CL_SUCCESS)
        throw DeviceError("OpenCL call failed in " + cl_error_text(where, code) + detail, code, cl_error_name(code));
}

std::string GemmParams::build_options() const {
    auto d = [](const char* name, std::size_t v) { return std::string(" -D") + name + "=" + std::to_string(v); };
    return d("MM_BX", bx) + d("MM_BY", by) + d("MM_WM", wm) + d("MM_WN", wn) + d("MM_VW", vw) + d("MM_TK", tk) +
           d("MM_KU", ku) + d("MM_FMA", fma) + d("MM_KBREAK", k_break);
}

TuningParams GemmParams::tuning_params() const {
    auto i = [](std::size_t v) { return static_cast<std::int64_t>(v); };
    return {{"bx", i(bx)}, {"by", i(by)}, {"wm", i(wm)}, {"wn", i(wn)}, {"vw", i(vw)}, {"tk", i(tk)}, {"ku", i(ku)}};
}

bool GemmParams::operator==(const GemmParams& o) const noexcept {
    return bx == o.bx && by == o.by && wm == o.wm && wn == o.wn && vw == o.vw && tk == o.tk && ku == o.ku &&
           fma == o.fma && k_break == o.k_break;
}

std::string GemmParams::describe() const {
    auto n = [](std::size_t v) { return std::to_string(v); };
    return "register-blocked gemm, block (" + n(bx) + "," + n(by) + ",1), " + n(tile_rows()) + "x" +
           n(tile_cols()) + " output tile per work-group, " + n(wm) + "x" + n(wn * vw) +
           " per work-item (vectors of " + n(vw) + "), K slice " + n(tk) + (ku > 1 ? " unrolled by " + n(ku) : "") + ", " + n(local_bytes()) +
           " bytes of local memory, " + (fma ? "fma" : "mad") + (k_break ? ", K-tail loop exit" : "") +
           " (build options" + build_options() + ")";
}



// Every device of every platform, in the loader's platform order, the
// simulators' devices last: indices 0 .. (count of real devices - 1) name real
// devices only, and a simulator's index (opened only by name) follows them.
// A platform whose device list cannot be read adds none (the others stay
// usable) and its failure is appended to *problems, so that "no device" says
// why.
std::vector<DeviceRef> all_devices(std::string* problems) {
    cl_uint np = 0;
    check_cl(clGetPlatformIDs(0, nullptr, &np), "clGetPlatformIDs");
    std::vector<cl_platform_id> platforms(np);
    if (np) check_cl(clGetPlatformIDs(np, platforms.data(), nullptr), "clGetPlatformIDs");
    std::vector<DeviceRef> out;
    for (std::size_t pi = 0; pi < platforms.size(); ++pi) {
        cl_platform_id p = platforms[pi];
        cl_uint nd = 0;
        cl_int err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd);
        if (err == CL_DEVICE_NOT_FOUND) continue;  // a platform without devices adds none
        std::vector<cl_device_id> ids(nd);
        if (err == CL_SUCCESS && nd) err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ids.data(), nullptr);
        if (err != CL_SUCCESS) {
            if (problems)
                *problems += "; platform " + std::to_string(pi) + ": " + cl_error_text("clGetDeviceIDs", err);
            continue;
        }
        for (cl_uint i = 0; i < nd; ++i) out.push_back({p, ids[i], static_cast<int>(i)});
    }
    std::stable_partition(out.begin(), out.end(), [](const DeviceRef& r) { return !is_simulator(r.platform); });
    return out;
}


std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
    return s;
}

// A string property through clGet*Info (size query, then the text).
template <class Getter, class Object, class Param>
static std::string info_text(Getter get, const char* call, Object obj, Param what, const char* name) {
    std::size_t n = 0;
    const std::string where = std::string(call) + "(" + name + ")";
    check_cl(get(obj, what, 0, nullptr, &n), where);
    std::string s(n, '\0');
    if (n) check_cl(get(obj, what, n, &s[0], nullptr), where);
    return trimmed(s);
}

static std::string device_text(cl_device_id d, cl_device_info what, const char* name) {
    return info_text(clGetDeviceInfo, "clGetDeviceInfo", d, what, name);
}

static std::string platform_text(cl_platform_id p, cl_platform_info what, const char* name) {
    return info_text(clGetPlatformInfo, "clGetPlatformInfo", p, what, name);
}

#define ACCEL_DEVICE_TEXT(d, what) device_text(d, what, #what)

// "Portable Computing Language" + "The pocl project", lower-cased: what a
// platform part of a selector is matched against.
static std::string platform_identity(cl_platform_id p) {
    return lower(platform_text(p, CL_PLATFORM_NAME, "CL_PLATFORM_NAME") + " " +
                 platform_text(p, CL_PLATFORM_VENDOR, "CL_PLATFORM_VENDOR"));
}

// The platform's short name in stable selectors: "pocl" for PoCL (whose
// name says nothing of it), else the first word of its name: "intel" for
// "Intel(R) OpenCL", "oclgrind", "rusticl", "nvidia", "amd", "clover".
std::string platform_key(cl_platform_id p) {
    const std::string id = platform_identity(p);
    if (id.find("pocl") != std::string::npos) return "pocl";
    std::string word;
    for (char c : id) {
        if (std::isalnum(static_cast<unsigned char>(c))) word += c;
        else if (!word.empty()) break;
    }
    return word.empty() ? "platform" : word;
}

// Simulators (Oclgrind reports itself as every device type at once) never
// count as a GPU for `auto`; they are opened only when named.
bool is_simulator(cl_platform_id p) { return platform_identity(p).find("oclgrind") != std::string::npos; }

bool is_real_gpu(const DeviceRef& r) {
    return (ACCEL_DEVICE_VALUE(cl_device_type, r.device, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) && !is_simulator(r.platform);
}

// opencl:SPEC, SPEC = gpu | cpu | accelerator | PLATFORM[:I] (see registry.hpp).
int find_device_in(const std::vector<DeviceRef>& devices, const std::string& spec) {
    // For the error messages only: every device by its stable selector.
    auto here = [&] {
        std::string listing;
        for (const auto& r : devices)
            listing += (listing.empty() ? "" : ", ") + std::string("opencl:") + platform_key(r.platform) + ":" +
                       std::to_string(r.within_platform) + " (" + ACCEL_DEVICE_TEXT(r.device, CL_DEVICE_NAME) + ")";
        return "; the devices here: " + (listing.empty() ? std::string("none") : listing);
    };
    const cl_device_type type = spec == "gpu" ? CL_DEVICE_TYPE_GPU : spec == "cpu" ? CL_DEVICE_TYPE_CPU
                                : spec == "accelerator" ? CL_DEVICE_TYPE_ACCELERATOR : 0;
    if (type) {
        for (std::size_t i = 0; i < devices.size(); ++i)
            if ((ACCEL_DEVICE_VALUE(cl_device_type, devices[i].device, CL_DEVICE_TYPE) & type) &&
                !is_simulator(devices[i].platform))
                return static_cast<int>(i);
        throw BackendUnavailable("opencl: no " + spec + " device (simulators are opened only by platform name)" + here());
    }
    const auto colon = spec.find(':');
    const std::string name = spec.substr(0, colon);
    const int within = colon == std::string::npos ? 0 : std::stoi(spec.substr(colon + 1));
    std::vector<cl_platform_id> matched;
    for (const auto& r : devices)
        if ((platform_key(r.platform) == name || platform_identity(r.platform).find(name) != std::string::npos) &&
            std::find(matched.begin(), matched.end(), r.platform) == matched.end())
            matched.push_back(r.platform);
    if (matched.empty()) throw BackendUnavailable("opencl: no platform matches '" + name + "'" + here());
    if (matched.size() > 1)
        throw BackendUnavailable("opencl: '" + name + "' matches " + std::to_string(matched.size()) +
                                 " platforms; name one by a longer piece of its name" + here());
    for (std::size_t i = 0; i < devices.size(); ++i)
        if (devices[i].platform == matched[0] && devices[i].within_platform == within) return static_cast<int>(i);
    throw BackendUnavailable("opencl: platform '" + platform_key(matched[0]) + "' has no device " +
                             std::to_string(within) + here());
}

static std::string type_name(cl_device_type t) {
    if (t & CL_DEVICE_TYPE_GPU) return "gpu";
    if (t & CL_DEVICE_TYPE_CPU) return "cpu";
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
    return "other";
}

// A CPU device (CL_DEVICE_TYPE_CPU without GPU; Oclgrind, which reports
// every type, is not one).
bool is_cpu_device(cl_device_id d) {
    const cl_device_type type = ACCEL_DEVICE_VALUE(cl_device_type, d, CL_DEVICE_TYPE);
    return (type & CL_DEVICE_TYPE_CPU) && !(type & CL_DEVICE_TYPE_GPU);
}

// Whether the device reports the CPU type, Oclgrind included: where the
// unstaged GEMM kernels serve the shapes they win (OpenclDevice::gemm_kernel),
// and Oclgrind checks them.
bool reports_cpu_type(cl_device_id d) {
    return (ACCEL_DEVICE_VALUE(cl_device_type, d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
}

// EW_VW, the vector width of the vectorized elementwise kernels: the
// native float vector width on CPUs (16 with AVX-512), between 4 and 16,
// where the compiler then computes one vector per instruction; 4 elsewhere
// (a 16-byte load per work-item on GPUs).
// The largest power of two <= CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT and <= 16
// (an OpenCL C vector size), at least `least`.
static std::size_t native_float_vector(cl_device_id d, std::size_t least) {
    const cl_uint native = ACCEL_DEVICE_VALUE(cl_uint, d, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT);
    std::size_t w = least;
    while (w * 2 <= std::min<cl_uint>(native, 16)) w *= 2;
    return w;
}

std::size_t elementwise_width_for(cl_device_id d) { return is_cpu_device(d) ? native_float_vector(d, 4) : 4; }

// The gemm kernel's parameters for a device, from its facts (the rules are
// the documentation; figures measured at 1024³ on a 2-core AVX-512 Xeon):
//  - CPU devices (CL_DEVICE_TYPE_CPU without GPU): work-groups of 4 × 8
//    work-items, each with an 8 × (2·VW) register tile where VW is
//    CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT (16 with AVX-512: 16 accumulator
//    registers of 32, a 64 × 128 tile per group), K slice 64. A CPU runs one
//    work-group per core at a time, so the group tile only needs to be large
//    enough that staging (TK·(TM + TN) elements) is small against the
//    TM·TN·TK multiply-adds; explicit vectors let the compiler keep the
//    accumulators in registers rather than vectorize across work-items.
//  - other devices (GPUs; Oclgrind, which reports every type): 16 × 16
//    work-items, each 8 rows × 2 vectors of 4 columns (64 accumulators), a
//    128 × 128 tile, K slice 16 (16 KiB of local memory). No GPU was at hand
//    to measure: this is the register-blocked SGEMM shape that CLBlast's
//    tuned parameters for NVIDIA and AMD GPUs converge on (work-groups of
//    8-16 × 8-16, 64-128 wide tiles, K slices of 16-32, vectors of 2-4),
//    where the 64 × 64 tile with 4 × 4 per work-item reached 0.16 of cuBLAS
//    on an H100 (docs/results/gpu-h100-2026-11-27.md). `accel-bench tune`
//    finds the device's own best. Simulators (Oclgrind) keep the 64 × 64
//    tile with 4 × 4 scalars per work-item: a simulated work-item costs
//    thousands of times a real one, and small tiles pad small tests less.
//  - fma() where the device reports CL_FP_FMA for float (the multiply-add is
//    then fused in hardware; PoCL compiles mad() as a multiply and an add),
//    mad() elsewhere.
//  - PoCL only: the slice loop gets a second, K-tail exit. PoCL's kernel
//    compiler puts a barrier into every inner loop with a uniform trip count
//    and a single exit, which runs the work-group loop inside the K loop and
//    keeps the accumulators in memory (10× slower); other compilers lose
//    their own vectorization with the extra exit (Intel's: 13×).
//  - Fit to the device: halve BY, then BX, until the group fits
//    CL_DEVICE_MAX_WORK_GROUP_SIZE and the per-dimension limits; halve TK
//    (down to 4) until both slices fit CL_DEVICE_LOCAL_MEM_SIZE.
GemmParams gemm_params_for(cl_platform_id p, cl_device_id d, const LaunchLimits& l) {
    GemmParams g;
    if (is_cpu_device(d)) {
        g.vw = native_float_vector(d, 1);  // 1, 2, 4, 8 or 16: a vector type
        g.bx = 4;
        g.by = 8;
        g.wm = 8;
        g.wn = 2;
        g.tk = 64;
    } else if (!is_simulator(p)) {
        g.wm = 8;
        g.wn = 2;
        g.vw = 4;
    }
    g.fma = (ACCEL_DEVICE_VALUE(cl_device_fp_config, d, CL_DEVICE_SINGLE_FP_CONFIG) & CL_FP_FMA) != 0;
    g.k_break = platform_key(p) == "pocl";
    while (g.bx * g.by > l.max_block_size || g.by > l.max_block_dims.y || g.bx > l.max_block_dims.x) {
        if (g.by > 1)
            g.by /= 2;
        else if (g.bx > 1)
            g.bx /= 2;
        else
            break;
    }
    const cl_ulong local = ACCEL_DEVICE_VALUE(cl_ulong, d, CL_DEVICE_LOCAL_MEM_SIZE);
    while (g.tk > 4 && g.local_bytes() > local) g.tk /= 2;
    return g;
}

// The gemm tiles of a device (GemmTiles): the general tile from
// gemm_params_for(), and on CPU devices a narrow one derived from it (same
// fma, K-tail exit and vector width VW; fewer work-items and less local
// memory, so it fits wherever the general one does): BY × 1 work-items
// (8 × 1), each 16 rows × one vector of VW columns — 16 accumulator vectors,
// as many as the general tile's 8 × 2 — a (BY·16) × VW tile (128 × 16 with
// AVX-512), K slice min(TK, 32). It serves C with few columns (N ≤ VW: the
// output layer of an MLP, 4096×10×30), where the general tile's 128 columns
// would be more than 90 % padding: measured on a 2-core AVX-512 Xeon at
// 4096×10×30, 0.68 → 3.9 GFLOP/s on PoCL and 0.67 → 3.3 on Intel's runtime
// (CLBlast there: 1.4-3.3). Splitting outputs that fit one general tile
// (dense 64×784×128: one work-group) into 2 or 4 smaller work-groups was
// measured slower on both runtimes, so those keep the general tile.
// Other devices (GPUs, Oclgrind) have the general tile only.
GemmTiles gemm_tiles_for(const GemmParams& general, cl_device_id d) {
    GemmTiles t;
    t.tiles[GemmTiles::general] = general;
    t.count = 1;
    if (!is_cpu_device(d)) return t;
    GemmParams narrow = general;
    narrow.bx = 1;
    narrow.wm = 16;
    narrow.wn = 1;
    narrow.tk = std::min<std::size_t>(general.tk, 32);
    t.tiles[GemmTiles::narrow] = narrow;
    t.count = 2;
    return t;
}

// Whether `extension` is a word of the device's CL_DEVICE_EXTENSIONS.
static bool has_extension(cl_device_id d, const std::string& extension) {
    const std::string list = " " + ACCEL_DEVICE_TEXT(d, CL_DEVICE_EXTENSIONS) + " ";
    return list.find(" " + extension + " ") != std::string::npos;
}

// Whether the device computes in double precision: CL_DEVICE_DOUBLE_FP_CONFIG
// is non-zero (0 means no double; a runtime that does not know the query
// answers with an error) or the device lists cl_khr_fp64.
bool device_has_fp64(cl_device_id d) {
    cl_device_fp_config config = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof config, &config, nullptr) == CL_SUCCESS && config != 0)
        return true;
    return has_extension(d, "cl_khr_fp64");
}

CommandBufferCalls command_buffer_calls(cl_platform_id p, cl_device_id d, std::string& why) {
    CommandBufferCalls calls;
    if (!has_extension(d, "cl_khr_command_buffer")) {
        why = "the device has no cl_khr_command_buffer";
        return calls;
    }
    // CL_DEVICE_EXTENSIONS_WITH_VERSION and cl_name_version (OpenCL 3.0; this
    // build targets 1.2 headers): an array of {cl_version, char[64]}.
    constexpr cl_device_info kExtensionsWithVersion = 0x1060;
    struct NameVersion {
        cl_uint version;
        char name[64];
    };
    std::size_t bytes = 0;
    std::vector<NameVersion> list;
    if (clGetDeviceInfo(d, kExtensionsWithVersion, 0, nullptr, &bytes) == CL_SUCCESS) {
        list.resize(bytes / sizeof(NameVersion));
        if (clGetDeviceInfo(d, kExtensionsWithVersion, list.size() * sizeof(NameVersion), list.data(), nullptr) !=
            CL_SUCCESS)
            list.clear();
    }
    cl_uint version = 0;
    bool found = false;
    for (const NameVersion& e : list)
        if (std::string(e.name, strnlen(e.name, sizeof e.name)) == "cl_khr_command_buffer") {
            version = e.version;
            found = true;
        }
    // cl_version: major in the top 10 bits, minor in the next 10, patch in the low 12.
    const unsigned major = version >> 22, minor = (version >> 12) & 0x3ff, patch = version & 0xfff;
    calls.version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    if (!found) {
        why = "the device reports no version of cl_khr_command_buffer (CL_DEVICE_EXTENSIONS_WITH_VERSION)";
        return {};
    }
    if (major != 0 || minor != 9 || patch > 7) {
        why = "cl_khr_command_buffer " + calls.version + " is not a version accel knows the calls of (0.9.0 to 0.9.7)";
        return {};
    }
    cl_command_queue_properties required = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, sizeof required, &required,
                        nullptr) != CL_SUCCESS ||
        (required & ~static_cast<cl_command_queue_properties>(CL_QUEUE_PROFILING_ENABLE)) != 0) {
        why = "cl_khr_command_buffer needs queue properties accel's queues lack";
        return {};
    }
    cl_device_command_buffer_capabilities_khr caps = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof caps, &caps, nullptr) == CL_SUCCESS)
        calls.simultaneous_use = (caps & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) != 0;
    auto entry = [p](const char* name) { return clGetExtensionFunctionAddressForPlatform(p, name); };
    calls.create = reinterpret_cast<clCreateCommandBufferKHR_fn>(entry("clCreateCommandBufferKHR"));
    calls.kernel = reinterpret_cast<clCommandNDRangeKernelKHR_fn>(entry("clCommandNDRangeKernelKHR"));
    calls.finalize = reinterpret_cast<clFinalizeCommandBufferKHR_fn>(entry("clFinalizeCommandBufferKHR"));
    calls.enqueue = reinterpret_cast<clEnqueueCommandBufferKHR_fn>(entry("clEnqueueCommandBufferKHR"));
    calls.release = reinterpret_cast<clReleaseCommandBufferKHR_fn>(entry("clReleaseCommandBufferKHR"));
    if (!calls) {
        why = "the platform hands out no entry point of cl_khr_command_buffer (clGetExtensionFunctionAddressForPlatform)";
        return {};
    }
    return calls;
}

// UUID (cl_khr_device_uuid) and PCI address (cl_khr_pci_bus_info), each
// queried only when the device lists its extension; empty otherwise.
static void physical_identity(cl_device_id d, DeviceInfo& i) {
    if (has_extension(d, "cl_khr_device_uuid")) {
        unsigned char uuid[CL_UUID_SIZE_KHR] = {};
        static_assert(sizeof uuid == 16, "CL_UUID_SIZE_KHR is 16");
        check_cl(clGetDeviceInfo(d, CL_DEVICE_UUID_KHR, sizeof uuid, uuid, nullptr), "clGetDeviceInfo(CL_DEVICE_UUID_KHR)");
        i.uuid = format_uuid(uuid);
    }
    if (has_extension(d, "cl_khr_pci_bus_info")) {
        const auto pci = ACCEL_DEVICE_VALUE(cl_device_pci_bus_info_khr, d, CL_DEVICE_PCI_BUS_INFO_KHR);
        i.pci_bus_id = format_pci_bus_id(pci.pci_domain, pci.pci_bus, pci.pci_device, pci.pci_function);
    }
}

DeviceInfo make_info(int index, cl_platform_id p, cl_device_id d, int within_platform) {
    DeviceInfo i;
    i.backend = "opencl";
    i.index = index;
    i.stable_selector = "opencl:" + platform_key(p) + ":" + std::to_string(within_platform);
    i.name = ACCEL_DEVICE_TEXT(d, CL_DEVICE_NAME);
    i.vendor = ACCEL_DEVICE_TEXT(d, CL_DEVICE_VENDOR);
    i.type = type_name(ACCEL_DEVICE_VALUE(cl_device_type, d, CL_DEVICE_TYPE));
    i.driver_version = ACCEL_DEVICE_TEXT(d, CL_DRIVER_VERSION);
    const std::string platform = platform_text(p, CL_PLATFORM_NAME, "CL_PLATFORM_NAME");
    // The implementation and its version: what tells two vendors' runtimes on one device apart.
    i.runtime_version =
        i.driver_version.rfind(platform, 0) == 0 ? i.driver_version : platform + " " + i.driver_version;
    i.compute_units = static_cast<int>(ACCEL_DEVICE_VALUE(cl_uint, d, CL_DEVICE_MAX_COMPUTE_UNITS));
    i.global_memory_bytes = ACCEL_DEVICE_VALUE(cl_ulong, d, CL_DEVICE_GLOBAL_MEM_SIZE);

    i.limits.max_block_size = ACCEL_DEVICE_VALUE(std::size_t, d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    const cl_uint dims = ACCEL_DEVICE_VALUE(cl_uint, d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
    std::vector<std::size_t> sizes(std::max<cl_uint>(dims, 3), 1);
    check_cl(clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof(std::size_t), sizes.data(), nullptr),
             "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)");
    i.limits.max_block_dims = {sizes[0], sizes[1], sizes[2]};
    // OpenCL limits only the global size (a size_t of the device); keep
    // grid × block within it and within 2^31 - 1 blocks per dimension.
    const cl_uint bits = ACCEL_DEVICE_VALUE(cl_uint, d, CL_DEVICE_ADDRESS_BITS);
    const std::uint64_t global_max = bits >= 64 ? std::numeric_limits<std::uint64_t>::max() : (1ull << bits) - 1;
    const std::size_t grid_max =
        static_cast<std::size_t>(std::min<std::uint64_t>(2147483647u, global_max / i.limits.max_block_size));
    i.limits.max_grid_dims = {grid_max, grid_max, grid_max};
    i.timer = "OpenCL profiling events (CL_PROFILING_COMMAND_END of queue markers)";
    i.kernel_languages = {"opencl"};
    i.determinism = {true, true,
                     "a product's element is one work-item's sum over k in an order fixed by K, the transposes "
                     "and the tile, which follows the output's columns only; column_sum splits columns; no "
                     "atomics"};
    physical_identity(d, i);

    const GemmParams gemm = gemm_params_for(p, d, i.limits);
    i.extra.push_back({"platform", platform + " (" + platform_text(p, CL_PLATFORM_VERSION, "CL_PLATFORM_VERSION") +
                                       ", " + platform_text(p, CL_PLATFORM_VENDOR, "CL_PLATFORM_VENDOR") + ")"});
    i.extra.push_back({"OpenCL C version", ACCEL_DEVICE_TEXT(d, CL_DEVICE_OPENCL_C_VERSION)});
    i.extra.push_back({"local memory", std::to_string(ACCEL_DEVICE_VALUE(cl_ulong, d, CL_DEVICE_LOCAL_MEM_SIZE)) +
                                           " bytes"});
    i.extra.push_back({"max allocation", std::to_string(ACCEL_DEVICE_VALUE(cl_ulong, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE)) +
                                             " bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)"});
    i.extra.push_back({"matmul kernel", gemm.describe()});
    const GemmTiles tiles = gemm_tiles_for(gemm, d);
    if (tiles.count > GemmTiles::narrow)
        i.extra.push_back({"matmul kernel, N <= " + std::to_string(tiles.tiles[GemmTiles::narrow].tile_cols()),
                           tiles.tiles[GemmTiles::narrow].describe()});
    if (reports_cpu_type(d))
        i.extra.push_back({"matmul kernels, unstaged",
                           "the same tiles from global memory, no local memory: K <= " +
                               std::to_string(kDirectGemmMaxK) + ", then A·Bᵀ (dense) as dot products, M <= " +
                               std::to_string(kDirectGemmMaxM) + ", Aᵀ·B (weight gradients) by rows (the last two "
                               "where the tile's vector widths allow); in f32, A·Bᵀ with K < " +
                               std::to_string(kShortDotK) + " as A·(Bᵀ transposed once), Aᵀ·B with N < " +
                               std::to_string(kShortDotK) + " as the transpose of Bᵀ·A"});
    i.extra.push_back({"elementwise vector width",
                       std::to_string(elementwise_width_for(d)) +
                           " (sigmoid, bce_with_logits, bce_with_logits_backward in f32, and add except on CPU "
                           "devices, where it takes one element per work-item in work-groups of up to 4096; build "
                           "options EW_VW, ADD_VW)"});
    const char* dtypes = device_has_fp64(d) ? "f32, f64, f16, bf16" : "f32, f16, bf16 (no f64: no cl_khr_fp64)";
    i.extra.push_back({"dtypes", std::string(dtypes) + "; one program per dtype, built on its first use"});
    i.extra.push_back({"vendor BLAS", vendor_blas_description()});
    std::string why;
    const CommandBufferCalls calls = command_buffer_calls(p, d, why);
    i.extra.push_back({"command buffers", calls ? "cl_khr_command_buffer " + calls.version +
                                                      (calls.simultaneous_use ? " (simultaneous use)" : "") +
                                                      ": graphs replay through them"
                                                : why + ": graphs replay call by call"});
    return i;
}

}  // namespace opencl
}  // namespace accel
