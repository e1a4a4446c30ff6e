// CUDA backend: the native matmul (and dense) kernel, in every storage type
// T (kernels.hpp).
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
// path. Elements are widened to F = Compute<T> as they are staged (f16 and
// bf16 to float, so the shared slices and the accumulators are float; f64
// stays double) and C is rounded once to T when stored. The epilogue adds
// the bias and applies the activation (dense) before that one store.
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

// Blocks per SM the register allocation must leave room for (the second
// argument of __launch_bounds__, so at most 65536 / (256 · N) registers per
// thread): f32 4 (64 registers, what ptxas picks anyway); f16 and bf16 3 (up
// to 85: their conversions need a few registers more, and at 64 ptxas spills
// on some targets); f64 2 (double accumulators take two registers each).
template <class T>
constexpr int kMinBlocks = 4;
template <>
constexpr int kMinBlocks<__half> = 3;
template <>
constexpr int kMinBlocks<__nv_bfloat16> = 3;
template <>
constexpr int kMinBlocks<double> = 2;

template <class T, bool TA, bool TB>
__global__ void __launch_bounds__(kBlock, kMinBlocks<T>)
    matmul_tiled(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, std::size_t m, std::size_t n,
                 std::size_t k, const T* __restrict__ bias, Epilogue act) {
    using F = Compute<T>;
    __shared__ F as[kSlice][kTile + 1];  // as[kk][i] = op(A)[row0 + i][k0 + kk]
    __shared__ F bs[kSlice][kTile + 1];  // bs[kk][j] = op(B)[k0 + kk][col0 + j]
    const unsigned tx = threadIdx.x, ty = threadIdx.y, t = ty * kThreads + tx;
    // Row tiles along grid.x (up to 2^31-1 blocks: no output is too tall),
    // column tiles along grid.y (up to 65535, so at most 4 194 240 columns).
    const std::size_t row0 = static_cast<std::size_t>(blockIdx.x) * kTile;
    const std::size_t col0 = static_cast<std::size_t>(blockIdx.y) * kTile;
    if (row0 >= m || col0 >= n) return;  // a block past C (grid larger than needed): the whole block leaves

    F acc[kPer][kPer] = {};
    for (std::size_t k0 = 0; k0 < k; k0 += kSlice) {
#pragma unroll
        for (unsigned l = 0; l < kLoads; ++l) {
            const unsigned e = t + kBlock * l;
            // A is [k, m] when transposed (consecutive rows i adjacent in
            // memory), else [m, k] (consecutive kk adjacent).
            const unsigned i = TA ? e % kTile : e / kSlice, kk = TA ? e / kTile : e % kSlice;
            const std::size_t r = row0 + i, p = k0 + kk;
            as[kk][i] = (r < m && p < k) ? to_compute(TA ? a[p * m + r] : a[r * k + p]) : F(0);
        }
#pragma unroll
        for (unsigned l = 0; l < kLoads; ++l) {
            const unsigned e = t + kBlock * l;
            // B is [n, k] when transposed (consecutive kk adjacent), else
            // [k, n] (consecutive columns j adjacent).
            const unsigned j = TB ? e / kSlice : e % kTile, kk = TB ? e % kSlice : e / kTile;
            const std::size_t col = col0 + j, p = k0 + kk;
            bs[kk][j] = (col < n && p < k) ? to_compute(TB ? b[col * k + p] : b[p * n + col]) : F(0);
        }
        __syncthreads();
#pragma unroll
        for (unsigned kk = 0; kk < kSlice; ++kk) {
            F av[kPer], bv[kPer];
#pragma unroll
            for (unsigned r = 0; r < kPer; ++r) av[r] = as[kk][ty + kThreads * r];
#pragma unroll
            for (unsigned q = 0; q < kPer; ++q) bv[q] = bs[kk][tx + kThreads * q];
#pragma unroll
            for (unsigned r = 0; r < kPer; ++r)
#pragma unroll
                for (unsigned q = 0; q < kPer; ++q) acc[r][q] = math::fma(av[r], bv[q], acc[r][q]);
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
            const F v = bias ? acc[r][q] + to_compute(bias[col]) : acc[r][q];
            c[row * n + col] = from_compute<T>(activate(v, act));
        }
    }
}

template <class T, bool TA, bool TB>
cudaError_t run(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, const T* bias, Epilogue act,
                const Launch& l) {
    return launch_kernel(matmul_tiled<T, TA, TB>, l, a, b, c, m, n, k, bias, act);
}

}  // namespace

cudaError_t matmul_image_status() {
    cudaFuncAttributes attr{};
    return cudaFuncGetAttributes(&attr, matmul_tiled<float, false, false>);
}

template <class T>
cudaError_t launch_matmul(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                          bool tb, const T* bias, Epilogue act, const Launch& l) {
    if (ta) {
        return tb ? run<T, true, true>(a, b, c, m, n, k, bias, act, l)
                  : run<T, true, false>(a, b, c, m, n, k, bias, act, l);
    }
    return tb ? run<T, false, true>(a, b, c, m, n, k, bias, act, l)
              : run<T, false, false>(a, b, c, m, n, k, bias, act, l);
}

#define ACCEL_CUDA_MATMUL(T)                                                                                   \
    template cudaError_t launch_matmul<T>(const T*, const T*, T*, std::size_t, std::size_t, std::size_t, bool, \
                                          bool, const T*, Epilogue, const Launch&);
ACCEL_CUDA_FOR_EACH_STORAGE(ACCEL_CUDA_MATMUL)
#undef ACCEL_CUDA_MATMUL

}  // namespace cuda
}  // namespace accel
