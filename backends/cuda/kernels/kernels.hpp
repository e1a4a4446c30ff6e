// CUDA backend: the kernel launchers (defined in kernels/*.cu, called from
// cuda_ops.cpp and cuda_vendor.cpp). Plain C++ declarations so that only the
// .cu files go through nvcc.
//
// Every launcher enqueues one kernel on `l.stream` and returns
// cudaGetLastError() (a launch-configuration error, or cudaSuccess); it never
// throws. Pointers are device pointers to row-major data, sizes are in
// elements, and the arguments were validated by the op front-end.
// Thread-safety is the CUDA runtime's: any host thread may launch, on the
// device current in that thread (the caller makes it current).
//
// Dtypes: the op launchers are templates over the storage type T, defined for
// float (f32), double (f64), __half (f16) and __nv_bfloat16 (bf16), the
// types accel::DType names (ACCEL_CUDA_FOR_EACH_STORAGE). A kernel loads T,
// computes in Compute<T> (double for double, float otherwise: f16 and bf16
// are storage only), and rounds once to T, to nearest even, when it stores;
// scalar arguments are passed in Compute<T>.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <initializer_list>

#include <accel/activation_codes.h>
#include <accel/op_table.hpp>

#include "../../common/compute_type.hpp"

namespace accel {
namespace cuda {

/// Where and how a kernel runs: <<<grid, block, 0, stream>>>.
struct Launch {
    dim3 grid;
    dim3 block;
    cudaStream_t stream;
};

/// The type a kernel computes and accumulates in for storage type T
/// (backends/common/compute_type.hpp: double for double, float otherwise).
using compute::Compute;

/// Activation applied in a kernel's epilogue: accel::Activation's codes
/// (accel/activation_codes.h), so the front-end's value passes on unchanged.
enum class Epilogue : int {
    none = ACCEL_ACTIVATION_NONE,
    sigmoid = ACCEL_ACTIVATION_SIGMOID,
    relu = ACCEL_ACTIVATION_RELU,
    gelu = ACCEL_ACTIVATION_GELU,
    gelu_tanh = ACCEL_ACTIVATION_GELU_TANH
};

// ---- elementwise (kernels/elementwise.cu) -----------------------------------
// Grid-stride loops over the flattened launch (all of grid and block x/y/z), so
// any geometry within the device limits covers every element.

/// y[i] = op(a[i], b[i]) for `op`, an elementwise op of the op table
/// (OpInfo::elementwise_reference; b is not read by ops of one input), its
/// math as the table says: add (f32: float4 loads/stores when a, b and y are
/// 16-byte aligned and n is large), mul, sigmoid (stable form,
/// device_math.cuh), relu (x <= 0 ? 0 : x, NaN kept as in PyTorch),
/// relu_backward (a = dy, b = x), sigmoid_backward (a = dy, b = σ(x)),
/// bce_with_logits (a = z, b = t). An op elementwise.cu has no kernel for
/// returns cudaErrorInvalidValue.
template <class T>
cudaError_t launch_elementwise(Op op, const T* a, const T* b, T* y, std::size_t n, const Launch& l);
/// dz[i] = scale * (sigmoid(z[i]) - t[i]).
template <class T>
cudaError_t launch_bce_with_logits_backward(const T* z, const T* t, T* dz, std::size_t n, Compute<T> scale,
                                            const Launch& l);
/// PyTorch's Adam per element (the adam_step op: m and v updated, then p
/// from the unrounded m and v); updates p, m, v in place, each rounded once
/// to T. step_size = lr / (1 - beta1^step), bias_correction2_sqrt =
/// sqrt(1 - beta2^step).
template <class T>
cudaError_t launch_adam_step(T* p, const T* g, T* m, T* v, std::size_t n, Compute<T> beta1, Compute<T> beta2,
                             Compute<T> eps, Compute<T> step_size, Compute<T> bias_correction2_sqrt, const Launch& l);
/// y[i] = x[i] converted from storage type S to storage type T, rounded
/// once to nearest even (convert_to in device_math.cuh: f64 → f16/bf16 round
/// straight from the double). Defined for every pair of the four storage
/// types; x and y must not overlap unless S is T and x == y.
template <class S, class T>
cudaError_t launch_convert(const S* x, T* y, std::size_t n, const Launch& l);
/// cudaFuncGetAttributes of a kernel of elementwise.cu on the current device:
/// cudaErrorNoKernelImageForDevice (or a PTX JIT error) when this build's
/// kernels cannot run there. Loads the module, which lazy loading would
/// otherwise do only at the first launch.
cudaError_t elementwise_image_status();
/// The same for matmul.cu.
cudaError_t matmul_image_status();
/// An empty kernel, one block of one thread: the bare cost of a launch.
cudaError_t launch_empty(cudaStream_t stream);
/// The peak-FMA probe (see accel::Probes::fma_throughput) in f32 or f64:
/// y[n]; item i is the element index.
cudaError_t launch_fma_throughput(float* y, std::size_t n, std::size_t iterations, const Launch& l);
cudaError_t launch_fma_throughput(double* y, std::size_t n, std::size_t iterations, const Launch& l);
/// The largest block column_sum is written for (its shared array): every
/// device's limit.
constexpr unsigned kColumnSumMaxThreads = 1024;
/// y[c] = Σ_r x[r,c] for x[rows,cols] (cols ≥ 1), accumulated in
/// Compute<T>. Any grid and block within the device limits (≤ 1024 threads
/// per block). With W the device's warp width (warpSize: 32 on NVIDIA GPUs,
/// 64 or 32 on AMD ones, read in the kernel, never assumed), a block of B
/// threads takes chunks of w adjacent columns (grid-stride over the ⌈cols/w⌉
/// chunks) and splits each chunk's rows over L = ⌊B/w⌋ row lanes; lane l sums
/// rows l, l+L, ... in order. When B is a multiple of W, w is the largest
/// power of two ≤ min(W, cols), and the row lanes of a warp are added by
/// warp shuffles (a tree over the warp), then the B/W warps' sums in warp
/// order; otherwise w = min(W, B, cols) and one thread adds the L partial
/// sums in lane order. Rounding error thus grows with rows/L + log W + B/W
/// (or + L), not rows; the result is the same bits for the same geometry and
/// warp width (no atomics).
template <class T>
cudaError_t launch_column_sum(const T* x, T* y, std::size_t rows, std::size_t cols, const Launch& l);
/// y[i] = s·x[i] (c null: scale) or y[i] = x[i] + s·c[i] (triad) over n
/// elements, in Compute<T>, rounded once to T.
template <class T>
cudaError_t launch_scaled(const T* x, const T* c, T* y, std::size_t n, Compute<T> s, const Launch& l);
/// The largest block dot is written for (its shared arrays).
constexpr unsigned kDotMaxThreads = 1024;
/// y[0] = Σ a[i]·b[i] over n elements (accel's DotArgs): l's grid of P
/// blocks of B threads (B ≤ kDotMaxThreads); thread t of block j sums
/// elements j·B + t + r·P·B in order, the block's B values meet in a fixed
/// tree into partials[j] (P values of Compute<T>), then one block of B
/// threads adds the partials the same way and stores y[0] rounded once:
/// the same bits for the same geometry.
template <class T>
cudaError_t launch_dot(const T* a, const T* b, Compute<T>* partials, T* y, std::size_t n, const Launch& l);
/// In place: y[r,c] = act((read_y ? y[r,c] : 0) + bias[c]) for y[rows,cols];
/// bias (length cols) may be null. The epilogue of the vendor path (and its
/// K = 0 result).
template <class T>
cudaError_t launch_bias_activation(T* y, const T* bias, std::size_t rows, std::size_t cols, bool read_y,
                                   Epilogue act, const Launch& l);

// ---- tiled matmul (kernels/matmul.cu) ----------------------------------------
// The one place the tile constants live: the kernel, check_tiled
// (cuda_ops.cpp) and do_default_geometry (cuda_backend.cpp) read them here.

/// Threads along each side of a matmul block: every tile configuration runs
/// in blocks of (16, 16, 1) = 256 threads.
constexpr unsigned kMatmulThreads = 16;
/// K extent of one shared-memory slice of op(A) and op(B) (BK).
constexpr unsigned kMatmulSlice = 8;

/// Rows and columns of C one block of the matmul kernel computes (BM × BN).
/// Each of the 16×16 threads computes (rows/16) × (cols/16) elements of C as
/// 2×2 sub-tiles of (rows/32) × (cols/32).
struct MatmulTile {
    unsigned rows;  ///< BM: rows of C per block (row tiles run along grid x)
    unsigned cols;  ///< BN: columns of C per block (column tiles along grid y)
};

/// The tile configurations, largest first: 8×8 (as 2×(4×4)), 4×4 (2×(2×2))
/// and 2×2 (2×(1×1)) elements of C per thread.
constexpr MatmulTile kMatmulLarge{128, 128};
constexpr MatmulTile kMatmulMedium{64, 64};
constexpr MatmulTile kMatmulSmall{32, 32};
/// Blocks a configuration must give before the shape rule takes it (about
/// one block per SM of a current large GPU); below that the next smaller
/// tile spreads the work over more SMs.
constexpr std::size_t kMatmulMinBlocks = 128;

/// Blocks of `t` that cover an m × n output: ⌈m/BM⌉·⌈n/BN⌉.
constexpr std::size_t matmul_blocks(MatmulTile t, std::size_t m, std::size_t n) {
    return ((m + t.rows - 1) / t.rows) * ((n + t.cols - 1) / t.cols);
}

/// Whether tile `t` suits an m × n output: at least kMatmulMinBlocks blocks,
/// and at least half of the ⌈m/BM⌉BM·⌈n/BN⌉BN elements they cover in C.
constexpr bool matmul_tile_fits(MatmulTile t, std::size_t m, std::size_t n) {
    const std::size_t padded = ((m + t.rows - 1) / t.rows) * t.rows * (((n + t.cols - 1) / t.cols) * t.cols);
    return matmul_blocks(t, m, n) >= kMatmulMinBlocks && 2 * m * n >= padded;
}

/// Column tiles a grid may have: grid.y's limit on every CUDA device.
constexpr std::size_t kMatmulMaxColumnTiles = 65535;

/// The tile configuration of the matmul kernel for C[m, n] (matmul and
/// dense; the same for every dtype and transpose, and independent of K):
/// the largest of 128×128 and 64×64 that gives at least kMatmulMinBlocks
/// blocks and whose blocks hold at least half useful elements (m·n ≥ half
/// of the padded ⌈m/BM⌉BM·⌈n/BN⌉BN), else 32×32. So 4096×4096 takes
/// 128×128, 1024×1024 64×64, and skinny or small outputs (4096×10, 64×128)
/// 32×32. An output too wide for 32-column tiles within grid.y's limit
/// (n > 65535·32) takes the narrowest tile that fits (64, then 128; wider
/// than 65535·128 columns no tile fits and the geometry check rejects it).
/// Pure function of (m, n); thread-safe.
constexpr MatmulTile matmul_tile(std::size_t m, std::size_t n) {
    if (matmul_tile_fits(kMatmulLarge, m, n)) return kMatmulLarge;
    if (matmul_tile_fits(kMatmulMedium, m, n)) return kMatmulMedium;
    for (MatmulTile t : {kMatmulSmall, kMatmulMedium})
        if ((n + t.cols - 1) / t.cols <= kMatmulMaxColumnTiles) return t;
    return kMatmulLarge;
}

/// C[m,n] = act(op(A)·op(B) + bias[col]) with op(A) = A[m,k] or, when ta, the
/// transpose of A[k,m]; op(B) = B[k,n] or, when tb, the transpose of B[n,k];
/// all row-major, any m, n, k (0 included) and any alignment of the
/// pointers. bias (length n) may be null; k == 0 gives act(bias) (zeros for
/// matmul). Operands are widened to Compute<T> as they are staged in shared
/// memory (f16/bf16 to float, f32 float, f64 double), the products are summed
/// in Compute<T> (fused multiply-adds, in k order per element), and each
/// element of C is rounded once to T.
/// The tile is `tile` = BM × BN, one of kMatmulLarge, kMatmulMedium and
/// kMatmulSmall: what matmul_tile(m, n) chose for the op front-end
/// (CudaDevice::do_tile_layout, handed back in KernelArgs::tile). Needs
/// block (16,16,1) and a grid with grid.x·BM ≥ m (row tiles along x),
/// grid.y·BN ≥ n, grid.z == 1 (checked by the front-end); extra blocks exit
/// at once. Returns the launch error (cudaSuccess when enqueued;
/// cudaErrorInvalidValue for a tile that is none of the three); never throws.
template <class T>
cudaError_t launch_matmul(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                          bool tb, const T* bias, Epilogue act, MatmulTile tile, const Launch& l);

// The tensor-core GEMM: in the CUDA build; the HIP build of these sources
// (AMD GPUs) has none.
#ifndef ACCEL_HIP
/// The oldest compute capability (major·10 + minor) launch_matmul_mma runs
/// on: mma.sync.m16n8k16 with f16 and bf16 operands needs sm_80.
constexpr int kTensorCoreGemmMinArch = 80;

/// launch_matmul's contract (the same shapes, transposes, tiles, block,
/// grid, bias and epilogue) for T = __half or __nv_bfloat16 on tensor cores
/// (kernels/matmul_mma.cu): operands staged unconverted, products summed in
/// f32 by mma.sync.m16n8k16, 16 values of k at a time in k order per
/// element (the same order for every tile and shape), each element of C
/// rounded once to T. Only for devices of compute capability ≥
/// kTensorCoreGemmMinArch (older device code traps). Returns the launch
/// error; never throws.
template <class T>
cudaError_t launch_matmul_mma(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                              bool tb, const T* bias, Epilogue act, MatmulTile tile, const Launch& l);

/// The matrix-engine probe (see accel::Probes::matrix_throughput) on f16
/// (bf16 false) or bf16 operands: y[n] (n a multiple of 32, one warp per 32)
/// in blocks of 128 threads, through warp_mma.cuh (the CUDA emulation's
/// mma.sync too). For devices of compute capability ≥ kTensorCoreGemmMinArch
/// only (older device code traps). Returns the launch error; never throws.
cudaError_t launch_matrix_throughput(float* y, std::size_t n, std::size_t iterations, bool bf16, cudaStream_t stream);
#endif

/// Calls X(T) for each storage type the launchers are defined for (the
/// explicit instantiations in kernels/*.cu).
#define ACCEL_CUDA_FOR_EACH_STORAGE(X) X(float) X(double) X(__half) X(__nv_bfloat16)

}  // namespace cuda
}  // namespace accel
