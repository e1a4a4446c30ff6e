// The emulated cuBLAS: the handle calls the CUDA backend makes, and its GEMMs
// answered by a float64 reference GEMM enqueued on the handle's stream (the
// emulated runtime's, runtime_internal.hpp).
#include "runtime_internal.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace emulation = accel::cuda::emulation;

struct cublasContext {
    int device;
    cudaStream_t stream = nullptr;
};

cublasStatus_t cublasCreate(cublasHandle_t* h) {
    const int device = emulation::current_device();
    if (emulation::device_state(device) != cudaSuccess) return CUBLAS_STATUS_NOT_INITIALIZED;
    *h = new cublasContext{device};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t h) {
    delete h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t, cublasMath_t) { return CUBLAS_STATUS_SUCCESS; }

cublasStatus_t cublasGetVersion(cublasHandle_t, int* v) {
    *v = 130000;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
    h->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}

namespace {

// Element access of the reference GEMM: widening loads, rounding stores.
double load(const float* p, std::size_t i) { return p[i]; }
double load(const double* p, std::size_t i) { return p[i]; }
double load(const __half* p, std::size_t i) { return __half2float(p[i]); }
double load(const __nv_bfloat16* p, std::size_t i) { return __bfloat162float(p[i]); }
void store(float* p, std::size_t i, double v) { p[i] = static_cast<float>(v); }
void store(double* p, std::size_t i, double v) { p[i] = v; }
// Through float first: the 32-bit compute type's result, then one 16-bit
// rounding (the emulated FP32 sum is exact enough that the double rounding
// only matters for values within 2^-29 relative of a 16-bit halfway point).
void store(__half* p, std::size_t i, double v) { p[i] = __float2half_rn(static_cast<float>(v)); }
void store(__nv_bfloat16* p, std::size_t i, double v) { p[i] = __float2bfloat16_rn(static_cast<float>(v)); }

// Column-major C = alpha·op(A)·op(B) + beta·C, enqueued on the handle's
// stream; T the element type of A, B and C.
template <class T>
cublasStatus_t reference_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              double al, const T* a, int lda, const T* b, int ldb, double be, T* c, int ldc) {
    if (m < 0 || n < 0 || k < 0) return CUBLAS_STATUS_INVALID_VALUE;
    const bool queued = emulation::enqueue(h->device, h->stream, [=] {
        // op(A) as a contiguous column-major m×k copy, then column j of C is
        // Σ_p op(A)[:,p]·op(B)[p,j], accumulated in float64.
        const std::size_t M = static_cast<std::size_t>(m), N = static_cast<std::size_t>(n),
                          K = static_cast<std::size_t>(k), LA = static_cast<std::size_t>(lda),
                          LB = static_cast<std::size_t>(ldb), LC = static_cast<std::size_t>(ldc);
        std::vector<double> opa(M * K), acc(M);
        for (std::size_t p = 0; p < K; ++p)
            for (std::size_t i = 0; i < M; ++i) opa[i + p * M] = load(a, ta == CUBLAS_OP_N ? i + p * LA : p + i * LA);
        for (std::size_t j = 0; j < N; ++j) {
            std::fill(acc.begin(), acc.end(), 0.0);
            for (std::size_t p = 0; p < K; ++p) {
                const double bv = load(b, tb == CUBLAS_OP_N ? p + j * LB : j + p * LB);
                const double* col = &opa[p * M];
                for (std::size_t i = 0; i < M; ++i) acc[i] += col[i] * bv;
            }
            for (std::size_t i = 0; i < M; ++i) {
                const std::size_t at = i + j * LC;
                store(c, at, al * acc[i] + (be == 0.0 ? 0.0 : be * load(c, at)));
            }
        }
    });
    return queued ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // namespace

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const float* alpha, const float* a, int lda, const float* b, int ldb, const float* beta,
                           float* c, int ldc) {
    // Host pointer mode: alpha and beta are read at the call.
    return reference_gemm(h, ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc);
}

cublasStatus_t cublasDgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const double* alpha, const double* a, int lda, const double* b, int ldb,
                           const double* beta, double* c, int ldc) {
    return reference_gemm(h, ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc);
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* a, cudaDataType atype, int lda, const void* b,
                            cudaDataType btype, int ldb, const void* beta, void* c, cudaDataType ctype, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t) {
    if (atype != btype || atype != ctype) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (compute == CUBLAS_COMPUTE_64F) {
        if (atype != CUDA_R_64F) return CUBLAS_STATUS_NOT_SUPPORTED;
        return cublasDgemm(h, ta, tb, m, n, k, static_cast<const double*>(alpha), static_cast<const double*>(a), lda,
                           static_cast<const double*>(b), ldb, static_cast<const double*>(beta),
                           static_cast<double*>(c), ldc);
    }
    if (compute != CUBLAS_COMPUTE_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
    const double al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
    switch (atype) {
        case CUDA_R_32F:
            return reference_gemm(h, ta, tb, m, n, k, al, static_cast<const float*>(a), lda,
                                  static_cast<const float*>(b), ldb, be, static_cast<float*>(c), ldc);
        case CUDA_R_16F:
            return reference_gemm(h, ta, tb, m, n, k, al, static_cast<const __half*>(a), lda,
                                  static_cast<const __half*>(b), ldb, be, static_cast<__half*>(c), ldc);
        case CUDA_R_16BF:
            return reference_gemm(h, ta, tb, m, n, k, al, static_cast<const __nv_bfloat16*>(a), lda,
                                  static_cast<const __nv_bfloat16*>(b), ldb, be, static_cast<__nv_bfloat16*>(c), ldc);
        case CUDA_R_64F: break;
    }
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

const char* cublasGetStatusName(cublasStatus_t s) {
    switch (s) {
        case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
        case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
        case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
        case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
        case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
        case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t s) {
    return s == CUBLAS_STATUS_SUCCESS ? "success" : "failure reported by the accel CUDA emulation";
}
