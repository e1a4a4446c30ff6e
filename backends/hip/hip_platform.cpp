// HIP backend: what is HIP's own, the twin of backends/cuda/cuda_platform.cpp
// (the rest of the backend is the CUDA backend's sources compiled as HIP, see
// cuda_to_hip.h): the sticky error codes, the device facts, page-locked host
// memory.
#include "../cuda/cuda_device.hpp"

#include <accel/error.hpp>

#include <cstdio>
#include <cstring>

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

// HIP's version encoding (HIP_VERSION): major·10^7 + minor·10^5 + patch.
std::string version_text(int v) {
    return std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100) + "." + std::to_string(v % 100000);
}

}  // namespace

DeviceInfo device_info(int index, int ordinal) {
    hipDeviceProp_t p{};
    ACCEL_CUDA_CHECK(hipGetDeviceProperties(&p, ordinal));
    int driver = 0, runtime = 0;
    ACCEL_CUDA_CHECK(hipDriverGetVersion(&driver));
    ACCEL_CUDA_CHECK(hipRuntimeGetVersion(&runtime));
    hipUUID uuid{};
    ACCEL_CUDA_CHECK(hipDeviceGetUuid(&uuid, ordinal));

    DeviceInfo i;
    i.backend = ACCEL_GPU_BACKEND;
    i.index = index;
    i.name = p.name;
    i.vendor = "Advanced Micro Devices, Inc.";
    i.type = "gpu";
    i.driver_version = "HIP driver " + version_text(driver);
    i.runtime_version = "HIP runtime " + version_text(runtime);
    i.compute_units = p.multiProcessorCount;
    i.global_memory_bytes = p.totalGlobalMem;
    i.limits.max_block_size = static_cast<std::size_t>(p.maxThreadsPerBlock);
    i.limits.max_block_dims = {static_cast<std::size_t>(p.maxThreadsDim[0]), static_cast<std::size_t>(p.maxThreadsDim[1]),
                               static_cast<std::size_t>(p.maxThreadsDim[2])};
    i.limits.max_grid_dims = {static_cast<std::size_t>(p.maxGridSize[0]), static_cast<std::size_t>(p.maxGridSize[1]),
                              static_cast<std::size_t>(p.maxGridSize[2])};
    i.timer = "hipEvent";
    unsigned char bytes[16];
    std::memcpy(bytes, uuid.bytes, sizeof bytes);
    i.uuid = format_uuid(bytes);
    i.pci_bus_id = format_pci_bus_id(static_cast<unsigned>(p.pciDomainID), static_cast<unsigned>(p.pciBusID),
                                     static_cast<unsigned>(p.pciDeviceID), 0);
    char buf[96];
    i.extra.push_back({"HIP device ordinal", std::to_string(ordinal)});
    i.extra.push_back({"architecture", p.gcnArchName});
    i.extra.push_back({"wavefront size", std::to_string(p.warpSize) + " threads"});
    i.extra.push_back({"compute unit clock", std::to_string(p.clockRate / 1000) + " MHz"});
    i.extra.push_back({"memory clock", std::to_string(p.memoryClockRate / 1000) + " MHz"});
    i.extra.push_back({"memory bus width", std::to_string(p.memoryBusWidth) + " bit"});
    // Double data rate: two transfers per memory clock.
    std::snprintf(buf, sizeof buf, "%.1f GB/s (2 x memory clock x bus width)",
                  2.0 * p.memoryClockRate * 1e3 * (p.memoryBusWidth / 8.0) / 1e9);
    i.extra.push_back({"theoretical memory bandwidth", buf});
    i.extra.push_back({"L2 cache", std::to_string(p.l2CacheSize / 1024) + " KiB"});
    i.extra.push_back({"LDS per block", std::to_string(p.sharedMemPerBlock / 1024) + " KiB"});
    i.extra.push_back({"kernels built for", ACCEL_GPU_ARCHS});
    i.extra.push_back({"async host copies", "pinned staging buffers (at most 256 MiB); device-to-host into pinned memory direct"});
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

}  // namespace cuda
}  // namespace accel
