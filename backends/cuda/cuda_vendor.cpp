// CUDA vendor path: cuBLAS sgemm for matmul and dense.
//
// Precision: FP32 by default. The handle's math mode is set explicitly to
// CUBLAS_DEFAULT_MATH, under which cublasSgemm computes in FP32 and never uses
// TF32 tensor cores (cuBLAS documentation, cublasSetMathMode). ACCEL_CUDA_TF32=1
// opts in to CUBLAS_TF32_TENSOR_OP_MATH: inputs are rounded to TF32 (10-bit
// mantissa, relative error up to 2^-11 per input), so results differ from the
// float64 oracle by an NMSE of roughly 1e-7..1e-6 and the conformance
// threshold for the vendor path would then need to be 1e-5.
#include "cuda_device.hpp"

#include <accel/error.hpp>

#include <climits>
#include <cstdlib>
#include <string>

namespace accel {
namespace cuda {

void cublas_start(Cublas& blas) {
    const char* env = std::getenv("ACCEL_CUDA_TF32");
    const std::string tf32 = env ? env : "";
    if (!tf32.empty() && tf32 != "0" && tf32 != "1")
        throw InvalidArgument("ACCEL_CUDA_TF32 is '" + tf32 + "'; expected 1 (TF32 tensor-core sgemm) or 0 (FP32)");
    blas.tf32 = tf32 == "1";

    cublasStatus_t st = cublasCreate(&blas.handle);
    if (st != CUBLAS_STATUS_SUCCESS) {
        blas.handle = nullptr;
        blas.description = std::string("none: cublasCreate failed: ") + cublasGetStatusName(st) + ": " +
                           cublasGetStatusString(st);
        return;
    }
    st = cublasSetMathMode(blas.handle, blas.tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    int version = 0;
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasGetVersion(blas.handle, &version);
    if (st != CUBLAS_STATUS_SUCCESS) {
        blas.description = std::string("none: cuBLAS set-up failed: ") + cublasGetStatusName(st) + ": " +
                           cublasGetStatusString(st);
        cublas_stop(blas);
        return;
    }
    // cublasGetVersion encodes major*10000 + minor*100 + patch.
    blas.description = "cuBLAS " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
                       std::to_string(version % 100) +
                       (blas.tf32 ? ", TF32 tensor-core math (ACCEL_CUDA_TF32=1)"
                                  : ", FP32 math (CUBLAS_DEFAULT_MATH; ACCEL_CUDA_TF32=1 for TF32)");
}

void cublas_stop(Cublas& blas) noexcept {
    if (blas.handle) cublasDestroy(blas.handle);
    blas.handle = nullptr;
}

void cublas_gemm(Cublas& blas, const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
                 bool ta, bool tb, float beta, cudaStream_t stream) {
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        throw Unsupported("gemm (vendor): cuBLAS takes int dimensions but m=" + std::to_string(m) + ", n=" +
                          std::to_string(n) + ", k=" + std::to_string(k) + "; use the native path");
    // Row-major C[m,n] is column-major Cᵀ[n,m], and Cᵀ = op(B)ᵀ·op(A)ᵀ: B comes
    // first. A row-major X[r,c] is the column-major Xᵀ with leading dimension
    // c, so op(B)ᵀ needs no transpose when B is [k,n] (ld n) and a transpose
    // when B is [n,k] (ld k); likewise A: [m,k] (ld k) or [k,m] (ld m).
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    const float one = 1.0f;
    std::lock_guard<std::mutex> lock(blas.mutex);
    ACCEL_CUDA_CHECK(cublasSetStream(blas.handle, stream));
    ACCEL_CUDA_CHECK(cublasSgemm(blas.handle, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, ni, mi,
                                 ki, &one, b, tb ? ki : ni, a, ta ? mi : ki, &beta, c, ni));
}

}  // namespace cuda
}  // namespace accel
