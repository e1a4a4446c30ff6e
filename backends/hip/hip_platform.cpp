// HIP backend: what is HIP's own, the twin of backends/cuda/cuda_platform.cpp
// (the rest of the backend is the CUDA backend's sources compiled as HIP, see
// cuda_to_hip.h): the sticky error codes, the device facts, page-locked host
// memory.
#include "../cuda/cuda_device.hpp"

#include <accel/error.hpp>

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

    DeviceInfo i = common_device_info(p, index);
    i.vendor = "Advanced Micro Devices, Inc.";
    i.driver_version = "HIP driver " + version_text(driver);
    i.runtime_version = "HIP runtime " + version_text(runtime);
    i.timer = "hipEvent";
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

}  // namespace cuda
}  // namespace accel
