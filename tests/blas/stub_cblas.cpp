// A CBLAS with OpenBLAS's bf16 GEMM, for testing the host backend's vendor
// path where Debian's OpenBLAS lacks cblas_sbgemm: cblas_sgemm and
// cblas_sbgemm as plain loops over row-major operands (CblasRowMajor only),
// loaded through ACCEL_HOST_BLAS. Signatures as OpenBLAS's cblas.h declares
// them (enums passed as int; bfloat16 as its 16-bit pattern).
#include <Eigen/Core>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kRowMajor = 101, kTrans = 112;

template <class T, class Load>
void gemm(int order, int ta, int tb, int m, int n, int k, float alpha, const T* a, int lda, const T* b, int ldb,
          float beta, float* c, int ldc, Load load) {
    if (order != kRowMajor) {
        std::fprintf(stderr, "stub cblas: only CblasRowMajor (101) is implemented, got %d\n", order);
        std::abort();
    }
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            float s = 0;
            for (int p = 0; p < k; ++p)
                s += load(ta == kTrans ? a[p * lda + i] : a[i * lda + p]) *
                     load(tb == kTrans ? b[j * ldb + p] : b[p * ldb + j]);
            float& out = c[i * ldc + j];
            out = alpha * s + (beta == 0 ? 0.0f : beta * out);
        }
}

}  // namespace

extern "C" {

void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                 int ldb, float beta, float* c, int ldc) {
    gemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, [](float v) { return v; });
}

void cblas_sbgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const std::uint16_t* a, int lda,
                  const std::uint16_t* b, int ldb, float beta, float* c, int ldc) {
    gemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
         [](std::uint16_t bits) { return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(bits)); });
}

}  // extern "C"
