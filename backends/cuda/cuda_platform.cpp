// CUDA backend: what is CUDA's own (the HIP backend has its twin,
// backends/hip/hip_platform.cpp): the sticky error codes, the device facts,
// page-locked host memory.
#include "cuda_device.hpp"

#include <accel/error.hpp>

#include <cstdio>
#include <cstring>

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

// 13020 -> "13.2" (the encoding of cudaDriverGetVersion/cudaRuntimeGetVersion).
std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

int attribute(cudaDeviceAttr a, int index) {
    int v = 0;
    ACCEL_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, index));
    return v;
}

}  // namespace

DeviceInfo device_info(int index, int ordinal) {
    cudaDeviceProp p{};
    ACCEL_CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
    int driver = 0, runtime = 0;
    ACCEL_CUDA_CHECK(cudaDriverGetVersion(&driver));
    ACCEL_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    // Clocks come from attributes: CUDA 13 removed them from cudaDeviceProp.
    const int sm_khz = attribute(cudaDevAttrClockRate, ordinal);
    const int mem_khz = attribute(cudaDevAttrMemoryClockRate, ordinal);

    DeviceInfo i;
    i.backend = "cuda";
    i.index = index;
    i.name = p.name;
    i.vendor = "NVIDIA Corporation";
    i.type = "gpu";
    i.driver_version = "CUDA driver " + version_text(driver);
    i.runtime_version = "CUDA runtime " + version_text(runtime);
    i.compute_units = p.multiProcessorCount;
    i.global_memory_bytes = p.totalGlobalMem;
    i.limits.max_block_size = static_cast<std::size_t>(p.maxThreadsPerBlock);
    i.limits.max_block_dims = {static_cast<std::size_t>(p.maxThreadsDim[0]), static_cast<std::size_t>(p.maxThreadsDim[1]),
                               static_cast<std::size_t>(p.maxThreadsDim[2])};
    i.limits.max_grid_dims = {static_cast<std::size_t>(p.maxGridSize[0]), static_cast<std::size_t>(p.maxGridSize[1]),
                              static_cast<std::size_t>(p.maxGridSize[2])};
    i.timer = "cudaEvent";
    unsigned char uuid[16];
    std::memcpy(uuid, p.uuid.bytes, sizeof uuid);
    i.uuid = format_uuid(uuid);
    i.pci_bus_id = format_pci_bus_id(static_cast<unsigned>(p.pciDomainID), static_cast<unsigned>(p.pciBusID),
                                     static_cast<unsigned>(p.pciDeviceID), 0);
    char buf[96];
    i.extra.push_back({"CUDA device ordinal", std::to_string(ordinal)});
    i.extra.push_back({"compute capability", std::to_string(p.major) + "." + std::to_string(p.minor)});
    i.extra.push_back({"warp size", std::to_string(p.warpSize) + " threads"});
    i.extra.push_back({"SM clock", std::to_string(sm_khz / 1000) + " MHz"});
    i.extra.push_back({"memory clock", std::to_string(mem_khz / 1000) + " MHz"});
    i.extra.push_back({"memory bus width", std::to_string(p.memoryBusWidth) + " bit"});
    // Double data rate: two transfers per memory clock.
    std::snprintf(buf, sizeof buf, "%.1f GB/s (2 x memory clock x bus width)",
                  2.0 * mem_khz * 1e3 * (p.memoryBusWidth / 8.0) / 1e9);
    i.extra.push_back({"theoretical memory bandwidth", buf});
    i.extra.push_back({"L2 cache", std::to_string(p.l2CacheSize / 1024) + " KiB"});
    i.extra.push_back({"shared memory per block", std::to_string(p.sharedMemPerBlock / 1024) + " KiB"});
    i.extra.push_back({"kernels built for", ACCEL_GPU_ARCHS});
    i.extra.push_back({"async host copies", "pinned staging buffers (at most 256 MiB); device-to-host into pinned memory direct"});
    return i;
}

bool page_locked(const void* p) noexcept {
    cudaPointerAttributes a{};
    return cleared(cudaPointerGetAttributes(&a, p)) == cudaSuccess && a.type == cudaMemoryTypeHost;
}

}  // namespace cuda
}  // namespace accel
