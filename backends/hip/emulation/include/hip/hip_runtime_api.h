// The HIP runtime API, as far as the HIP backend uses it, for compiling the
// backend as host C++ on accel's emulated HIP runtime (test infrastructure,
// never installed). Names, values and signatures are HIP 5's
// (hip_runtime_api.h); hip_runtime.cpp answers every call through accel's
// CUDA emulation (backends/cuda/emulation), whose kernel language this
// header brings in as well.
#pragma once

// By path: the plugin's include path puts ../../cuda_names first, whose
// cuda_runtime.h is the HIP shim.
#include "../../../../cuda/emulation/include/cuda_runtime.h"

#include <cstddef>

#define HIP_VERSION_MAJOR 5
#define HIP_VERSION_MINOR 2
#define HIP_VERSION_PATCH 0

/// HIP's error codes (the ones the backend and the emulation use).
enum hipError_t {
    hipSuccess = 0,
    hipErrorInvalidValue = 1,
    hipErrorOutOfMemory = 2,
    hipErrorNotInitialized = 3,
    hipErrorDeinitialized = 4,
    hipErrorInvalidConfiguration = 9,
    hipErrorInsufficientDriver = 35,
    hipErrorNoDevice = 100,
    hipErrorInvalidDevice = 101,
    hipErrorNoBinaryForGpu = 209,
    hipErrorECCNotCorrectable = 214,
    hipErrorContextAlreadyInUse = 216,
    hipErrorInvalidResourceHandle = 400,
    hipErrorIllegalState = 401,
    hipErrorNotReady = 600,
    hipErrorIllegalAddress = 700,
    hipErrorLaunchTimeOut = 702,
    hipErrorAssert = 710,
    hipErrorLaunchFailure = 719,
    hipErrorNotSupported = 801,
    hipErrorStreamCaptureUnsupported = 900,
    hipErrorStreamCaptureInvalidated = 901,
    hipErrorUnknown = 999
};

typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef cudaGraph_t hipGraph_t;
typedef cudaGraphExec_t hipGraphExec_t;
enum hipStreamCaptureMode {
    hipStreamCaptureModeGlobal = 0,
    hipStreamCaptureModeThreadLocal = 1,
    hipStreamCaptureModeRelaxed = 2,
};

enum hipMemcpyKind { hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2, hipMemcpyDeviceToDevice = 3 };
enum hipMemoryType { hipMemoryTypeHost = 0, hipMemoryTypeDevice = 1 };
enum hipComputeMode { hipComputeModeDefault = 0, hipComputeModeProhibited = 2, hipComputeModeExclusiveProcess = 3 };
enum hipDeviceAttribute_t {
    hipDeviceAttributeClockRate,
    hipDeviceAttributeComputeMode,
    hipDeviceAttributeMemoryClockRate,
    hipDeviceAttributeWarpSize
};
#define hipStreamNonBlocking 0x01
#define hipEventDisableTiming 0x02

/// The device properties the backend reads.
struct hipDeviceProp_t {
    char name[256];
    std::size_t totalGlobalMem;
    std::size_t sharedMemPerBlock;
    int warpSize;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;        ///< kHz
    int memoryClockRate;  ///< kHz
    int memoryBusWidth;
    int multiProcessorCount;
    int l2CacheSize;
    int pciDomainID, pciBusID, pciDeviceID;
    char gcnArchName[256];
};

struct hipUUID {
    char bytes[16];
};

struct hipPointerAttribute_t {
    hipMemoryType memoryType;
    int device;
    void* devicePointer;
    void* hostPointer;
    int isManaged;
    unsigned allocationFlags;
};

struct hipFuncAttributes {
    int numRegs;
    int maxThreadsPerBlock;
};

typedef void (*hipStreamCallback_t)(hipStream_t stream, hipError_t status, void* userData);

const char* hipGetErrorName(hipError_t e);
const char* hipGetErrorString(hipError_t e);
hipError_t hipGetLastError();
hipError_t hipGetDeviceCount(int* count);
hipError_t hipGetDevice(int* device);
hipError_t hipSetDevice(int device);
hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int device);
hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attr, int device);
hipError_t hipDeviceGetUuid(hipUUID* uuid, int device);
hipError_t hipDriverGetVersion(int* version);
hipError_t hipRuntimeGetVersion(int* version);
hipError_t hipDeviceSynchronize();
hipError_t hipMalloc(void** p, std::size_t bytes);
hipError_t hipFree(void* p);
hipError_t hipHostMalloc(void** p, std::size_t bytes, unsigned flags = 0);
hipError_t hipHostFree(void* p);
hipError_t hipMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes);
hipError_t hipMemcpyAsync(void* dst, const void* src, std::size_t bytes, hipMemcpyKind kind, hipStream_t s);
hipError_t hipPointerGetAttributes(hipPointerAttribute_t* attributes, const void* p);
hipError_t hipStreamAddCallback(hipStream_t s, hipStreamCallback_t callback, void* userData, unsigned flags);
hipError_t hipStreamCreateWithFlags(hipStream_t* s, unsigned flags);
hipError_t hipStreamSynchronize(hipStream_t s);
hipError_t hipStreamDestroy(hipStream_t s);
hipError_t hipEventCreate(hipEvent_t* e);
hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned flags);
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s);
hipError_t hipEventQuery(hipEvent_t e);
hipError_t hipEventSynchronize(hipEvent_t e);
hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t end);
hipError_t hipEventDestroy(hipEvent_t e);
hipError_t hipStreamBeginCapture(hipStream_t s, hipStreamCaptureMode mode);
hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t* graph);
hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* exec, hipGraph_t graph, unsigned long long flags);
hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t s);
hipError_t hipGraphExecDestroy(hipGraphExec_t exec);
hipError_t hipGraphDestroy(hipGraph_t graph);
hipError_t hipFuncGetAttributes(hipFuncAttributes* attr, const void* kernel);
