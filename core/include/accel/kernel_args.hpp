// accel/kernel_args.hpp — what one kernel call gets, and the typed views of it
// per op family. Part of the plugin ABI (ACCEL_PLUGIN_ABI in accel/plugin.hpp).
#pragma once

#include <accel/activation_codes.h>

#include <accel/dtype.hpp>
#include <accel/geometry.hpp>
#include <accel/op_table.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <vector>

namespace accel {

class Stream;

/// Opaque device-memory handle: a device pointer (CUDA, HIP, Kokkos, host),
/// a cl_mem (OpenCL) or a sub-allocation (Vulkan). Only the backend that
/// produced it may interpret it.
using DeviceHandle = void*;

/// Which implementation of an op runs: accel's own kernel (the same
/// algorithm on every backend) or the platform's library (CPU BLAS, CLBlast,
/// cuBLAS, rocBLAS, Kokkos Kernels).
enum class OpPath { native, vendor };

/// "native" or "vendor".
const char* path_name(OpPath p) noexcept;

/// Activation fused into `dense`. The numeric values are part of the plugin
/// ABI (KernelArgs::act) and are what kernels receive: accel/activation_codes.h
/// defines them for kernel languages, and backends pass
/// static_cast<int>(act) on unchanged.
enum class Activation : int {
    none = ACCEL_ACTIVATION_NONE,
    sigmoid = ACCEL_ACTIVATION_SIGMOID,
    relu = ACCEL_ACTIVATION_RELU,
    gelu = ACCEL_ACTIVATION_GELU,           ///< x·Φ(x), the op gelu
    gelu_tanh = ACCEL_ACTIVATION_GELU_TANH  ///< the op gelu_tanh
};

/// "none", "sigmoid", "relu", "gelu" or "gelu_tanh".
const char* activation_name(Activation a) noexcept;

/// Everything one kernel call gets: what the op front-end (accel/ops.hpp)
/// validated and resolved. Its layout is the plugin ABI (ACCEL_PLUGIN_ABI);
/// the list of ops is not. Which fields an op uses is in its op-table entry
/// (OpInfo: inputs, outputs, sizes as OpSize, scalars below). Kernels of
/// the op families below read their sizes through the family's view
/// (GemmArgs, DenseArgs, MatrixArgs, AdamScalarArgs), never m, n, k
/// directly: what m, n and k mean differs per family.
struct KernelArgs {
    DType dtype = DType::f32;           ///< of every operand (convert: of the output)
    DType src_dtype = DType::f32;       ///< convert: of the input; else equal to dtype
    OpPath path = OpPath::native;
    /// Operands in OpInfo::inputs / outputs order: handles of this device;
    /// null for an absent optional operand (dense's bias). An in-place
    /// operand (adam_step's p, m, v) appears in both lists.
    std::array<DeviceHandle, 4> in{};
    std::array<DeviceHandle, 4> out{};
    /// Sizes in elements, as OpSize: elementwise ops (and ops a program
    /// defined) n elements; the other families through their views.
    std::size_t m = 1, n = 0, k = 0;
    bool trans_a = false;               ///< GemmArgs::trans_a
    bool trans_b = false;               ///< GemmArgs::trans_b
    Activation act = Activation::none;  ///< DenseArgs::act, MatrixArgs::act
    /// Op-specific numbers: bce_with_logits_backward {scale}; scale and
    /// triad {s}; adam_step: AdamScalarArgs (read and write them through
    /// it); gemm {beta}; bias_activation {alpha}.
    std::array<double, 8> scalars{};
    LaunchGeometry geometry;            ///< checked against the device's limits
    /// Tiled ops (OpInfo::tiled) on the native path, on a device that states
    /// a tile layout (Device::tile_layout): the layout the front-end chose
    /// once for this output and checked `geometry` against. The kernel
    /// launches this tile (TileLayout::variant), never chooses another.
    /// Default-constructed elsewhere.
    TileLayout tile;
    Stream* stream = nullptr;           ///< of this device; never null when called
};

/// dot: y[0] = Σ a[i]·b[i] over n elements (in = {a, b}, out = {y, partials}).
/// `partials` holds one value per block of the grid (grid.x·grid.y·grid.z,
/// `blocks`) of the compute type (f64 for f64,
/// f32 otherwise), one per block, allocated by the front-end: the kernel
/// writes block j's sum of its elements to partials[j], then sums the
/// partials in a fixed order and stores y[0] rounded once. Which elements a
/// block takes and in what order is the backend's, fixed by n and the
/// geometry alone (GPU kernels: thread t of block j takes j·B + t +
/// r·blocks·B, r = 0, 1, ..., into one accumulator, then the block's threads
/// in a fixed tree; CPU loops: block j a contiguous chunk in 8 interleaved
/// accumulators), so a call gives the same bits on every run.
struct DotArgs {
    DeviceHandle partials = nullptr;
    std::size_t blocks = 0;  ///< the grid's blocks: the partials' count
    /// The blocks of geometry `g`, each one partial.
    static std::size_t blocks_of(const LaunchGeometry& g) { return g.grid.x * g.grid.y * g.grid.z; }
    /// Read from a.
    static DotArgs of(const KernelArgs& a) { return {a.out[1], blocks_of(a.geometry)}; }
};

/// matmul and gemm: C[m, n] = op(A)·op(B) with op(A) [m, k], op(B) [k, n]
/// (row-major); A is stored [k, m] when trans_a, B [n, k] when trans_b.
struct GemmArgs {
    std::size_t m = 0, n = 0, k = 0;
    bool trans_a = false, trans_b = false;
    /// Read from a KernelArgs of matmul or gemm.
    static GemmArgs of(const KernelArgs& a) noexcept { return {a.m, a.n, a.k, a.trans_a, a.trans_b}; }
    /// Written into a.
    void store(KernelArgs& a) const noexcept {
        a.m = m;
        a.n = n;
        a.k = k;
        a.trans_a = trans_a;
        a.trans_b = trans_b;
    }
};

/// dense: y[batch, out] = act(x[batch, in]·W[out, in]ᵀ + bias[out]) (nn.Linear).
/// As a product: C[m = batch, n = out] with inner dimension k = in and B = Wᵀ.
struct DenseArgs {
    std::size_t batch = 0, in = 0, out = 0;
    Activation act = Activation::none;
    /// Read from a KernelArgs of dense.
    static DenseArgs of(const KernelArgs& a) noexcept { return {a.m, a.k, a.n, a.act}; }
    /// Written into a.
    void store(KernelArgs& a) const noexcept {
        a.m = batch;
        a.k = in;
        a.n = out;
        a.act = act;
    }
    /// The product it is: x·Wᵀ.
    GemmArgs gemm() const noexcept { return {batch, out, in, false, true}; }
};

/// column_sum (x[rows, cols] → y[cols]) and bias_activation (y[rows, cols],
/// bias[cols]; act used by bias_activation only).
struct MatrixArgs {
    std::size_t rows = 0, cols = 0;
    Activation act = Activation::none;
    /// Read from a KernelArgs of column_sum or bias_activation.
    static MatrixArgs of(const KernelArgs& a) noexcept { return {a.m, a.n, a.act}; }
    /// Written into a.
    void store(KernelArgs& a) const noexcept {
        a.m = rows;
        a.n = cols;
        a.act = act;
    }
};

/// adam_step's numbers by name, as KernelArgs::scalars carries them (slots
/// 0..4; see ops::adam_step): m ← β1·m + (1−β1)·g, v ← β2·v + (1−β2)·g²,
/// p ← p − step_size·m / (√v / bias_correction2_sqrt + eps), where
/// step_size = lr / (1 − β1^t) and bias_correction2_sqrt = √(1 − β2^t).
struct AdamScalarArgs {
    double beta1 = 0, beta2 = 0, eps = 0, step_size = 0, bias_correction2_sqrt = 1;
    /// Read from a.scalars.
    static AdamScalarArgs of(const KernelArgs& a) noexcept {
        return {a.scalars[0], a.scalars[1], a.scalars[2], a.scalars[3], a.scalars[4]};
    }
    /// Written to a.scalars.
    void store(KernelArgs& a) const noexcept {
        a.scalars[0] = beta1;
        a.scalars[1] = beta2;
        a.scalars[2] = eps;
        a.scalars[3] = step_size;
        a.scalars[4] = bias_correction2_sqrt;
    }
};

/// The shapes of one kernel call's operands, inputs then outputs in
/// OpInfo::inputs / outputs order, row-major, in elements: elementwise ops
/// (and ops a program defined) [n] each; matmul/gemm A [m, k] ([k, m] when
/// trans_a), B [k, n] ([n, k] when trans_b), C [m, n]; dense x [batch, in],
/// w [out, in], bias [out], y [batch, out]; column_sum x [rows, cols], y
/// [cols]; bias_activation bias [cols], y [rows, cols]. An absent optional
/// operand (a null handle) still has its shape here. What the trace prints
/// and the shadow check copies. Throws InvalidArgument for an Op value that
/// names no op. Thread-safe.
std::vector<std::vector<std::size_t>> operand_shapes(Op op, const KernelArgs& args);

/// A kernel: enqueues one op call on *args.stream. Called only by the op
/// front-end, with validated arguments; may throw DeviceError (runtime
/// failure) or InvalidArgument (a geometry the kernel cannot run).
using Kernel = std::function<void(const KernelArgs& args)>;

/// One (op, dtype, path) a device has a kernel for, or claims (KernelTable).
struct KernelKey {
    Op op;
    DType dtype;
    OpPath path;
};

}  // namespace accel
