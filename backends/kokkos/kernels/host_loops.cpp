// Kokkos backend, host spaces only: the inner loops of the native matmul and
// of the fma_throughput probe as plain functions over raw pointers, so the
// compiler vectorizes them; compiled for AVX-512, AVX2+FMA and baseline
// x86-64 and picked at load time (ACCEL_KOKKOS_MULTIVERSION). Kernels of
// device spaces never call them.
#include "elementwise.hpp"
#include "matmul.hpp"

namespace accel {
namespace kokkos {

ACCEL_KOKKOS_MULTIVERSION
void host_tile_slice(float* sc, const float* sa, const float* sb, int by, int bx) {
    int r = 0;
    // Four rows of C at once: each row of the B slice is loaded once for 4 FMAs.
    for (; r + 4 <= by; r += 4) {
        float* __restrict c0 = sc + r * bx;
        float* __restrict c1 = c0 + bx;
        float* __restrict c2 = c1 + bx;
        float* __restrict c3 = c2 + bx;
        const float* a = sa + r * kTileK;
        for (int kk = 0; kk < kTileK; ++kk) {
            const float a0 = a[kk], a1 = a[kTileK + kk], a2 = a[2 * kTileK + kk], a3 = a[3 * kTileK + kk];
            const float* __restrict br = sb + kk * bx;
            for (int j = 0; j < bx; ++j) {
                const float bv = br[j];
                c0[j] += a0 * bv;
                c1[j] += a1 * bv;
                c2[j] += a2 * bv;
                c3[j] += a3 * bv;
            }
        }
    }
    for (; r < by; ++r) {
        float* __restrict cr = sc + r * bx;
        for (int kk = 0; kk < kTileK; ++kk) {
            const float av = sa[r * kTileK + kk];
            const float* __restrict br = sb + kk * bx;
            for (int j = 0; j < bx; ++j) cr[j] += av * br[j];
        }
    }
}

ACCEL_KOKKOS_MULTIVERSION
void host_fma_block(float* y, Index begin, Index end, Index iterations) {
    constexpr int L = kFmaLanes;
    // a[j][l]: chain j of element begin + l; the l loops vectorize.
    float a[8][L];
    for (int j = 0; j < 8; ++j)
        for (int l = 0; l < L; ++l) a[j][l] = static_cast<float>(begin + l) * 1e-9f + static_cast<float>(j);
    for (Index it = 0; it < iterations; ++it)
        for (int j = 0; j < 8; ++j)
            for (int l = 0; l < L; ++l) a[j][l] = a[j][l] * 0.9999f + 1e-4f;
    const Index count = end - begin < L ? end - begin : L;
    for (Index l = 0; l < count; ++l) {
        float s = 0.0f;
        for (int j = 0; j < 8; ++j) s += a[j][l];
        y[begin + l] = s;
    }
}

}  // namespace kokkos
}  // namespace accel
