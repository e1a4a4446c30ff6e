// accel's emulated HIP runtime: the HIP calls of the HIP backend
// (include/hip/hip_runtime_api.h), each answered by accel's CUDA emulation
// (backends/cuda/emulation/runtime.cpp, linked into the same plugin) with
// its code translated to HIP's; and the rocBLAS entry points hip_vendor.cpp
// binds, answered by the emulation's reference GEMM (rocblas_emulation.h).
//
// Test infrastructure. The emulated devices are AMD-like: a wavefront of
// the "warp_size" setting (64 by default, as CDNA; 32 as RDNA), set through
// ACCEL_HIP_EMULATION_FAULTS or accel_cuda_emulation_fault (control.h).
#include <hip/hip_runtime_api.h>

#include "rocblas_emulation.h"

#include <cublas_v2.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

// HIP's code for a CUDA emulation code: the same number where HIP has it
// (HIP keeps CUDA's numbering), else HIP's nearest.
hipError_t to_hip(cudaError_t e) {
    switch (static_cast<int>(e)) {
        case 46: return hipErrorContextAlreadyInUse;  // cudaErrorDevicesUnavailable: another process holds it
        case 714: case 715: case 718: case 719: case 226: case 721: case 810: case 911:
            return hipErrorLaunchFailure;  // hardware stack, illegal instruction, invalid PC, contained, ...
        case 716: case 717: return hipErrorIllegalAddress;  // misaligned address, invalid address space
        default: return static_cast<hipError_t>(static_cast<int>(e));
    }
}

}  // namespace

const char* hipGetErrorName(hipError_t e) {
    switch (e) {
        case hipSuccess: return "hipSuccess";
        case hipErrorInvalidValue: return "hipErrorInvalidValue";
        case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
        case hipErrorNotInitialized: return "hipErrorNotInitialized";
        case hipErrorDeinitialized: return "hipErrorDeinitialized";
        case hipErrorInvalidConfiguration: return "hipErrorInvalidConfiguration";
        case hipErrorInsufficientDriver: return "hipErrorInsufficientDriver";
        case hipErrorNoDevice: return "hipErrorNoDevice";
        case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
        case hipErrorNoBinaryForGpu: return "hipErrorNoBinaryForGpu";
        case hipErrorECCNotCorrectable: return "hipErrorECCNotCorrectable";
        case hipErrorContextAlreadyInUse: return "hipErrorContextAlreadyInUse";
        case hipErrorInvalidResourceHandle: return "hipErrorInvalidResourceHandle";
        case hipErrorNotReady: return "hipErrorNotReady";
        case hipErrorIllegalAddress: return "hipErrorIllegalAddress";
        case hipErrorLaunchTimeOut: return "hipErrorLaunchTimeOut";
        case hipErrorAssert: return "hipErrorAssert";
        case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
        case hipErrorNotSupported: return "hipErrorNotSupported";
        case hipErrorIllegalState: return "hipErrorIllegalState";
        case hipErrorStreamCaptureUnsupported: return "hipErrorStreamCaptureUnsupported";
        case hipErrorStreamCaptureInvalidated: return "hipErrorStreamCaptureInvalidated";
        default: return "hipErrorUnknown";
    }
}

const char* hipGetErrorString(hipError_t e) {
    switch (e) {
        case hipSuccess: return "no error";
        case hipErrorOutOfMemory: return "out of memory";
        case hipErrorNotReady: return "device not ready";
        case hipErrorIllegalAddress: return "an illegal memory access was encountered";
        case hipErrorLaunchFailure: return "unspecified launch failure";
        case hipErrorContextAlreadyInUse: return "the device is in use by another process";
        case hipErrorNoBinaryForGpu: return "no kernel image is available for execution on the device";
        default: return "error reported by the accel HIP emulation";
    }
}

hipError_t hipGetLastError() { return to_hip(cudaGetLastError()); }
hipError_t hipGetDeviceCount(int* count) { return to_hip(cudaGetDeviceCount(count)); }
hipError_t hipGetDevice(int* device) { return to_hip(cudaGetDevice(device)); }
hipError_t hipSetDevice(int device) { return to_hip(cudaSetDevice(device)); }

hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int device) {
    cudaDeviceProp p{};
    if (const cudaError_t e = cudaGetDeviceProperties(&p, device)) return to_hip(e);
    std::memset(prop, 0, sizeof *prop);
    std::snprintf(prop->name, sizeof prop->name, "accel HIP emulation (CPU, wavefront %d)", p.warpSize);
    // An architecture of that wavefront width: CDNA 2 (64) or RDNA 2 (32).
    std::snprintf(prop->gcnArchName, sizeof prop->gcnArchName, "%s (emulated)", p.warpSize == 64 ? "gfx90a" : "gfx1030");
    prop->totalGlobalMem = p.totalGlobalMem;
    prop->sharedMemPerBlock = p.sharedMemPerBlock;
    prop->warpSize = p.warpSize;
    prop->maxThreadsPerBlock = p.maxThreadsPerBlock;
    for (int i = 0; i < 3; ++i) prop->maxThreadsDim[i] = p.maxThreadsDim[i], prop->maxGridSize[i] = p.maxGridSize[i];
    prop->memoryBusWidth = p.memoryBusWidth;
    prop->multiProcessorCount = p.multiProcessorCount;
    prop->l2CacheSize = p.l2CacheSize;
    prop->pciDomainID = p.pciDomainID, prop->pciBusID = p.pciBusID, prop->pciDeviceID = p.pciDeviceID;
    return hipSuccess;
}

hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attr, int device) {
    cudaDeviceAttr a = cudaDevAttrClockRate;
    switch (attr) {
        case hipDeviceAttributeClockRate: a = cudaDevAttrClockRate; break;
        case hipDeviceAttributeComputeMode: a = cudaDevAttrComputeMode; break;
        case hipDeviceAttributeMemoryClockRate: a = cudaDevAttrMemoryClockRate; break;
        case hipDeviceAttributeWarpSize: a = cudaDevAttrWarpSize; break;
    }
    return to_hip(cudaDeviceGetAttribute(value, a, device));
}

hipError_t hipDeviceGetUuid(hipUUID* uuid, int device) {
    cudaDeviceProp p{};
    if (const cudaError_t e = cudaGetDeviceProperties(&p, device)) return to_hip(e);
    std::memcpy(uuid->bytes, p.uuid.bytes, sizeof uuid->bytes);
    uuid->bytes[0] = 'h';  // not the emulated CUDA device's UUID: another device
    return hipSuccess;
}

hipError_t hipDriverGetVersion(int* version) {
    *version = 50200000;  // 5.2.0 in HIP_VERSION's encoding
    return hipSuccess;
}
hipError_t hipRuntimeGetVersion(int* version) { return hipDriverGetVersion(version); }
hipError_t hipDeviceSynchronize() { return to_hip(cudaDeviceSynchronize()); }
hipError_t hipMalloc(void** p, std::size_t bytes) { return to_hip(cudaMalloc(p, bytes)); }
hipError_t hipFree(void* p) { return to_hip(cudaFree(p)); }
hipError_t hipHostMalloc(void** p, std::size_t bytes, unsigned) { return to_hip(cudaMallocHost(p, bytes)); }
hipError_t hipHostFree(void* p) { return to_hip(cudaFreeHost(p)); }
hipError_t hipMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
    return to_hip(cudaMemGetInfo(free_bytes, total_bytes));
}

hipError_t hipMemcpyAsync(void* dst, const void* src, std::size_t bytes, hipMemcpyKind kind, hipStream_t s) {
    const cudaMemcpyKind k = kind == hipMemcpyHostToDevice   ? cudaMemcpyHostToDevice
                             : kind == hipMemcpyDeviceToHost ? cudaMemcpyDeviceToHost
                                                             : cudaMemcpyDeviceToDevice;
    return to_hip(cudaMemcpyAsync(dst, src, bytes, k, s));
}

hipError_t hipPointerGetAttributes(hipPointerAttribute_t* attributes, const void* p) {
    cudaPointerAttributes a{};
    if (const cudaError_t e = cudaPointerGetAttributes(&a, p)) return to_hip(e);
    if (a.type != cudaMemoryTypeHost && a.type != cudaMemoryTypeDevice) {
        (void)cudaGetLastError();
        return hipErrorInvalidValue;  // HIP: memory it does not know
    }
    std::memset(attributes, 0, sizeof *attributes);
    attributes->memoryType = a.type == cudaMemoryTypeHost ? hipMemoryTypeHost : hipMemoryTypeDevice;
    attributes->device = a.device;
    attributes->devicePointer = a.devicePointer;
    attributes->hostPointer = a.hostPointer;
    return hipSuccess;
}

namespace {
struct Callback {
    hipStreamCallback_t fn;
    hipStream_t stream;
    void* data;
};
void run_callback(void* p) {
    const Callback c = *static_cast<Callback*>(p);
    delete static_cast<Callback*>(p);
    c.fn(c.stream, hipSuccess, c.data);
}
}  // namespace

hipError_t hipStreamAddCallback(hipStream_t s, hipStreamCallback_t callback, void* userData, unsigned) {
    auto* c = new Callback{callback, s, userData};
    const cudaError_t e = cudaLaunchHostFunc(s, run_callback, c);
    if (e != cudaSuccess) delete c;
    return to_hip(e);
}

hipError_t hipStreamCreateWithFlags(hipStream_t* s, unsigned flags) { return to_hip(cudaStreamCreateWithFlags(s, flags)); }
hipError_t hipStreamSynchronize(hipStream_t s) { return to_hip(cudaStreamSynchronize(s)); }
hipError_t hipStreamDestroy(hipStream_t s) { return to_hip(cudaStreamDestroy(s)); }
hipError_t hipEventCreate(hipEvent_t* e) { return to_hip(cudaEventCreate(e)); }
hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned flags) {
    return to_hip(cudaEventCreateWithFlags(e, flags == hipEventDisableTiming ? cudaEventDisableTiming : flags));
}
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) { return to_hip(cudaEventRecord(e, s)); }
hipError_t hipStreamBeginCapture(hipStream_t s, hipStreamCaptureMode mode) {
    return to_hip(cudaStreamBeginCapture(s, static_cast<cudaStreamCaptureMode>(mode)));
}
hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t* graph) { return to_hip(cudaStreamEndCapture(s, graph)); }
hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* exec, hipGraph_t graph, unsigned long long flags) {
    return to_hip(cudaGraphInstantiateWithFlags(exec, graph, flags));
}
hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t s) { return to_hip(cudaGraphLaunch(exec, s)); }
hipError_t hipGraphExecDestroy(hipGraphExec_t exec) { return to_hip(cudaGraphExecDestroy(exec)); }
hipError_t hipGraphDestroy(hipGraph_t graph) { return to_hip(cudaGraphDestroy(graph)); }
hipError_t hipEventQuery(hipEvent_t e) { return to_hip(cudaEventQuery(e)); }
hipError_t hipEventSynchronize(hipEvent_t e) { return to_hip(cudaEventSynchronize(e)); }
hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t end) {
    return to_hip(cudaEventElapsedTime(ms, start, end));
}
hipError_t hipEventDestroy(hipEvent_t e) { return to_hip(cudaEventDestroy(e)); }

hipError_t hipFuncGetAttributes(hipFuncAttributes* attr, const void*) {
    cudaFuncAttributes a{};
    const cudaError_t e = accel::cuda::emulation::func_attributes(&a);
    attr->numRegs = a.numRegs;
    attr->maxThreadsPerBlock = a.maxThreadsPerBlock;
    return to_hip(e);
}

// ---- rocBLAS, on the emulation's reference GEMM ---------------------------------

namespace {

using rocblas_status = int;
constexpr rocblas_status kSuccess = 0, kInvalidValue = 11, kInternalError = 6;

rocblas_status to_rocblas(cublasStatus_t s) {
    return s == CUBLAS_STATUS_SUCCESS ? kSuccess : s == CUBLAS_STATUS_INVALID_VALUE ? kInvalidValue : kInternalError;
}
cublasOperation_t op(int rocblas_operation) { return rocblas_operation == 112 ? CUBLAS_OP_T : CUBLAS_OP_N; }
bool type_of(int rocblas_datatype, cudaDataType& t) {
    switch (rocblas_datatype) {
        case 150: t = CUDA_R_16F; return true;
        case 151: t = CUDA_R_32F; return true;
        case 168: t = CUDA_R_16BF; return true;
        default: return false;
    }
}

rocblas_status create_handle(void** handle) {
    cublasHandle_t h = nullptr;
    const rocblas_status s = to_rocblas(cublasCreate(&h));
    *handle = h;
    return s;
}
rocblas_status destroy_handle(void* handle) { return to_rocblas(cublasDestroy(static_cast<cublasHandle_t>(handle))); }
rocblas_status set_stream(void* handle, hipStream_t s) {
    return to_rocblas(cublasSetStream(static_cast<cublasHandle_t>(handle), s));
}
rocblas_status sgemm(void* h, int ta, int tb, int m, int n, int k, const float* alpha, const float* a, int lda,
                     const float* b, int ldb, const float* beta, float* c, int ldc) {
    return to_rocblas(cublasSgemm(static_cast<cublasHandle_t>(h), op(ta), op(tb), m, n, k, alpha, a, lda, b, ldb, beta,
                                  c, ldc));
}
rocblas_status dgemm(void* h, int ta, int tb, int m, int n, int k, const double* alpha, const double* a, int lda,
                     const double* b, int ldb, const double* beta, double* c, int ldc) {
    return to_rocblas(cublasDgemm(static_cast<cublasHandle_t>(h), op(ta), op(tb), m, n, k, alpha, a, lda, b, ldb, beta,
                                  c, ldc));
}
// D must be C (ldd == ldc) and the compute type f32: what hip_vendor.cpp passes.
rocblas_status gemm_ex(void* h, int ta, int tb, int m, int n, int k, const void* alpha, const void* a, int atype,
                       int lda, const void* b, int btype, int ldb, const void* beta, const void* c, int ctype, int ldc,
                       void* d, int dtype, int ldd, int compute, int, std::int32_t, std::uint32_t) {
    cudaDataType at, bt, ct, dt, comp;
    if (!type_of(atype, at) || !type_of(btype, bt) || !type_of(ctype, ct) || !type_of(dtype, dt) ||
        !type_of(compute, comp) || comp != CUDA_R_32F || d != c || ldd != ldc)
        return kInvalidValue;
    return to_rocblas(cublasGemmEx(static_cast<cublasHandle_t>(h), op(ta), op(tb), m, n, k, alpha, a, at, lda, b, bt,
                                   ldb, beta, d, ct, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}
const char* status_to_string(rocblas_status s) {
    switch (s) {
        case kSuccess: return "rocblas_status_success";
        case kInvalidValue: return "rocblas_status_invalid_value";
        default: return "rocblas_status_internal_error";
    }
}
rocblas_status get_version_string(char* buf, std::size_t len) {
    std::snprintf(buf, len, "emulated");
    return kSuccess;
}

}  // namespace

namespace accel {
namespace cuda {
namespace rocblas_emulation {

void* symbol(const char* name) {
    const std::string n = name;
    if (n == "rocblas_create_handle") return reinterpret_cast<void*>(&create_handle);
    if (n == "rocblas_destroy_handle") return reinterpret_cast<void*>(&destroy_handle);
    if (n == "rocblas_set_stream") return reinterpret_cast<void*>(&set_stream);
    if (n == "rocblas_sgemm") return reinterpret_cast<void*>(&sgemm);
    if (n == "rocblas_dgemm") return reinterpret_cast<void*>(&dgemm);
    if (n == "rocblas_gemm_ex") return reinterpret_cast<void*>(&gemm_ex);
    if (n == "rocblas_status_to_string") return reinterpret_cast<void*>(&status_to_string);
    if (n == "rocblas_get_version_string") return reinterpret_cast<void*>(&get_version_string);
    return nullptr;
}

}  // namespace rocblas_emulation
}  // namespace cuda
}  // namespace accel
