// CUDA backend: what is CUDA's own (the HIP backend has its twin,
// backends/hip/hip_platform.cpp): the sticky error codes, the device facts,
// page-locked host memory.
#include "cuda_device.hpp"

#include <accel/error.hpp>

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

    DeviceInfo i = common_device_info(p, index);
    i.vendor = "NVIDIA Corporation";
    i.driver_version = "CUDA driver " + version_text(driver);
    i.runtime_version = "CUDA runtime " + version_text(runtime);
    i.timer = "cudaEvent";
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

}  // namespace cuda
}  // namespace accel
