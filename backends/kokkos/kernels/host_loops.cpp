// Kokkos backend, host spaces only: the inner loops of the native matmul (the
// shared CPU GEMM) and of the fma_throughput probe as plain functions over
// raw pointers, so the compiler vectorizes them; compiled for AVX-512, AVX2+FMA and baseline
// x86-64 and picked at load time (ACCEL_KOKKOS_MULTIVERSION). Kernels of
// device spaces never call them.
#include "host_loops.hpp"


#include "../../common/cpu_elementwise.hpp"
#include "../../common/dot_math.hpp"
#include "../../common/cpu_gemm.hpp"

namespace accel {
namespace kokkos {

// Compiles a hot host loop for several x86 levels and picks one at load
// time (GCC function multi-versioning): AVX-512, AVX2+FMA, baseline x86-64.
// Other compilers and targets get one plain version.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && \
    !defined(__HIPCC__) && !defined(__SYCL_DEVICE_ONLY__) && !defined(__SANITIZE_ADDRESS__)
#define ACCEL_KOKKOS_MULTIVERSION __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ACCEL_KOKKOS_MULTIVERSION
#endif


/// c[rows × cols] += A·B over `depth` products (see matmul.hpp): the shared
/// CPU GEMM (backends/common/cpu_gemm.hpp) on this tile, on the calling
/// thread; A and B read in place or packed by it, in any layout;
/// compiled per x86 level, with that level's register tile.
void host_tile(float* c, int ldc, const float* a, Index ars, Index aks, const float* b, Index brs, Index bcs, int rows,
               int cols, Index depth) {
    const cpu::StridedMatrix<float> A{a, ars, aks};
    const cpu::StridedMatrix<float> B{b, brs, bcs};
    cpu::gemm_for_cpu<float>(A, B, c, ldc, depth, 0, rows, 0, cols, false);
}

void host_tile(double* c, int ldc, const double* a, Index ars, Index aks, const double* b, Index brs, Index bcs,
               int rows, int cols, Index depth) {
    const cpu::StridedMatrix<double> A{a, ars, aks};
    const cpu::StridedMatrix<double> B{b, brs, bcs};
    cpu::gemm_for_cpu<double>(A, B, c, ldc, depth, 0, rows, 0, cols, false);
}

void host_gemm_rectangle(bool f64, std::size_t m, std::size_t n, std::size_t threads, std::size_t& rows,
                         std::size_t& cols) {
    // The depth is not known here: taken as large enough to split (kSerialWork).
    const std::size_t k = cpu::GemmThreadTiles::kSerialWork;
    const cpu::GemmThreadTiles t = f64 ? cpu::gemm_thread_tiles<double>(m, n, k, threads)
                                       : cpu::gemm_thread_tiles<float>(m, n, k, threads);
    rows = t.rows;
    cols = t.cols;
}

ACCEL_KOKKOS_MULTIVERSION
void host_sigmoid_block(const float* x, float* y, Index begin, Index end) {
    cpu::sigmoid_range(x, y, static_cast<std::size_t>(begin), static_cast<std::size_t>(end));
}

ACCEL_KOKKOS_MULTIVERSION
void host_elementwise_block(cpu::Elementwise op, const float* a, const float* b, float* y, Index begin, Index end,
                            float scale) {
    cpu::elementwise_range(op, a, b, y, static_cast<std::size_t>(begin), static_cast<std::size_t>(end), scale);
}

ACCEL_KOKKOS_MULTIVERSION
void host_elementwise_block(cpu::Elementwise op, const double* a, const double* b, double* y, Index begin,
                            Index end, double scale) {
    cpu::elementwise_range(op, a, b, y, static_cast<std::size_t>(begin), static_cast<std::size_t>(end), scale);
}

ACCEL_KOKKOS_MULTIVERSION
float host_dot_block(const float* a, const float* b, Index begin, Index end) {
    return dot_math::dot_chunk(a, b, static_cast<std::size_t>(begin), static_cast<std::size_t>(end));
}

ACCEL_KOKKOS_MULTIVERSION
double host_dot_block(const double* a, const double* b, Index begin, Index end) {
    return dot_math::dot_chunk(a, b, static_cast<std::size_t>(begin), static_cast<std::size_t>(end));
}

static_assert(kColumnSumBlock == static_cast<Index>(cpu::kColumnSumWidth), "ColumnSumHostFn's blocks are the loop's");

ACCEL_KOKKOS_MULTIVERSION
void host_column_sum_block(const float* x, float* y, Index rows, Index cols, Index c0, Index c1) {
    cpu::column_sum_range(x, y, static_cast<std::size_t>(rows), static_cast<std::size_t>(cols),
                          static_cast<std::size_t>(c0), static_cast<std::size_t>(c1));
}

ACCEL_KOKKOS_MULTIVERSION
void host_column_sum_block(const double* x, double* y, Index rows, Index cols, Index c0, Index c1) {
    cpu::column_sum_range(x, y, static_cast<std::size_t>(rows), static_cast<std::size_t>(cols),
                          static_cast<std::size_t>(c0), static_cast<std::size_t>(c1));
}

ACCEL_KOKKOS_MULTIVERSION
void host_adam_block(float* p, const float* g, float* m, float* v, Index begin, Index end, const float* scalars) {
    const cpu::AdamScalars<float> s{scalars[0], scalars[1], scalars[2], scalars[3], scalars[4]};
    cpu::adam_range(p, g, m, v, static_cast<std::size_t>(begin), static_cast<std::size_t>(end), s);
}

ACCEL_KOKKOS_MULTIVERSION
void host_adam_block(double* p, const double* g, double* m, double* v, Index begin, Index end,
                     const double* scalars) {
    const cpu::AdamScalars<double> s{scalars[0], scalars[1], scalars[2], scalars[3], scalars[4]};
    cpu::adam_range(p, g, m, v, static_cast<std::size_t>(begin), static_cast<std::size_t>(end), s);
}

ACCEL_KOKKOS_MULTIVERSION
void host_bias_activation_rows(const float* bias, float* y, Index r0, Index r1, Index cols, bool read_y, int act) {
    cpu::bias_activation_rows(bias, y, static_cast<std::size_t>(r0), static_cast<std::size_t>(r1),
                              static_cast<std::size_t>(cols), read_y, act);
}

static_assert(kFmaLanes == static_cast<int>(cpu::kFmaProbeLanes), "FmaProbeHostFn's blocks are the probe's");

ACCEL_KOKKOS_MULTIVERSION
void host_fma_block(float* y, Index begin, Index end, Index iterations) {
    cpu::fma_probe_block(y, static_cast<std::size_t>(begin), static_cast<std::size_t>(end),
                         static_cast<std::size_t>(iterations));
}

ACCEL_KOKKOS_MULTIVERSION
void host_fma_block(double* y, Index begin, Index end, Index iterations) {
    cpu::fma_probe_block(y, static_cast<std::size_t>(begin), static_cast<std::size_t>(end),
                         static_cast<std::size_t>(iterations));
}

}  // namespace kokkos
}  // namespace accel
