// Kokkos backend, host spaces only: the inner loops of the native matmul (the
// shared CPU GEMM) and of the fma_throughput probe as plain functions over
// raw pointers, so the compiler vectorizes them; compiled for AVX-512, AVX2+FMA and baseline
// x86-64 and picked at load time (ACCEL_KOKKOS_MULTIVERSION). Kernels of
// device spaces never call them.
#include "elementwise.hpp"
#include "matmul.hpp"

#include "../../common/cpu_elementwise.hpp"
#include "../../common/cpu_gemm.hpp"

namespace accel {
namespace kokkos {

namespace {

#if defined(__GNUC__)
// 16 floats as one value (GCC/Clang vector extensions): one AVX-512
// register, two AVX2 or four SSE registers, whichever the clone targets.
typedef float F16 __attribute__((vector_size(64)));
#endif

}  // namespace

/// c[rows × cols] += A·B over `depth` products (see matmul.hpp): the shared
/// CPU GEMM (backends/common/cpu_gemm.hpp) on this tile, on the calling
/// thread; A read in place or packed by it, B repacked into its panels.
/// Inlined here, so each multi-versioned clone vectorizes it for its level.
ACCEL_KOKKOS_MULTIVERSION
void host_tile(float* c, int ldc, const float* a, Index ars, Index aks, const float* b, Index ldb, int rows, int cols,
               Index depth) {
    const cpu::StridedMatrix<float> A{a, ars, aks};
    const cpu::StridedMatrix<float> B{b, ldb, 1};
    cpu::gemm<float>(A, B, c, ldc, depth, 0, rows, 0, cols, true);
}

ACCEL_KOKKOS_MULTIVERSION
void host_tile(double* c, int ldc, const double* a, Index ars, Index aks, const double* b, Index ldb, int rows,
               int cols, Index depth) {
    const cpu::StridedMatrix<double> A{a, ars, aks};
    const cpu::StridedMatrix<double> B{b, ldb, 1};
    cpu::gemm<double>(A, B, c, ldc, depth, 0, rows, 0, cols, true);
}

ACCEL_KOKKOS_MULTIVERSION
void host_sigmoid_block(const float* x, float* y, Index begin, Index end) {
    cpu::sigmoid_range(x, y, static_cast<std::size_t>(begin), static_cast<std::size_t>(end));
}

ACCEL_KOKKOS_MULTIVERSION
void host_fma_block(float* y, Index begin, Index end, Index iterations) {
    static_assert(kFmaLanes == 16, "one F16 per chain");
    const Index count = end - begin < kFmaLanes ? end - begin : kFmaLanes;
#if defined(__GNUC__)
    // a[j]: chain j of the elements begin .. begin + 15, one vector each.
    F16 a[8];
    for (int j = 0; j < 8; ++j)
        for (int l = 0; l < kFmaLanes; ++l) a[j][l] = static_cast<float>(begin + l) * 1e-9f + static_cast<float>(j);
    for (Index it = 0; it < iterations; ++it)
        for (int j = 0; j < 8; ++j) a[j] = a[j] * 0.9999f + 1e-4f;
    for (Index l = 0; l < count; ++l) {
        float s = 0.0f;
        for (int j = 0; j < 8; ++j) s += a[j][l];
        y[begin + l] = s;
    }
#else
    for (Index l = 0; l < count; ++l) {
        float a[8];
        for (int j = 0; j < 8; ++j) a[j] = static_cast<float>(begin + l) * 1e-9f + static_cast<float>(j);
        for (Index it = 0; it < iterations; ++it)
            for (int j = 0; j < 8; ++j) a[j] = a[j] * 0.9999f + 1e-4f;
        float s = 0.0f;
        for (int j = 0; j < 8; ++j) s += a[j];
        y[begin + l] = s;
    }
#endif
}

}  // namespace kokkos
}  // namespace accel
