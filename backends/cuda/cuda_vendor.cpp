// CUDA vendor path: the cuBLAS gemm that the front-end composes matmul and
// dense from, in every dtype.
//
// Precision policy, per dtype:
//   f32   cublasSgemm, FP32 by default. The handle's math mode is set
//         explicitly to CUBLAS_DEFAULT_MATH, under which cublasSgemm computes
//         in FP32 and never uses TF32 tensor cores (cuBLAS documentation,
//         cublasSetMathMode). ACCEL_CUDA_TF32=1 opts in to
//         CUBLAS_TF32_TENSOR_OP_MATH: inputs are rounded to TF32 (10-bit
//         mantissa, relative error up to 2^-11 per input), so results differ
//         from the float64 oracle by an NMSE of roughly 1e-7..1e-6 and the
//         conformance threshold for the vendor path would then need to be 1e-5.
//   f64   cublasDgemm: FP64 throughout (the TF32 setting does not apply).
//   f16,  cublasGemmEx, A, B and C in CUDA_R_16F / CUDA_R_16BF,
//   bf16  CUBLAS_COMPUTE_32F: products and sums in FP32, C rounded once to 16
//         bits. Tensor cores are allowed (cuBLAS uses them for 16-bit inputs
//         where the GPU has them): they form the products of 16-bit inputs
//         exactly and add them in FP32-width accumulators, whose rounding of
//         the partial sums need not be IEEE round-to-nearest (Fasi, Higham,
//         Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores",
//         PeerJ CS 2021); that error is far below the one rounding of C to
//         16 bits that the f16/bf16 thresholds allow for. The math mode also carries
//         CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, so that split-K
//         partial sums are reduced in FP32 and not rounded to the 16-bit
//         output type first. Not CUBLAS_COMPUTE_32F_FAST_*: no input is
//         rounded to a narrower format.
#include "cuda_device.hpp"

#include <cublas_v2.h>

#include <accel/environment.hpp>
#include <accel/error.hpp>

#include <climits>
#include <cstdlib>
#include <string>

namespace accel {
namespace cuda {

// cuBLAS state of one device: one handle, bound to each call's stream.
struct VendorBlas {
    cublasHandle_t handle = nullptr;
    std::mutex mutex;  // guards cublasSetStream + the call that follows
};

void VendorBlasDeleter::operator()(VendorBlas* blas) const noexcept {
    if (blas->handle) cublasDestroy(blas->handle);
    delete blas;
}

namespace {

const env::Declaration kTf32Variable{{"ACCEL_CUDA_TF32", "1 (TF32 tensor-core sgemm) or 0 (FP32)",
                                      "whether cuBLAS may use TF32 tensor cores on the vendor path (default 0)",
                                      "the cuda backend"}};

// Throws DeviceError when s != CUBLAS_STATUS_SUCCESS, naming `call`, the call
// site and cublasGetStatusName/String.
void check_blas(cublasStatus_t s, const char* call, const char* file, int line) {
    if (s == CUBLAS_STATUS_SUCCESS) return;
    throw DeviceError(call_site(call, file, line) + ": " + cublasGetStatusName(s) + " (" +
                          std::to_string(static_cast<int>(s)) + "): " + cublasGetStatusString(s),
                      static_cast<long>(s), cublasGetStatusName(s));
}
#define ACCEL_CUBLAS_CHECK(call) check_blas((call), #call, __FILE__, __LINE__)

}  // namespace

// FP32 (CUBLAS_DEFAULT_MATH, which for sgemm never uses TF32) unless
// ACCEL_CUDA_TF32=1 asks for CUBLAS_TF32_TENSOR_OP_MATH; either way with
// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, so f16/bf16 gemms reduce
// in FP32, never in their 16-bit output type.
VendorBlasPtr vendor_blas_start(std::string& description) {
    const bool tf32 = env::read_flag("ACCEL_CUDA_TF32").value_or(false);
    VendorBlasPtr blas(new VendorBlas);
    cublasStatus_t st = cublasCreate(&blas->handle);
    if (st != CUBLAS_STATUS_SUCCESS) {
        blas->handle = nullptr;
        description = std::string("none: cublasCreate failed: ") + cublasGetStatusName(st) + ": " +
                      cublasGetStatusString(st);
        return nullptr;
    }
    st = cublasSetMathMode(blas->handle, static_cast<cublasMath_t>(
                                             (tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH) |
                                             CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
    int version = 0;
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasGetVersion(blas->handle, &version);
    if (st != CUBLAS_STATUS_SUCCESS) {
        description = std::string("none: cuBLAS set-up failed: ") + cublasGetStatusName(st) + ": " +
                      cublasGetStatusString(st);
        return nullptr;
    }
    // cublasGetVersion encodes major*10000 + minor*100 + patch.
    description = "cuBLAS " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
                  std::to_string(version % 100) +
                  (tf32 ? ", TF32 tensor-core math (ACCEL_CUDA_TF32=1)"
                        : ", FP32 math (CUBLAS_DEFAULT_MATH; ACCEL_CUDA_TF32=1 for TF32)") +
                  "; f64 dgemm; f16/bf16 gemmEx with FP32 compute";
    return blas;
}

namespace {

// The cuBLAS arguments of one row-major gemm (see vendor_gemm in cuda_device.hpp).
struct GemmShape {
    cublasOperation_t op_b, op_a;  // passed in this order: B first
    int n, m, k;                   // column-major Cᵀ[n,m] = op(B)ᵀ[n,k]·op(A)ᵀ[k,m]
    int ldb, lda, ldc;
};

// Row-major C[m,n] is column-major Cᵀ[n,m], and Cᵀ = op(B)ᵀ·op(A)ᵀ: B comes
// first. A row-major X[r,c] is the column-major Xᵀ with leading dimension c,
// so op(B)ᵀ needs no transpose when B is [k,n] (ld n) and a transpose when B
// is [n,k] (ld k); likewise A: [m,k] (ld k) or [k,m] (ld m).
GemmShape gemm_shape(std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb) {
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        throw Unsupported("gemm (vendor): cuBLAS takes int dimensions but m=" + std::to_string(m) + ", n=" +
                          std::to_string(n) + ", k=" + std::to_string(k) + "; use the native path");
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    return GemmShape{tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, ni, mi, ki, tb ? ki : ni,
                     ta ? mi : ki, ni};
}

// f16/bf16: cublasGemmEx with `type` for A, B and C and FP32 compute (alpha
// and beta are then float).
void gemm_ex(VendorBlas& blas, const void* a, const void* b, void* c, cudaDataType type, std::size_t m, std::size_t n,
             std::size_t k, bool ta, bool tb, double beta, cudaStream_t stream) {
    const GemmShape g = gemm_shape(m, n, k, ta, tb);
    const float one = 1.0f, beta32 = static_cast<float>(beta);
    std::lock_guard<std::mutex> lock(blas.mutex);
    ACCEL_CUBLAS_CHECK(cublasSetStream(blas.handle, stream));
    ACCEL_CUBLAS_CHECK(cublasGemmEx(blas.handle, g.op_b, g.op_a, g.n, g.m, g.k, &one, b, type, g.ldb, a, type, g.lda,
                                  &beta32, c, type, g.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// f32/f64: the library's gemm of T (`gemm`, named `name` in errors), with
// alpha 1 and beta in T.
template <class T, class Gemm>
void gemm_of(VendorBlas& blas, Gemm gemm, const char* name, const T* a, const T* b, T* c, std::size_t m,
             std::size_t n, std::size_t k, bool ta, bool tb, double beta, cudaStream_t stream) {
    const GemmShape g = gemm_shape(m, n, k, ta, tb);
    const T one = 1, beta_t = static_cast<T>(beta);
    std::lock_guard<std::mutex> lock(blas.mutex);
    ACCEL_CUBLAS_CHECK(cublasSetStream(blas.handle, stream));
    check_blas(gemm(blas.handle, g.op_b, g.op_a, g.n, g.m, g.k, &one, b, g.ldb, a, g.lda, &beta_t, c, g.ldc), name,
               __FILE__, __LINE__);
}

}  // namespace

void vendor_gemm(VendorBlas& blas, const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
                 bool ta, bool tb, double beta, cudaStream_t stream) {
    gemm_of(blas, cublasSgemm, "cublasSgemm", a, b, c, m, n, k, ta, tb, beta, stream);
}

void vendor_gemm(VendorBlas& blas, const double* a, const double* b, double* c, std::size_t m, std::size_t n,
                 std::size_t k, bool ta, bool tb, double beta, cudaStream_t stream) {
    gemm_of(blas, cublasDgemm, "cublasDgemm", a, b, c, m, n, k, ta, tb, beta, stream);
}

void vendor_gemm(VendorBlas& blas, const __half* a, const __half* b, __half* c, std::size_t m, std::size_t n,
                 std::size_t k, bool ta, bool tb, double beta, cudaStream_t stream) {
    gemm_ex(blas, a, b, c, CUDA_R_16F, m, n, k, ta, tb, beta, stream);
}

void vendor_gemm(VendorBlas& blas, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, std::size_t m,
                 std::size_t n, std::size_t k, bool ta, bool tb, double beta, cudaStream_t stream) {
    gemm_ex(blas, a, b, c, CUDA_R_16BF, m, n, k, ta, tb, beta, stream);
}

}  // namespace cuda
}  // namespace accel
