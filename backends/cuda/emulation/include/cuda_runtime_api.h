// The CUDA runtime API as far as the CUDA backend uses it, answered on the
// CPU by accel's CUDA emulation (backends/cuda/emulation/runtime.cpp).
//
// Test infrastructure: the CUDA plugin's own sources are compiled a second
// time as host C++ against this header (instead of the toolkit's) to build an
// emulated `cuda` plugin that the tests load. Names, signatures and numeric
// codes are those of the CUDA 13 runtime, so that the plugin's source reads
// the same under nvcc and here; semantics follow the CUDA Runtime API
// reference where the plugin depends on them (see runtime.cpp).
#pragma once

#include <cstddef>

/// Error codes (values of CUDA 13's driver_types.h).
enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorCudartUnloading = 4,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorStubLibrary = 34,
    cudaErrorInsufficientDriver = 35,
    cudaErrorDevicesUnavailable = 46,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorNoKernelImageForDevice = 209,
    cudaErrorInvalidPtx = 218,
    cudaErrorJitCompilerNotFound = 221,
    cudaErrorUnsupportedPtxVersion = 222,
    cudaErrorContained = 226,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalState = 401,
    cudaErrorSymbolNotFound = 500,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchTimeout = 702,
    cudaErrorAssert = 710,
    cudaErrorHardwareStackError = 714,
    cudaErrorIllegalInstruction = 715,
    cudaErrorMisalignedAddress = 716,
    cudaErrorInvalidAddressSpace = 717,
    cudaErrorInvalidPc = 718,
    cudaErrorLaunchFailure = 719,
    cudaErrorTensorMemoryLeak = 721,
    cudaErrorNotSupported = 801,
    cudaErrorMpsClientTerminated = 810,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorExternalDevice = 911,
    cudaErrorUnknown = 999,
};
typedef enum cudaError cudaError_t;

/// Direction of a copy.
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

/// Device attributes read by the plugin (values of CUDA 13).
enum cudaDeviceAttr {
    cudaDevAttrWarpSize = 10,
    cudaDevAttrClockRate = 13,
    cudaDevAttrComputeMode = 20,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
};

/// Compute modes (nvidia-smi -c).
enum cudaComputeMode {
    cudaComputeModeDefault = 0,
    cudaComputeModeExclusive = 1,
    cudaComputeModeProhibited = 2,
    cudaComputeModeExclusiveProcess = 3,
};

/// Flags of cudaStreamCreateWithFlags / cudaEventCreateWithFlags.
#define cudaStreamNonBlocking 0x01
#define cudaEventDisableTiming 0x02

/// Calling convention of host callbacks (none on the CPU).
#define CUDART_CB

/// Grid and block extents (unsigned, x fastest), as CUDA's.
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

typedef struct CUstream_st* cudaStream_t;  ///< an emulated stream (null: the device's legacy stream)
typedef struct CUevent_st* cudaEvent_t;    ///< an emulated event
typedef void (*cudaHostFn_t)(void* userData);

/// What memory a pointer points to (cudaPointerGetAttributes).
enum cudaMemoryType {
    cudaMemoryTypeUnregistered = 0,  ///< pageable host memory CUDA does not know
    cudaMemoryTypeHost = 1,          ///< page-locked host memory (cudaMallocHost)
    cudaMemoryTypeDevice = 2,        ///< device memory (cudaMalloc)
    cudaMemoryTypeManaged = 3,
};

/// cudaPointerGetAttributes's answer (the fields the plugin reads).
struct cudaPointerAttributes {
    cudaMemoryType type;
    int device;
    void* devicePointer;
    void* hostPointer;
};

/// A device UUID (16 bytes), as cudaUUID_t.
struct cudaUUID_t {
    char bytes[16];
};

/// The device properties the plugin reads.
struct cudaDeviceProp {
    char name[256];
    std::size_t totalGlobalMem;
    std::size_t sharedMemPerBlock;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int major, minor;
    int multiProcessorCount;
    int warpSize;
    int memoryBusWidth;
    int l2CacheSize;
    cudaUUID_t uuid;
    int pciBusID, pciDeviceID, pciDomainID;
};

/// What cudaFuncGetAttributes reports (fields the plugin reads).
struct cudaFuncAttributes {
    int numRegs;
    int binaryVersion;
    int ptxVersion;
    int maxThreadsPerBlock;
};

// ---- the runtime calls (semantics: the CUDA Runtime API reference) --------
const char* cudaGetErrorName(cudaError_t e);
const char* cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaInitDevice(int device, unsigned deviceFlags, unsigned flags);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaMalloc(void** p, std::size_t bytes);
cudaError_t cudaFree(void* p);
cudaError_t cudaMallocHost(void** p, std::size_t bytes);
cudaError_t cudaFreeHost(void* p);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* p);
cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t s);
cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* userData);
cudaError_t cudaEventCreate(cudaEvent_t* e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaStreamGetDevice(cudaStream_t s, int* device);

// ---- stream capture and graphs (graphs.cpp): a graph is the list of tasks
// its capture recorded, run in order; every capture mode behaves as relaxed.
typedef struct CUgraph_st* cudaGraph_t;          ///< a captured graph
typedef struct CUgraphExec_st* cudaGraphExec_t;  ///< a graph instantiated for launching
enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2,
};
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph);
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);

// ---- code loaded at run time (a program's own kernels; runtime_modules.cpp):
// the emulation takes PTX text (what NVRTC wrote), finds a kernel by its
// .entry, and runs no device code: launching one answers cudaErrorNotSupported.
typedef struct CUlib_st* cudaLibrary_t;
typedef struct CUkern_st* cudaKernel_t;
enum cudaJitOption : int {};
enum cudaLibraryOption : int {};
cudaError_t cudaLibraryLoadData(cudaLibrary_t* library, const void* code, cudaJitOption* jitOptions,
                                void** jitOptionsValues, unsigned numJitOptions, cudaLibraryOption* libraryOptions,
                                void** libraryOptionValues, unsigned numLibraryOptions);
cudaError_t cudaLibraryGetKernel(cudaKernel_t* kernel, cudaLibrary_t library, const char* name);
cudaError_t cudaLibraryUnload(cudaLibrary_t library);
cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, std::size_t sharedMem,
                             cudaStream_t stream);
/// The emulation has no driver API: every symbol answers cudaErrorSymbolNotFound.
enum cudaDriverEntryPointQueryResult { cudaDriverEntryPointSuccess = 0, cudaDriverEntryPointSymbolNotFound = 1 };
#define cudaEnableDefault 0
cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** fn, unsigned cudaVersion,
                                             unsigned long long flags, cudaDriverEntryPointQueryResult* status);
