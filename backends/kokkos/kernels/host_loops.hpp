// Kokkos backend, host spaces only: the vectorized loops that host-space
// kernel bodies call (kernels/host_loops.cpp) and the block sizes they work
// in. Free of Kokkos, so host_loops.cpp compiles with the host compiler alone
// (multi-versioned per x86 level) even where the plugin's other files go
// through nvcc for a device space; device code never calls them.
#pragma once

#include "../../common/elementwise_ops.hpp"

#include <cstddef>
#include <cstdint>

namespace accel {
namespace kokkos {

/// Kernel index type (signed, 64-bit: tensors may exceed 2^31 elements).
using Index = std::int64_t;

/// Host spaces only: c[rows × cols] = A·B over `depth` products (the shared
/// CPU GEMM, backends/common/cpu_gemm.hpp: partial sums of KC products in
/// increasing order, added in turn), where c is row-major with row stride ldc, A's element
/// (r, kk) is a[r·ars + kk·aks] and B's element (kk, j) is b[kk·brs + j·bcs]
/// (any layouts: the GEMM packs them). Defined in kernels/host_loops.cpp,
/// compiled per x86 level; not callable from device code.
void host_tile(float* c, int ldc, const float* a, Index ars, Index aks, const float* b, Index brs, Index bcs, int rows,
               int cols, Index depth);
/// The same in double (f64).
void host_tile(double* c, int ldc, const double* a, Index ars, Index aks, const double* b, Index brs, Index bcs,
               int rows, int cols, Index depth);
/// Host spaces only: the rectangle of C[m, n] (rows × cols, elements) one
/// team computes when `threads` threads share a product in double (f64) or
/// float (the other dtypes): the host backend's split
/// (cpu::gemm_thread_tiles), so both run the shared GEMM on the same blocks;
/// all of C for one thread. kernels/host_loops.cpp.
void host_gemm_rectangle(bool f64, std::size_t m, std::size_t n, std::size_t threads, std::size_t& rows,
                         std::size_t& cols);

/// Elements per call of the host-space elementwise loops (SigmoidHostFn,
/// ElementwiseHostFn, AdamHostFn): 64 KiB of float32, so the two halves
/// cpu::sigmoid_range alternates between are 32 KiB apart (separate streams
/// for the prefetcher).
constexpr Index kSigmoidBlock = 16384;

/// Host spaces only: y[i] = sigmoid(x[i]) for i in [begin, end), vectorized
/// (cpu::sigmoid_range); defined in kernels/host_loops.cpp (multi-versioned).
void host_sigmoid_block(const float* x, float* y, Index begin, Index end);

/// Host spaces only: y[i] = op(a[i], b[i]) for i in [begin, end)
/// (cpu::elementwise_range), vectorized; defined in kernels/host_loops.cpp
/// (multi-versioned). F: float or double.
void host_elementwise_block(cpu::Elementwise op, const float* a, const float* b, float* y, Index begin, Index end,
                            float scale);
void host_elementwise_block(cpu::Elementwise op, const double* a, const double* b, double* y, Index begin,
                            Index end, double scale);

/// Host spaces only: Adam on elements [begin, end) (cpu::adam_range; the
/// scalars in AdamFn's order), vectorized; defined in kernels/host_loops.cpp.
void host_adam_block(float* p, const float* g, float* m, float* v, Index begin, Index end, const float* scalars);
void host_adam_block(double* p, const double* g, double* m, double* v, Index begin, Index end,
                     const double* scalars);

/// Host spaces only: column sums of x[rows, cols] for columns [c0, c1)
/// (cpu::column_sum_range), vectorized; defined in kernels/host_loops.cpp.
void host_column_sum_block(const float* x, float* y, Index rows, Index cols, Index c0, Index c1);
void host_column_sum_block(const double* x, double* y, Index rows, Index cols, Index c0, Index c1);

/// Host spaces only: Σ a[i]·b[i] over [begin, end) (dot_math::dot_chunk),
/// vectorized; defined in kernels/host_loops.cpp.
float host_dot_block(const float* a, const float* b, Index begin, Index end);
double host_dot_block(const double* a, const double* b, Index begin, Index end);

/// Columns per index of ColumnSumHostFn (= cpu::kColumnSumWidth, checked in
/// kernels/host_loops.cpp).
constexpr Index kColumnSumBlock = 64;

/// Host spaces only: the dense epilogue on float32 rows [r0, r1) of
/// y[rows, cols] (cpu::bias_activation_rows: one vector loop per row, the
/// activation chosen once); defined in kernels/host_loops.cpp.
void host_bias_activation_rows(const float* bias, float* y, Index r0, Index r1, Index cols, bool read_y, int act);

/// Rows of the host-space float32 dense epilogue per index of
/// BiasActivationHostFn.
constexpr Index kEpilogueRows = 16;

/// Elements per call of the host-space fma_throughput probe (FmaProbeHostFn).
constexpr int kFmaLanes = 16;  // = cpu::kFmaProbeLanes (checked in host_loops.cpp)

/// Host spaces only: the probe for elements [begin, min(end, begin +
/// kFmaLanes)) with the FmaProbeFn recurrence, the lanes as vector lanes.
/// Defined in kernels/host_loops.cpp (multi-versioned).
void host_fma_block(float* y, Index begin, Index end, Index iterations);
/// The same in f64.
void host_fma_block(double* y, Index begin, Index end, Index iterations);

}  // namespace kokkos
}  // namespace accel
