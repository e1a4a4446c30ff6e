// CUDA backend: the native matmul (and dense) kernel.
//
// Classic shared-memory tiling with register blocking: a block of 16×16
// threads computes a 64×64 tile of C; per step it stages a 64×16 slice of
// op(A) and a 16×64 slice of op(B) in shared memory, and each thread
// accumulates a 4×4 piece of C in registers, at rows ty + 16·r and columns
// tx + 16·c (r, c < 4), so shared-memory reads of B and global writes of C are
// consecutive across tx. Global loads are ordered so that consecutive threads
// read consecutive addresses whatever the transposes; the +1 padding of the
// shared arrays spreads the transposed stores over the banks. Out-of-range
// elements of a slice are loaded as 0, so edges and K == 0 need no special
// path. The epilogue adds the bias and applies the activation (dense) before
// the one store of C.
#include "device_math.cuh"
#include "kernels.hpp"
#include "launch.cuh"

namespace accel {
namespace cuda {

namespace {

constexpr unsigned kTile = kMatmulTile;        // rows/columns of C per block
constexpr unsigned kThreads = kMatmulThreads;  // threads per block side
constexpr unsigned kSlice = 16;                // K extent of one shared-memory slice
constexpr unsigned kPer = kTile / kThreads;    // rows/columns of C per thread
constexpr unsigned kBlock = kThreads * kThreads;
constexpr unsigned kLoads = kTile * kSlice / kBlock;  // slice elements each thread loads
static_assert(kTile % kThreads == 0 && (kTile * kSlice) % kBlock == 0, "tile shape");

template <bool TA, bool TB>
__global__ void __launch_bounds__(kBlock)
    matmul_tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, std::size_t m,
                 std::size_t n, std::size_t k, const float* __restrict__ bias, Epilogue act) {
    __shared__ float as[kSlice][kTile + 1];  // as[kk][i] = op(A)[row0 + i][k0 + kk]
    __shared__ float bs[kSlice][kTile + 1];  // bs[kk][j] = op(B)[k0 + kk][col0 + j]
    const unsigned tx = threadIdx.x, ty = threadIdx.y, t = ty * kThreads + tx;
    // Row tiles along grid.x (up to 2^31-1 blocks: no output is too tall),
    // column tiles along grid.y (up to 65535, so at most 4 194 240 columns).
    const std::size_t row0 = static_cast<std::size_t>(blockIdx.x) * kTile;
    const std::size_t col0 = static_cast<std::size_t>(blockIdx.y) * kTile;
    if (row0 >= m || col0 >= n) return;  // a block past C (grid larger than needed): the whole block leaves

    float acc[kPer][kPer] = {};
    for (std::size_t k0 = 0; k0 < k; k0 += kSlice) {
#pragma unroll
        for (unsigned l = 0; l < kLoads; ++l) {
            const unsigned e = t + kBlock * l;
            // A is [k, m] when transposed (consecutive rows i adjacent in
            // memory), else [m, k] (consecutive kk adjacent).
            const unsigned i = TA ? e % kTile : e / kSlice, kk = TA ? e / kTile : e % kSlice;
            const std::size_t r = row0 + i, p = k0 + kk;
            as[kk][i] = (r < m && p < k) ? (TA ? a[p * m + r] : a[r * k + p]) : 0.0f;
        }
#pragma unroll
        for (unsigned l = 0; l < kLoads; ++l) {
            const unsigned e = t + kBlock * l;
            // B is [n, k] when transposed (consecutive kk adjacent), else
            // [k, n] (consecutive columns j adjacent).
            const unsigned j = TB ? e / kSlice : e % kTile, kk = TB ? e % kSlice : e / kTile;
            const std::size_t col = col0 + j, p = k0 + kk;
            bs[kk][j] = (col < n && p < k) ? (TB ? b[col * k + p] : b[p * n + col]) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (unsigned kk = 0; kk < kSlice; ++kk) {
            float av[kPer], bv[kPer];
#pragma unroll
            for (unsigned r = 0; r < kPer; ++r) av[r] = as[kk][ty + kThreads * r];
#pragma unroll
            for (unsigned q = 0; q < kPer; ++q) bv[q] = bs[kk][tx + kThreads * q];
#pragma unroll
            for (unsigned r = 0; r < kPer; ++r)
#pragma unroll
                for (unsigned q = 0; q < kPer; ++q) acc[r][q] = fmaf(av[r], bv[q], acc[r][q]);
        }
        __syncthreads();  // the slice is overwritten by the next step
    }

#pragma unroll
    for (unsigned r = 0; r < kPer; ++r) {
        const std::size_t row = row0 + ty + kThreads * r;
        if (row >= m) continue;
#pragma unroll
        for (unsigned q = 0; q < kPer; ++q) {
            const std::size_t col = col0 + tx + kThreads * q;
            if (col >= n) continue;
            const float v = bias ? acc[r][q] + bias[col] : acc[r][q];
            c[row * n + col] = activate(v, act);
        }
    }
}

template <bool TA, bool TB>
cudaError_t run(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
                const float* bias, Epilogue act, const Launch& l) {
    return launch_kernel(matmul_tiled<TA, TB>, l, a, b, c, m, n, k, bias, act);
}

}  // namespace

cudaError_t matmul_image_status() {
    cudaFuncAttributes attr{};
    return cudaFuncGetAttributes(&attr, matmul_tiled<false, false>);
}

cudaError_t launch_matmul(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
                          bool ta, bool tb, const float* bias, Epilogue act, const Launch& l) {
    if (ta) return tb ? run<true, true>(a, b, c, m, n, k, bias, act, l) : run<true, false>(a, b, c, m, n, k, bias, act, l);
    return tb ? run<false, true>(a, b, c, m, n, k, bias, act, l) : run<false, false>(a, b, c, m, n, k, bias, act, l);
}

}  // namespace cuda
}  // namespace accel
