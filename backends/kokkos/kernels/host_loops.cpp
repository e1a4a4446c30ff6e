// Kokkos backend, host spaces only: the inner loops of the native matmul and
// of the fma_throughput probe as plain functions over raw pointers, so the
// compiler vectorizes them; compiled for AVX-512, AVX2+FMA and baseline
// x86-64 and picked at load time (ACCEL_KOKKOS_MULTIVERSION). Kernels of
// device spaces never call them.
#include "elementwise.hpp"
#include "matmul.hpp"

#include <cstring>

namespace accel {
namespace kokkos {

namespace {

#if defined(__GNUC__)
// 16 floats as one value (GCC/Clang vector extensions): one AVX-512
// register, two AVX2 or four SSE registers, whichever the clone targets.
// Written out so that the compiler vectorizes across columns, never across
// the k loop (which it otherwise does, with shuffles, 3 GFLOP/s).
typedef float F16 __attribute__((vector_size(64)));
// Loads and stores through memcpy (unaligned; no vector passed by value,
// which would tie the function's ABI to the clone's instruction set).
#define ACCEL_LOAD16(v, p) std::memcpy(&(v), (p), sizeof(F16))
#define ACCEL_STORE16(p, v) std::memcpy((p), &(v), sizeof(F16))
#endif

// R rows × 16-column blocks of c, accumulated in registers over the whole depth.
template <int R>
inline void tile_rows(float* c, int ldc, const float* a, Index ars, Index aks, const float* b, Index ldb, int cols,
                      Index depth) {
    int j = 0;
#if defined(__GNUC__)
    for (; j + 16 <= cols; j += 16) {
        F16 acc[R];
        for (int i = 0; i < R; ++i) ACCEL_LOAD16(acc[i], c + i * ldc + j);
        for (Index kk = 0; kk < depth; ++kk) {
            F16 bv;
            ACCEL_LOAD16(bv, b + kk * ldb + j);
            for (int i = 0; i < R; ++i) acc[i] += a[i * ars + kk * aks] * bv;
        }
        for (int i = 0; i < R; ++i) ACCEL_STORE16(c + i * ldc + j, acc[i]);
    }
#endif
    for (; j < cols; ++j)  // the last cols % 16 columns
        for (int i = 0; i < R; ++i) {
            float s = c[i * ldc + j];
            for (Index kk = 0; kk < depth; ++kk) s += a[i * ars + kk * aks] * b[kk * ldb + j];
            c[i * ldc + j] = s;
        }
}
}  // namespace

ACCEL_KOKKOS_MULTIVERSION
void host_tile(float* c, int ldc, const float* a, Index ars, Index aks, const float* b, Index ldb, int rows, int cols,
               Index depth) {
    int r = 0;
    // Four rows at once: each row of b is loaded once for four FMAs.
    for (; r + 4 <= rows; r += 4) tile_rows<4>(c + r * ldc, ldc, a + r * ars, ars, aks, b, ldb, cols, depth);
    for (; r < rows; ++r) tile_rows<1>(c + r * ldc, ldc, a + r * ars, ars, aks, b, ldb, cols, depth);
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
