// CUDA backend: the tensor-core matmul (and dense) kernel for f16 and bf16
// on sm_80 and newer (kernels.hpp: launch_matmul_mma).
//
// A block of 256 threads (8 warps, as 2 along m × 4 along n) computes a
// BM × BN tile of C, the same tiles as the SIMT kernel (matmul_tile), so
// the front-end's tile layout does not depend on the dtype. Each warp
// computes a (BM/2) × (BN/4) piece as MI × NI tiles of 16 × 8, each a
// FragmentC of f32 accumulators (warp_mma.cuh), with one
// mma.sync.m16n8k16 per tile and 16 values of k.
//
// Operands are staged in shared memory as they lie in global memory (no
// transposition and no conversion): op(A) = A[m,k] as rows of k, A[k,m]
// (transposed) as rows of m; op(B) = B[k,n] as rows of n, B[n,k] (transposed)
// as rows of k. ldmatrix, with .trans where the stored rows run along the
// other index, turns either into the fragment layout, so the four transposes
// are one kernel. Each stored row is padded by 16 bytes, which puts the eight
// 16-byte rows an ldmatrix phase reads in eight different bank groups.
//
// A ring of Stages slices of BK = 32 values of k is filled by cp.async, 16
// bytes (8 values) per copy, Stages − 1 slices ahead of the one the warps
// compute on; one __syncthreads per slice. Copies that would cross the edge
// of an operand, or operands whose rows are not 16-byte multiples or whose
// pointer is not 16-byte aligned, are element copies with zeros outside
// op(A)/op(B), so edges, K not a multiple of 16 and K == 0 need no other path.
//
// Summation order: each element of C is c = Σ over k-steps of 16, in k
// order, of one mma's 16 products added to the running f32 value; the same
// for every tile, shape class and position, so the kernel is batch-invariant
// and a result does not depend on the tile. The epilogue (bias, activation,
// one rounding to T) is the SIMT kernel's.
#include "device_math.cuh"
#include "kernels.hpp"
#include "launch.cuh"
#include "warp_mma.cuh"

#include <cuda_pipeline.h>

#include <cstdint>

// mma.m16n8k16 with f16/bf16 operands exists from sm_80 on; device code for
// older targets gets a kernel that traps (the plugin never launches it there).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define ACCEL_CUDA_MMA_ARCH 0
#else
#define ACCEL_CUDA_MMA_ARCH 1
#endif

namespace accel {
namespace cuda {

namespace {

constexpr unsigned kThreads = kMatmulThreads * kMatmulThreads;  // 256: 8 warps
constexpr unsigned kWarpsM = 2, kWarpsN = 4;
constexpr unsigned kSliceK = 32;  // BK: values of k per stage
constexpr unsigned kChunk = 8;    // 16-bit values per 16-byte copy
constexpr unsigned kPad = 8;      // 16 bytes of row padding
static_assert(kWarpsM * kWarpsN * warp::kLanes == kThreads, "8 warps per block");

/// Slices in flight: as many as static shared memory (48 KiB) holds.
template <unsigned BM>
constexpr unsigned kStages = BM >= kMatmulLarge.rows ? 2 : 4;

/// One operand's slices in shared memory: an R × K matrix X (op(A), or
/// op(B) transposed; R is m or n) of which a stage holds rows r0..r0+R of
/// kSliceK values of k. AlongK: X(i, p) = src[i·K + p] (stored rows of k:
/// s[i·kLd + p]); otherwise X(i, p) = src[p·R + i] (stored rows of i:
/// s[p·kLd + i]).
template <class T, bool AlongK, unsigned R>
struct Staged {
    static constexpr unsigned kRows = AlongK ? R : kSliceK;  // stored rows per stage
    static constexpr unsigned kCols = AlongK ? kSliceK : R;  // stored values per row
    static constexpr unsigned kLd = kCols + kPad;
    static constexpr unsigned kSize = kRows * kLd;  // values per stage
    static constexpr unsigned kChunksPerRow = kCols / kChunk;
    static_assert((kLd * sizeof(T)) % 16 == 0 && (kSize * sizeof(T)) % 16 == 0, "16-byte aligned rows and stages");

    const T* src;
    std::size_t outer_n, inner_n;  // X's extent across and along its contiguous dimension
    std::size_t r0;                // first row of the block's tile
    bool vectors;                  // rows of 16-byte multiples from a 16-byte aligned pointer

    __device__ __forceinline__ Staged(const T* p, std::size_t rows, std::size_t k, std::size_t row0)
        : src(p), outer_n(AlongK ? rows : k), inner_n(AlongK ? k : rows), r0(row0) {
        vectors = inner_n % kChunk == 0 && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
    }

    /// Issues the copies of the slice at k0 into stage s (thread t's share).
    __device__ __forceinline__ void fetch(T* s, std::size_t k0, unsigned t) const {
        for (unsigned e = t; e < kRows * kChunksPerRow; e += kThreads) {
            const unsigned row = e / kChunksPerRow, col = e % kChunksPerRow * kChunk;
            const std::size_t outer = (AlongK ? r0 : k0) + row, inner = (AlongK ? k0 : r0) + col;
            T* dst = s + row * kLd + col;
            if (vectors && outer < outer_n && inner + kChunk <= inner_n) {
                __pipeline_memcpy_async(dst, src + outer * inner_n + inner, 16);
            } else {
#pragma unroll
                for (unsigned w = 0; w < kChunk; ++w)
                    dst[w] = outer < outer_n && inner + w < inner_n ? src[outer * inner_n + inner + w]
                                                                    : from_compute<T>(0.0f);
            }
        }
    }
};

template <class T, bool TA, bool TB, unsigned BM, unsigned BN>
__global__ void __launch_bounds__(kThreads, 1)
    matmul_mma(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, std::size_t m, std::size_t n,
               std::size_t k, const T* __restrict__ bias, Epilogue act) {
#if ACCEL_CUDA_MMA_ARCH
    constexpr unsigned WM = BM / kWarpsM, WN = BN / kWarpsN;  // a warp's piece of the tile
    constexpr unsigned MI = WM / 16, NI = WN / 8;             // its mma tiles
    static_assert(MI >= 1 && NI >= 1 && WM % 16 == 0 && WN % 8 == 0, "tile shape");
    using OpA = Staged<T, !TA, BM>;  // A[m,k]: rows of k; A[k,m]: rows of m
    using OpB = Staged<T, TB, BN>;   // B[n,k] (transposed): rows of k; B[k,n]: rows of n
    constexpr unsigned S = kStages<BM>;
    static_assert(S >= 2 && S * (OpA::kSize + OpB::kSize) * sizeof(T) <= 48 * 1024, "static shared memory");

    alignas(16) __shared__ T as[S][OpA::kSize];
    alignas(16) __shared__ T bs[S][OpB::kSize];

    const unsigned t = threadIdx.y * kMatmulThreads + threadIdx.x, lane = t % warp::kLanes, w = t / warp::kLanes;
    const unsigned wm = w / kWarpsN, wn = w % kWarpsN;
    // Row tiles along grid.x, column tiles along grid.y, as the SIMT kernel.
    const std::size_t row0 = static_cast<std::size_t>(blockIdx.x) * BM;
    const std::size_t col0 = static_cast<std::size_t>(blockIdx.y) * BN;
    if (row0 >= m || col0 >= n) return;  // the whole block leaves

    const OpA opa(a, m, k, row0);
    const OpB opb(b, n, k, col0);
    warp::FragmentC acc[MI][NI] = {};
    const std::size_t slices = (k + kSliceK - 1) / kSliceK;

    // One commit per stage even when it copies nothing, so that the count of
    // batches in flight is the same in every thread and every iteration.
#pragma unroll
    for (unsigned s = 0; s + 1 < S; ++s) {
        if (s < slices) {
            opa.fetch(as[s], s * kSliceK, t);
            opb.fetch(bs[s], s * kSliceK, t);
        }
        __pipeline_commit();
    }
    for (std::size_t q = 0; q < slices; ++q) {
        __pipeline_wait_prior(S - 2);  // slice q has landed (this thread's copies)
        __syncthreads();               // ... and everyone's; slice q − 1's stage is free
        if (const std::size_t next = q + S - 1; next < slices) {
            opa.fetch(as[next % S], next * kSliceK, t);
            opb.fetch(bs[next % S], next * kSliceK, t);
        }
        __pipeline_commit();
        const T* sa = as[q % S];
        const T* sb = bs[q % S];
#pragma unroll
        for (unsigned kk = 0; kk < kSliceK; kk += 16) {
            warp::FragmentA fa[MI];
            warp::FragmentB fb[NI];
#pragma unroll
            for (unsigned i = 0; i < MI; ++i) {
                const unsigned r = wm * WM + i * 16;
                warp::load_a<TA>(fa[i], TA ? sa + kk * OpA::kLd + r : sa + r * OpA::kLd + kk, OpA::kLd, lane);
            }
#pragma unroll
            for (unsigned j = 0; j < NI; ++j) {
                const unsigned col = wn * WN + j * 8;
                warp::load_b<!TB>(fb[j], TB ? sb + col * OpB::kLd + kk : sb + kk * OpB::kLd + col, OpB::kLd, lane);
            }
#pragma unroll
            for (unsigned i = 0; i < MI; ++i)
#pragma unroll
                for (unsigned j = 0; j < NI; ++j) warp::mma<T>(acc[i][j], fa[i], fb[j]);
        }
    }

#pragma unroll
    for (unsigned i = 0; i < MI; ++i)
#pragma unroll
        for (unsigned j = 0; j < NI; ++j)
#pragma unroll
            for (unsigned v = 0; v < 4; ++v) {
                const std::size_t row = row0 + wm * WM + i * 16 + warp::c_row(lane, v);
                const std::size_t col = col0 + wn * WN + j * 8 + warp::c_col(lane, v);
                if (row >= m || col >= n) continue;
                const float x = bias ? acc[i][j].r[v] + to_compute(bias[col]) : acc[i][j].r[v];
                c[row * n + col] = from_compute<T>(activate(x, act));
            }
#else
    __trap();
#endif
}

template <class T, bool TA, bool TB>
cudaError_t run(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, const T* bias, Epilogue act,
                MatmulTile tile, const Launch& l) {
    if (tile.rows != tile.cols) return cudaErrorInvalidValue;
    if (tile.rows == kMatmulLarge.rows)
        return launch_kernel(matmul_mma<T, TA, TB, kMatmulLarge.rows, kMatmulLarge.cols>, l, a, b, c, m, n, k, bias,
                             act);
    if (tile.rows == kMatmulMedium.rows)
        return launch_kernel(matmul_mma<T, TA, TB, kMatmulMedium.rows, kMatmulMedium.cols>, l, a, b, c, m, n, k, bias,
                             act);
    if (tile.rows != kMatmulSmall.rows) return cudaErrorInvalidValue;
    return launch_kernel(matmul_mma<T, TA, TB, kMatmulSmall.rows, kMatmulSmall.cols>, l, a, b, c, m, n, k, bias, act);
}

}  // namespace

template <class T>
cudaError_t launch_matmul_mma(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                              bool tb, const T* bias, Epilogue act, MatmulTile tile, const Launch& l) {
    if (ta) {
        return tb ? run<T, true, true>(a, b, c, m, n, k, bias, act, tile, l)
                  : run<T, true, false>(a, b, c, m, n, k, bias, act, tile, l);
    }
    return tb ? run<T, false, true>(a, b, c, m, n, k, bias, act, tile, l)
              : run<T, false, false>(a, b, c, m, n, k, bias, act, tile, l);
}

#define ACCEL_CUDA_MATMUL_MMA(T)                                                                                   \
    template cudaError_t launch_matmul_mma<T>(const T*, const T*, T*, std::size_t, std::size_t, std::size_t, bool, \
                                              bool, const T*, Epilogue, MatmulTile, const Launch&);
ACCEL_CUDA_MATMUL_MMA(__half)
ACCEL_CUDA_MATMUL_MMA(__nv_bfloat16)
#undef ACCEL_CUDA_MATMUL_MMA

}  // namespace cuda
}  // namespace accel
