// cuBLAS as far as the CUDA backend's vendor path uses it, answered on the
// CPU by accel's CUDA emulation (runtime.cpp): cublasSgemm, cublasDgemm and
// cublasGemmEx are one reference GEMM that accumulates in float64 (for every
// dtype) and rounds C once, enqueued on the handle's stream.
// Test infrastructure (see cuda_runtime_api.h); values of cuBLAS 13.
#pragma once

#include "cuda_runtime_api.h"

enum cublasStatus_t {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
};
enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
/// Math modes; CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION is a flag
/// OR-ed onto a mode.
enum cublasMath_t {
    CUBLAS_DEFAULT_MATH = 0,
    CUBLAS_TF32_TENSOR_OP_MATH = 3,
    CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
};
/// Element types of cublasGemmEx operands (library_types.h).
enum cudaDataType { CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14 };
typedef enum cudaDataType cudaDataType_t;
/// Compute types of cublasGemmEx (the emulation answers CUBLAS_COMPUTE_32F
/// and CUBLAS_COMPUTE_64F).
enum cublasComputeType_t { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_64F = 70 };
/// GEMM algorithm choice (the emulation has one).
enum cublasGemmAlgo_t { CUBLAS_GEMM_DEFAULT = -1 };
typedef struct cublasContext* cublasHandle_t;

cublasStatus_t cublasCreate(cublasHandle_t* handle);
cublasStatus_t cublasDestroy(cublasHandle_t handle);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
cublasStatus_t cublasGetVersion(cublasHandle_t handle, int* version);
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
/// Column-major C = alpha·op(A)·op(B) + beta·C, sums in float64.
cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const float* alpha, const float* a, int lda, const float* b, int ldb, const float* beta,
                           float* c, int ldc);
/// The same in float64.
cublasStatus_t cublasDgemm(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const double* alpha, const double* a, int lda, const double* b, int ldb,
                           const double* beta, double* c, int ldc);
/// The same with A, B and C of types atype, btype, ctype: answered for one
/// type for all three with CUBLAS_COMPUTE_32F (alpha, beta float; types
/// CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF) or CUBLAS_COMPUTE_64F (alpha, beta
/// double; CUDA_R_64F), else CUBLAS_STATUS_NOT_SUPPORTED. Sums in float64,
/// C rounded once (to nearest even for the 16-bit types).
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* a, cudaDataType atype, int lda, const void* b,
                            cudaDataType btype, int ldb, const void* beta, void* c, cudaDataType ctype, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t algo);
const char* cublasGetStatusName(cublasStatus_t s);
const char* cublasGetStatusString(cublasStatus_t s);
