// CUDA backend: the native matmul (and dense) kernel, in every storage type
// T (kernels.hpp).
//
// Register-blocked shared-memory GEMM. A block of 16×16 threads computes a
// BM × BN tile of C (matmul_tile in kernels.hpp: 128×128, 64×64 or 32×32 by
// the output's shape). Per step it stages a BK = 8 deep slice of op(A)
// (BM × BK) and of op(B) (BK × BN) in shared memory, both stored k-major:
// as[kk][i] = op(A)[row0 + i][k0 + kk] (A transposed on the way in) and
// bs[kk][j] = op(B)[k0 + kk][col0 + j]. Each thread accumulates a TM × TN =
// (BM/16) × (BN/16) piece of C in registers, as 2×2 sub-tiles of WM × WN =
// (BM/32) × (BN/32): rows s·BM/2 + ty·WM + [0, WM) and columns
// s·BN/2 + tx·WN + [0, WN) for s in {0, 1}. Per kk it reads WM consecutive
// values of as and WN of bs per sub-tile as one vector (128×128 f32: float4,
// LDS.128): a warp (tx 0..15, two values of ty) reads 16 consecutive vectors
// of bs, conflict-free, and two of as, broadcast. The row padding of the
// shared arrays (16 bytes) keeps those vectors aligned and spreads the
// transposed stores over the banks.
//
// Double buffering: two copies of each slice. While the block computes on
// one, the next slice is fetched into the other: on sm_80 and newer with
// cp.async (cuda_pipeline.h) where a slice row is a straight copy (f32 and
// f64 operands contiguous along i/j: A when transposed, B when not), else
// through registers (global loads issued before the compute, stored to
// shared memory after it). One __syncthreads per slice. In the CUDA
// emulation cp.async is a synchronous copy and the 64×64 tile takes the
// register path throughout (kMediumAsync), so both paths run in the tests.
//
// Global loads are vectors of VL elements along the operand's contiguous
// dimension when the pointer and leading dimension allow it and the vector
// lies inside the operand; otherwise (edges, unaligned operands) scalar
// loads, with elements outside op(A)/op(B) loaded as 0, so edges, K not a
// multiple of BK and K == 0 need no special path. Elements are widened to
// F = Compute<T> as they are staged (f16 and bf16 to float, so the shared
// slices and the accumulators are float; f64 stays double) and C is rounded
// once to T when stored. The epilogue adds the bias and applies the
// activation (dense) before that one store.
#include "device_math.cuh"
#include "kernels.hpp"
#include "launch.cuh"

#include <cuda_pipeline.h>

#include <cstdint>
#include <type_traits>

// cp.async exists from sm_80 on: device code for older targets, and the HIP
// build (AMD GPUs have no cp.async), stage every operand through registers.
// (The host side and the CUDA emulation, where __CUDA_ARCH__ is not defined,
// may take either path: see kMediumAsync.)
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800) || defined(ACCEL_HIP)
#define ACCEL_CUDA_MATMUL_ASYNC 0
#else
#define ACCEL_CUDA_MATMUL_ASYNC 1
#endif

namespace accel {
namespace cuda {

namespace {

constexpr unsigned kThreads = kMatmulThreads;       // threads per block side
constexpr unsigned kBlock = kThreads * kThreads;    // threads per block
constexpr unsigned kSlice = kMatmulSlice;           // BK
constexpr bool kArchAsync = ACCEL_CUDA_MATMUL_ASYNC != 0;

constexpr unsigned min_u(unsigned a, unsigned b) { return a < b ? a : b; }

/// W values of type V read or written as one access of W·sizeof(V) bytes
/// (at most 16-byte aligned: larger groups become several vector accesses).
template <class V, unsigned W>
struct alignas(min_u(16, W * sizeof(V))) Vec {
    V v[W];
};

/// W consecutive values at p (aligned to the Vec) into out[0..W): one vector
/// load on the device; element copies in the CUDA emulation (host C++, where
/// the cast would break the aliasing rules).
template <unsigned W, class V>
__device__ __forceinline__ void load_vec(const V* p, V* out) {
#ifdef ACCEL_CUDA_EMULATION
    for (unsigned w = 0; w < W; ++w) out[w] = p[w];
#else
    const Vec<V, W> x = *reinterpret_cast<const Vec<V, W>*>(p);
#pragma unroll
    for (unsigned w = 0; w < W; ++w) out[w] = x.v[w];
#endif
}

/// in[0..W) to W consecutive values at p (aligned to the Vec).
template <unsigned W, class V>
__device__ __forceinline__ void store_vec(V* p, const V* in) {
#ifdef ACCEL_CUDA_EMULATION
    for (unsigned w = 0; w < W; ++w) p[w] = in[w];
#else
    Vec<V, W> x;
#pragma unroll
    for (unsigned w = 0; w < W; ++w) x.v[w] = in[w];
    *reinterpret_cast<Vec<V, W>*>(p) = x;
#endif
}

/// One operand's slices: an R × K matrix X (op(A), or op(B) transposed, so R
/// is m or n) staged BR rows at a time as s[kk][i] = X(r0 + i, k0 + kk).
/// Contig: X(i, p) = src[p·R + i] (contiguous along i; A when transposed, B
/// when not): a vector is VL consecutive i at one p and lands in shared
/// memory as it is, so it can be a cp.async. Otherwise X(i, p) =
/// src[i·K + p]: a vector is VL consecutive p at one i, stored transposed.
/// Async: use cp.async where the target has it and the layout allows it.
template <class T, bool Contig, unsigned BR, bool Async>
struct Operand {
    using F = Compute<T>;
    static constexpr unsigned kPad = 16 / sizeof(F);  // 16 bytes of row padding
    static constexpr unsigned kStride = BR + kPad;    // a shared row: BR values and the padding
    // Elements per vector: 16 bytes of F at most, and no more than the slice has per thread.
    static constexpr unsigned VL = min_u(16 / sizeof(F), BR * kSlice / kBlock);
    static constexpr unsigned kVectors = BR * kSlice / VL;
    static constexpr unsigned kPerThread = kVectors / kBlock;  // vectors each thread moves per slice
    static constexpr unsigned kAlong = Contig ? BR / VL : kSlice / VL;  // vectors along the contiguous dimension
    // cp.async copies bytes: only where no conversion and no transposition happen.
    static constexpr bool kAsync = Async && kArchAsync && Contig && std::is_same<T, F>::value;
    static_assert(VL >= 1 && kVectors % kBlock == 0 && kPerThread >= 1, "slice shape");
    static_assert((kStride * sizeof(F)) % 16 == 0, "rows of 16-byte multiples keep the vectors aligned");

    const T* src;
    std::size_t rows, k;  // R and K
    std::size_t r0;       // first row of this block's tile
    bool vectors;         // pointer and leading dimension allow aligned vectors
    F stage[kPerThread][VL];  // the register path's fetched slice

    __device__ __forceinline__ Operand(const T* p, std::size_t R, std::size_t K, std::size_t row0)
        : src(p), rows(R), k(K), r0(row0) {
        const std::size_t ld = Contig ? R : K;
        vectors = ld % VL == 0 && reinterpret_cast<std::uintptr_t>(p) % (VL * sizeof(T)) == 0;
    }

    // Vector `e` (< kVectors) of the slice: its first (i, kk) in the tile.
    __device__ __forceinline__ static void position(unsigned e, unsigned& i, unsigned& kk) {
        if (Contig) {
            kk = e / kAlong;
            i = (e % kAlong) * VL;
        } else {
            i = e / kAlong;
            kk = (e % kAlong) * VL;
        }
    }

    // The VL elements of vector (i, kk) of the slice at k0 into v (0 outside X).
    __device__ __forceinline__ void fetch_vector(std::size_t k0, unsigned i, unsigned kk, F* v) const {
        const std::size_t r = r0 + i, p = k0 + kk;
        const std::size_t last_r = Contig ? r + VL - 1 : r, last_p = Contig ? p : p + VL - 1;
        if (vectors && last_r < rows && last_p < k) {
            T raw[VL];
            load_vec<VL>(Contig ? src + p * rows + r : src + r * k + p, raw);
#pragma unroll
            for (unsigned w = 0; w < VL; ++w) v[w] = to_compute(raw[w]);
        } else {
#pragma unroll
            for (unsigned w = 0; w < VL; ++w) {
                const std::size_t rw = Contig ? r + w : r, pw = Contig ? p : p + w;
                v[w] = rw < rows && pw < k ? to_compute(Contig ? src[pw * rows + rw] : src[rw * k + pw]) : F(0);
            }
        }
    }

    // Stores vector v of (i, kk) into the shared slice s.
    __device__ __forceinline__ static void put(F (*s)[kStride], unsigned i, unsigned kk, const F* v) {
        if (Contig) {
            store_vec<VL>(&s[kk][i], v);
        } else {
#pragma unroll
            for (unsigned w = 0; w < VL; ++w) s[kk + w][i] = v[w];
        }
    }

    /// Starts fetching the slice at k0. cp.async operands write s (the free
    /// buffer) now (copies in flight, partial vectors stored at once);
    /// others load into registers, for store().
    __device__ __forceinline__ void fetch(std::size_t k0, F (*s)[kStride], unsigned t) {
#pragma unroll
        for (unsigned l = 0; l < kPerThread; ++l) {
            unsigned i, kk;
            position(t + kBlock * l, i, kk);
            if constexpr (kAsync) {
                const std::size_t r = r0 + i, p = k0 + kk;
                if (vectors && r + VL - 1 < rows && p < k) {
                    __pipeline_memcpy_async(&s[kk][i], src + p * rows + r, VL * sizeof(T));
                } else {
                    F v[VL];
                    fetch_vector(k0, i, kk, v);
                    put(s, i, kk, v);
                }
            } else {
                fetch_vector(k0, i, kk, stage[l]);
            }
        }
    }

    /// Completes the fetch: stores the registers into s (nothing to do for
    /// cp.async operands).
    __device__ __forceinline__ void store(F (*s)[kStride], unsigned t) const {
        if constexpr (!kAsync) {
#pragma unroll
            for (unsigned l = 0; l < kPerThread; ++l) {
                unsigned i, kk;
                position(t + kBlock * l, i, kk);
                put(s, i, kk, stage[l]);
            }
        }
    }
};

// Blocks per SM the register allocation must leave room for (the second
// argument of __launch_bounds__: at most 65536 / (256·N) registers per
// thread, capped at 255). 128×128: 64 accumulators, 2 blocks (128
// registers) in float; in double 128 registers of accumulators alone, so 1.
// 64×64 and 32×32 need far fewer: 3 blocks (85 registers) in float, 2 in double.
template <class T, unsigned BM>
constexpr int min_blocks() {
    const bool wide = std::is_same<T, double>::value;
    if (BM >= kMatmulLarge.rows) return wide ? 1 : 2;
    return wide ? 2 : 3;
}

template <class T, bool TA, bool TB, unsigned BM, unsigned BN, bool Async>
__global__ void __launch_bounds__(kBlock, (min_blocks<T, BM>()))
    matmul_tiled(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, std::size_t m, std::size_t n,
                 std::size_t k, const T* __restrict__ bias, Epilogue act) {
    using F = Compute<T>;
    constexpr unsigned TM = BM / kThreads, TN = BN / kThreads;  // elements of C per thread
    constexpr unsigned WM = TM / 2, WN = TN / 2;                // per sub-tile
    static_assert(WM >= 1 && WN >= 1 && BM % (2 * kThreads) == 0 && BN % (2 * kThreads) == 0, "tile shape");
    using OpA = Operand<T, TA, BM, Async>;   // op(A) = A[m,k], or A[k,m] transposed: contiguous along i
    using OpB = Operand<T, !TB, BN, Async>;  // op(B)ᵀ = B[n,k] when tb, else B[k,n] (contiguous along j)

    alignas(16) __shared__ F as[2][kSlice][OpA::kStride];
    alignas(16) __shared__ F bs[2][kSlice][OpB::kStride];

    const unsigned tx = threadIdx.x, ty = threadIdx.y, t = ty * kThreads + tx;
    // Row tiles along grid.x (up to 2^31-1 blocks: no output is too tall),
    // column tiles along grid.y (up to 65535 blocks).
    const std::size_t row0 = static_cast<std::size_t>(blockIdx.x) * BM;
    const std::size_t col0 = static_cast<std::size_t>(blockIdx.y) * BN;
    if (row0 >= m || col0 >= n) return;  // a block past C (grid larger than needed): the whole block leaves

    OpA opa(a, m, k, row0);
    OpB opb(b, n, k, col0);
    F acc[TM][TN] = {};
    const std::size_t slices = (k + kSlice - 1) / kSlice;

    if (slices > 0) {
        opa.fetch(0, as[0], t);
        opb.fetch(0, bs[0], t);
        opa.store(as[0], t);
        opb.store(bs[0], t);
        if constexpr (OpA::kAsync || OpB::kAsync) {
            __pipeline_commit();
            __pipeline_wait_prior(0);
        }
    }
    __syncthreads();

    for (std::size_t q = 0; q < slices; ++q) {
        const unsigned cur = q & 1;
        const bool more = q + 1 < slices;  // the same in every thread: the barrier below is uniform
        if (more) {
            // The other buffer was last read before the previous barrier: free.
            opa.fetch((q + 1) * kSlice, as[cur ^ 1], t);
            opb.fetch((q + 1) * kSlice, bs[cur ^ 1], t);
            if constexpr (OpA::kAsync || OpB::kAsync) __pipeline_commit();
        }
#pragma unroll
        for (unsigned kk = 0; kk < kSlice; ++kk) {
            F av[TM], bv[TN];
            load_vec<WM>(&as[cur][kk][ty * WM], av);
            load_vec<WM>(&as[cur][kk][BM / 2 + ty * WM], av + WM);
            load_vec<WN>(&bs[cur][kk][tx * WN], bv);
            load_vec<WN>(&bs[cur][kk][BN / 2 + tx * WN], bv + WN);
#pragma unroll
            for (unsigned r = 0; r < TM; ++r)
#pragma unroll
                for (unsigned s = 0; s < TN; ++s) acc[r][s] = math::fma(av[r], bv[s], acc[r][s]);
        }
        if (more) {
            opa.store(as[cur ^ 1], t);
            opb.store(bs[cur ^ 1], t);
            if constexpr (OpA::kAsync || OpB::kAsync) __pipeline_wait_prior(0);
        }
        __syncthreads();  // the next slice is complete; this one may be overwritten
    }

    // acc[r][s]: row (r / WM)·BM/2 + ty·WM + r % WM, column (s / WN)·BN/2 + tx·WN + s % WN.
#pragma unroll
    for (unsigned r = 0; r < TM; ++r) {
        const std::size_t row = row0 + (r / WM) * (BM / 2) + ty * WM + r % WM;
        if (row >= m) continue;
#pragma unroll
        for (unsigned s = 0; s < TN; ++s) {
            const std::size_t col = col0 + (s / WN) * (BN / 2) + tx * WN + s % WN;
            if (col >= n) continue;
            const F v = bias ? acc[r][s] + to_compute(bias[col]) : acc[r][s];
            c[row * n + col] = from_compute<T>(activate(v, act));
        }
    }
}

// Whether the 64×64 tile uses cp.async. On a GPU every tile does (from
// sm_80 on). The CUDA emulation runs the 64×64 tile with register staging
// only, as pre-sm_80 device code does, so that the tests exercise both ways
// of filling shared memory (the 128×128 and 32×32 tiles copy asynchronously
// there, synchronously emulated).
#ifdef ACCEL_CUDA_EMULATION
constexpr bool kMediumAsync = false;
#else
constexpr bool kMediumAsync = true;
#endif

template <class T, bool TA, bool TB>
cudaError_t run(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, const T* bias, Epilogue act,
                MatmulTile tile, const Launch& l) {
    if (tile.rows != tile.cols) return cudaErrorInvalidValue;
    if (tile.rows == kMatmulLarge.rows)
        return launch_kernel(matmul_tiled<T, TA, TB, kMatmulLarge.rows, kMatmulLarge.cols, true>, l, a, b, c, m, n, k,
                             bias, act);
    if (tile.rows == kMatmulMedium.rows)
        return launch_kernel(matmul_tiled<T, TA, TB, kMatmulMedium.rows, kMatmulMedium.cols, kMediumAsync>, l, a, b, c, m, n, k,
                             bias, act);
    if (tile.rows != kMatmulSmall.rows) return cudaErrorInvalidValue;
    return launch_kernel(matmul_tiled<T, TA, TB, kMatmulSmall.rows, kMatmulSmall.cols, true>, l, a, b, c, m, n, k, bias,
                         act);
}

}  // namespace

cudaError_t matmul_image_status() {
    cudaFuncAttributes attr{};
    return cudaFuncGetAttributes(&attr, matmul_tiled<float, false, false, kMatmulLarge.rows, kMatmulLarge.cols, true>);
}

template <class T>
cudaError_t launch_matmul(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                          bool tb, const T* bias, Epilogue act, MatmulTile tile, const Launch& l) {
    if (ta) {
        return tb ? run<T, true, true>(a, b, c, m, n, k, bias, act, tile, l)
                  : run<T, true, false>(a, b, c, m, n, k, bias, act, tile, l);
    }
    return tb ? run<T, false, true>(a, b, c, m, n, k, bias, act, tile, l)
              : run<T, false, false>(a, b, c, m, n, k, bias, act, tile, l);
}

#define ACCEL_CUDA_MATMUL(T)                                                                                   \
    template cudaError_t launch_matmul<T>(const T*, const T*, T*, std::size_t, std::size_t, std::size_t, bool, \
                                          bool, const T*, Epilogue, MatmulTile, const Launch&);
ACCEL_CUDA_FOR_EACH_STORAGE(ACCEL_CUDA_MATMUL)
#undef ACCEL_CUDA_MATMUL

}  // namespace cuda
}  // namespace accel
