// OpenCL backend: the op kernels (arguments already validated by ops/) and
// their registration, per dtype. Each k_* sets the arguments of its kernel
// from kernels/*.cl in dtype t's program and enqueues it.
#include "opencl_device.hpp"
#include "../common/kernel_table.hpp"

#include <accel/error.hpp>

namespace accel {
namespace opencl {

namespace {

cl_mem mem(DeviceHandle h) { return static_cast<cl_mem>(h); }
cl_ulong ul(std::size_t v) { return static_cast<cl_ulong>(v); }
// The largest work-group dot's kernels are written for (DOT_MAX_ITEMS, kernels/reduce.cl).
constexpr std::size_t kDotMaxItems = 1024;
cl_int flag(bool v) { return v ? 1 : 0; }

// The ACCEL_ACTIVATION_* code the kernels know (accel/activation_codes.h, their first source).
cl_int activation_code(Activation a) { return static_cast<cl_int>(a); }

// An op scalar as a kernel argument of type `acc` (kernels/common.cl): a
// double in the f64 program, a float in the others.
struct AccScalar {
    double value;
    bool is_double;
};
AccScalar scalar(DType t, double v) { return {v, t == DType::f64}; }

// The launch path builds no message unless a call failed (a launch is a few
// microseconds; the strings were a tenth of it).
void check_set_arg(cl_int code, cl_uint i) {
    if (code != CL_SUCCESS) check_cl(code, "clSetKernelArg(" + std::to_string(i) + ")");
}

template <class T>
void set_arg(cl_kernel k, cl_uint i, const T& v) {
    check_set_arg(clSetKernelArg(k, i, sizeof(T), &v), i);
}

// A null cl_mem becomes a NULL __global pointer, as clSetKernelArg allows.
void set_arg(cl_kernel k, cl_uint i, const cl_mem& v) {
    check_set_arg(clSetKernelArg(k, i, sizeof(cl_mem), v ? &v : nullptr), i);
}

void set_arg(cl_kernel k, cl_uint i, const AccScalar& v) {
    if (v.is_double) return set_arg(k, i, cl_double{v.value});
    set_arg(k, i, static_cast<cl_float>(v.value));
}

}  // namespace

std::vector<DType> OpenclDevice::native_dtypes() const {
    std::vector<DType> all;
    for (DType t : kAllDTypes)
        if (t != DType::f64 || fp64_) all.push_back(t);
    return all;
}

void OpenclDevice::register_kernels() {
    // The kernel table: every op natively in every dtype the device stores
    // (f64 needs cl_khr_fp64); vendor gemm where CLBlast runs the dtype.
    std::vector<DType> vendor;
    for (DType t : kAllDTypes)
        if (has_vendor_gemm(t)) vendor.push_back(t);
    kernel_table().claim({{native_ops_of_every_backend(), native_dtypes(), OpPath::native}, {{Op::gemm}, vendor, OpPath::vendor}});
    // The elementwise ops with an oracle run through one launch path: the
    // kernel named after the op, given (inputs..., output, n).
    const std::vector<Op>& elementwise_ops = elementwise_ops_of_every_backend();
    elementwise_.assign(op_table().size(), {});
    for (std::size_t i = 0; i < elementwise_ops.size(); ++i)
        elementwise_[static_cast<std::size_t>(elementwise_ops[i])] = {
            static_cast<std::size_t>(ProgramKernel::count_) + i, op_info(elementwise_ops[i]).inputs.size()};
    const OpPath nat = OpPath::native;
    for (DType t : native_dtypes()) {
        for (Op op : elementwise_ops)
            kernel_table().add(op, t, nat, [this, op](const KernelArgs& a) { launch_elementwise(op, a); });
        kernel_table().add(Op::matmul, t, nat, [this, t](const KernelArgs& a) {
            k_matmul(t, a.in[0], a.in[1], a.out[0], GemmArgs::of(a), a.tile, a.geometry, *a.stream);
        });
        kernel_table().add(Op::dense, t, nat, [this, t](const KernelArgs& a) {
            k_dense(t, a.in[0], a.in[1], a.in[2], a.out[0], DenseArgs::of(a), a.tile, a.geometry, *a.stream);
        });
        kernel_table().add(Op::bias_activation, t, nat, [this, t](const KernelArgs& a) {
            const MatrixArgs p = MatrixArgs::of(a);
            k_bias_activation(t, a.in[0], a.out[0], p.rows, p.cols, a.scalars[0] != 0, p.act, a.geometry, *a.stream);
        });
        kernel_table().add(Op::column_sum, t, nat, [this, t](const KernelArgs& a) {
            const MatrixArgs p = MatrixArgs::of(a);
            k_column_sum(t, a.in[0], a.out[0], p.rows, p.cols, a.geometry, *a.stream);
        });
        kernel_table().add(Op::bce_with_logits_backward, t, nat, [this, t](const KernelArgs& a) {
            k_bce_with_logits_backward(t, a.in[0], a.in[1], a.out[0], a.n, a.scalars[0], a.geometry, *a.stream);
        });
        kernel_table().add(Op::scale, t, nat, [this, t](const KernelArgs& a) {
            launch(t, ProgramKernel::scale, a.geometry, *a.stream, mem(a.in[0]), mem(a.out[0]), ul(a.n),
                   scalar(t, a.scalars[0]));
        });
        kernel_table().add(Op::triad, t, nat, [this, t](const KernelArgs& a) {
            launch(t, ProgramKernel::triad, a.geometry, *a.stream, mem(a.in[0]), mem(a.in[1]), mem(a.out[0]), ul(a.n),
                   scalar(t, a.scalars[0]));
        });
        kernel_table().add(Op::dot, t, nat, [this, t](const KernelArgs& a) {
            const LaunchGeometry& g = a.geometry;
            if (g.block.x * g.block.y * g.block.z > kDotMaxItems)  // the group's sums live in a local array of that size
                throw InvalidArgument("dot: launch geometry " + g.to_string() + " rejected: the OpenCL kernel accepts at "
                                      "most " + std::to_string(kDotMaxItems) + " work-items per work-group");
            const DotArgs p = DotArgs::of(a);
            launch(t, ProgramKernel::dot_blocks, g, *a.stream, mem(a.in[0]), mem(a.in[1]), mem(p.partials), ul(a.n));
            LaunchGeometry one = g;
            one.grid = Dim3{1, 1, 1};
            launch(t, ProgramKernel::dot_total, one, *a.stream, mem(p.partials), ul(p.blocks), mem(a.out[0]));
        });
        kernel_table().add(Op::adam_step, t, nat, [this, t](const KernelArgs& a) {
            const auto h = AdamScalarArgs::of(a);
            k_adam_step(t, a.out[0], a.in[1], a.out[1], a.out[2], a.n, h.beta1, h.beta2, h.eps, h.step_size,
                        h.bias_correction2_sqrt, a.geometry, *a.stream);
        });
        kernel_table().add(Op::convert, t, nat, [this, t](const KernelArgs& a) {
            k_convert(a.src_dtype, t, a.in[0], a.out[0], a.n, a.geometry, *a.stream);
        });
        if (has_vendor_gemm(t))
            kernel_table().add(Op::gemm, t, OpPath::vendor, [this, t](const KernelArgs& a) {
                const GemmArgs p = GemmArgs::of(a);
                k_gemm_vendor(t, a.in[0], a.in[1], a.out[0], p.m, p.n, p.k, p.trans_a, p.trans_b, a.scalars[0],
                              *a.stream);
            });
    }
}

template <class... Args>
void OpenclDevice::launch_slot(DType t, std::size_t tile, std::size_t slot, const LaunchGeometry& g, Stream& s,
                               const Args&... args) {
    // A leased kernel set of t's program: no other thread sets these
    // kernels' arguments until the enqueue below has captured them.
    note_runtime_user_thread();
    struct Lease {
        OpenclDevice& device;
        DType dtype;
        std::size_t tile;
        KernelSet* set;
        ~Lease() { device.release_kernels(dtype, tile, set); }
    } lease{*this, t, tile, acquire_kernels(t, tile)};
    cl_kernel k = (*lease.set)[slot];
    if (CommandBufferRecording* r = static_cast<OpenclStream&>(s).recording()) k = r->kernel_like(k);
    cl_uint i = 0;
    (set_arg(k, i++, args), ...);
    const std::size_t local[3] = {g.block.x, g.block.y, g.block.z};
    const std::size_t global[3] = {g.grid.x * g.block.x, g.grid.y * g.block.y, g.grid.z * g.block.z};
    const cl_uint dims = g.grid.z * g.block.z > 1 ? 3 : g.grid.y * g.block.y > 1 ? 2 : 1;
    const cl_int err = enqueue_kernel(s, k, dims, global, local);
    if (err != CL_SUCCESS) check_cl(err, "clEnqueueNDRangeKernel", " with " + g.to_string());
}

void OpenclDevice::launch_elementwise(Op op, const KernelArgs& a) {
    const ElementwiseKernel& e = elementwise_[static_cast<std::size_t>(op)];
    const std::size_t slot = e.slot;
    if (e.inputs == 1)
        launch_slot(a.dtype, GemmTiles::general, slot, a.geometry, *a.stream, mem(a.in[0]), mem(a.out[0]), ul(a.n));
    else
        launch_slot(a.dtype, GemmTiles::general, slot, a.geometry, *a.stream, mem(a.in[0]), mem(a.in[1]),
                    mem(a.out[0]), ul(a.n));
}

// Which of matmul.cl's GEMM kernels computes op(A)[m,k]·op(B)[k,n] (all
// share the tile `tile`'s geometry). On CPU devices (and Oclgrind, which then
// checks them), where staging in local memory is waste: K ≤ 16 gemm_direct
// (the staged kernel would pad a K slice with zeros); A·Bᵀ (dense)
// gemm_dot; M ≤ 4 gemm_direct (the staged kernel would fill a whole row
// tile for one row); Aᵀ·B (weight gradients) gemm_rows; elsewhere the
// staged gemm. The measurements behind each rule are in
// docs/results/opencl-cpu-gemm-kernels.md. GPUs keep the staged gemm: local
// memory is what makes it fast there.
ProgramKernel OpenclDevice::gemm_kernel(std::size_t tile, std::size_t m, std::size_t k, bool ta,
                                        bool tb) const noexcept {
    if (!direct_gemm_) return ProgramKernel::gemm;
    if (k <= kDirectGemmMaxK) return ProgramKernel::gemm_direct;
    if (tb && !ta && has_gemm_dot(tile)) return ProgramKernel::gemm_dot;
    if (m <= kDirectGemmMaxM) return ProgramKernel::gemm_direct;
    if (ta && !tb && has_gemm_rows(tile)) return ProgramKernel::gemm_rows;
    return ProgramKernel::gemm;
}

// Two layouts of a training step's products run faster rearranged on CPU
// devices (f32; PoCL on an AVX-512 Xeon, MLP 30→H→1, batch 256, ms per epoch:
// H = 1024 5.5 → 4.3, H = 4096 22.4 → 15.9 for the first; with the second
// and the division-free transpose, 4096×30 by 256: 2.2-3.5 → 1.4-1.9 ms):
//  - A·Bᵀ with K below kShortDotK (dense's x·Wᵀ, K = 30): gemm_dot's dot
//    products are mostly their scalar tail there; B is transposed into a
//    scratch buffer and gemm_direct broadcasts A over contiguous rows of Bᵀ.
//  - Aᵀ·B with N below kShortDotK and M above N (a weight gradient dhᵀ·x,
//    N = 30): gemm_rows gets N in fours; C is computed transposed, Cᵀ = Bᵀ·A,
//    by gemm_direct over Cᵀ's long rows, then transposed into C. Taken only
//    with the default geometry (the tiled one the front-end derives from
//    do_tile_layout): Cᵀ's launch needs its own.
// Scratch buffers are released once enqueued: OpenCL keeps a buffer until
// the commands that use it have finished.

void OpenclDevice::transpose_into(DType t, cl_mem src, cl_mem dst, std::size_t rows, std::size_t cols, Stream& s) {
    // Runs of 64 elements per work-item: the kernel's per-run division is then rare.
    constexpr std::size_t run = 64;
    launch(t, ProgramKernel::transpose, do_default_geometry(Op::add, t, 1, ceil_div(rows * cols, run)), s, src, dst,
           ul(rows), ul(cols), ul(run));
}

OpenclDevice::Scratch::Scratch(OpenclDevice& d, std::size_t bytes) : buffer(mem(d.do_allocate(bytes))) {}

OpenclDevice::Scratch::~Scratch() { clReleaseMemObject(buffer); }

namespace {
bool same_geometry(const LaunchGeometry& a, const LaunchGeometry& b) { return a.grid == b.grid && a.block == b.block; }
}  // namespace

void OpenclDevice::launch_gemm(DType t, std::size_t tile, const LaunchGeometry& g, Stream& s, cl_mem a, cl_mem b,
                               cl_mem c, cl_mem bias, Activation act, std::size_t m, std::size_t n, std::size_t k,
                               bool ta, bool tb) {
    if (direct_gemm_ && t == DType::f32 && tb && !ta && k > kDirectGemmMaxK && k < kShortDotK) {
        // A·Bᵀ as A·(B transposed into a scratch buffer).
        Scratch bt(*this, n * k * sizeof(float));
        transpose_into(t, b, bt.buffer, n, k, s);
        launch_tile(t, tile, ProgramKernel::gemm_direct, g, s, a, bt.buffer, c, bias, flag(bias != nullptr),
                    activation_code(act), ul(m), ul(n), ul(k), cl_int{0}, cl_int{0});
        return;
    }
    launch_tile(t, tile, gemm_kernel(tile, m, k, ta, tb), g, s, a, b, c, bias, flag(bias != nullptr),
                activation_code(act), ul(m), ul(n), ul(k), flag(ta), flag(tb));
}

void OpenclDevice::k_matmul(DType t, DeviceHandle a, DeviceHandle b, DeviceHandle c, const GemmArgs& p,
                            const TileLayout& tile, const LaunchGeometry& g, Stream& s) {
    const std::size_t m = p.m, n = p.n, k = p.k;
    if (direct_gemm_ && t == DType::f32 && p.trans_a && !p.trans_b && k > kDirectGemmMaxK && n < kShortDotK && m > n &&
        same_geometry(g, tiled_geometry(tile, m, n, info().limits, "matmul"))) {
        // Cᵀ [n, m] = op(B)ᵀ·op(A)ᵀ: B stored [k, n] transposed, times A stored
        // [k, m]; a launch of its own over Cᵀ, with Cᵀ's tile.
        const TileLayout ct_tile = *do_tile_layout(Op::matmul, t, n, m);
        Scratch ct(*this, m * n * sizeof(float));
        launch_tile(t, ct_tile.variant, ProgramKernel::gemm_direct, tiled_geometry(ct_tile, n, m, info().limits, "matmul"),
                    s, mem(b), mem(a), ct.buffer, cl_mem{nullptr}, cl_int{0}, cl_int{0}, ul(n), ul(m), ul(k),
                    cl_int{1}, cl_int{0});
        transpose_into(t, ct.buffer, mem(c), n, m, s);
        return;
    }
    launch_gemm(t, tile.variant, g, s, mem(a), mem(b), mem(c), nullptr, Activation::none, m, n, k, p.trans_a,
                p.trans_b);
}

void OpenclDevice::k_dense(DType t, DeviceHandle x, DeviceHandle w, DeviceHandle bias, DeviceHandle y,
                           const DenseArgs& p, const TileLayout& tile, const LaunchGeometry& g, Stream& s) {
    const GemmArgs xw = p.gemm();  // x·Wᵀ
    launch_gemm(t, tile.variant, g, s, mem(x), mem(w), mem(y), mem(bias), p.act, xw.m, xw.n, xw.k, xw.trans_a,
                xw.trans_b);
}

void OpenclDevice::k_bias_activation(DType t, DeviceHandle bias, DeviceHandle y, std::size_t rows, std::size_t cols,
                                     bool read_y, Activation act, const LaunchGeometry& g, Stream& s) {
    launch(t, ProgramKernel::bias_activation, g, s, mem(bias), mem(y), flag(bias != nullptr), flag(read_y),
           activation_code(act), ul(rows), ul(cols));
}

void OpenclDevice::k_column_sum(DType t, DeviceHandle x, DeviceHandle y, std::size_t rows, std::size_t cols,
                                const LaunchGeometry& g, Stream& s) {
    launch(t, ProgramKernel::column_sum, g, s, mem(x), mem(y), ul(rows), ul(cols));
}

void OpenclDevice::k_bce_with_logits_backward(DType t, DeviceHandle z, DeviceHandle tg, DeviceHandle dz,
                                              std::size_t n, double scale, const LaunchGeometry& g, Stream& s) {
    launch(t, ProgramKernel::bce_with_logits_backward, g, s, mem(z), mem(tg), mem(dz), ul(n), scalar(t, scale));
}

void OpenclDevice::k_convert(DType from, DType t, DeviceHandle x, DeviceHandle y, std::size_t n,
                             const LaunchGeometry& g, Stream& s) {
    ProgramKernel k = ProgramKernel::convert_f32;
    switch (from) {
        case DType::f32: k = ProgramKernel::convert_f32; break;
        case DType::f16: k = ProgramKernel::convert_f16; break;
        case DType::bf16: k = ProgramKernel::convert_bf16; break;
        case DType::f64:
            if (!fp64_)
                throw Unsupported(std::string("convert (f64 to ") + dtype_name(t) + ", " + selector() + " (" +
                                  info().name + ")): the device has no double precision (no cl_khr_fp64), so f64 "
                                  "is not one of its dtypes; convert from f32, f16 or bf16 here, or use a device "
                                  "with fp64");
            k = ProgramKernel::convert_f64;
            break;
    }
    launch(t, k, g, s, mem(x), mem(y), ul(n));
}

void OpenclDevice::k_adam_step(DType t, DeviceHandle p, DeviceHandle grad, DeviceHandle m, DeviceHandle v,
                               std::size_t n, double beta1, double beta2, double eps, double step_size,
                               double bc2_sqrt, const LaunchGeometry& g, Stream& s) {
    launch(t, ProgramKernel::adam_step, g, s, mem(p), mem(grad), mem(m), mem(v), ul(n), scalar(t, beta1), scalar(t, beta2),
           scalar(t, eps), scalar(t, step_size), scalar(t, bc2_sqrt));
}

void OpenclDevice::fma_throughput(DeviceHandle y, DType dtype, std::size_t n, std::size_t iterations,
                                  const LaunchGeometry& g, Stream& s) {
    if (dtype == DType::f64 && !fp64_)
        throw Unsupported("fma_throughput: " + selector() + " has no f64 probe (the device lacks cl_khr_fp64)");
    if (dtype == DType::f16)  // the f16 program computes in float (kernels/common.cl)
        throw Unsupported("fma_throughput: " + selector() + " has no f16 probe (accel's OpenCL kernels compute f16 in "
                          "float; a half probe needs cl_khr_fp16)");
    launch(dtype, ProgramKernel::fma_throughput, g, s, mem(y), ul(n), ul(iterations));
}

void OpenclDevice::launch_empty(Stream& s) {
    launch(DType::f32, ProgramKernel::empty, LaunchGeometry{{1, 1, 1}, {1, 1, 1}}, s);
}

std::string OpenclDevice::do_unsupported_reason(Op op, DType t, OpPath path) const {
    if (t == DType::f64 && !fp64_) return "the device has no double precision (cl_khr_fp64)";
    if (path == OpPath::vendor && op_info(op).has_vendor_path) {
        if (!have_vendor_blas()) return "this build has no CLBlast";
        if (t == DType::f16) return "CLBlast's HGEMM accumulates in half precision, short of accel's f16 contract";
        if (t == DType::bf16) return "CLBlast has no bfloat16 gemm";
    }
    return "";
}

// One work-group per TM × TN tile of C, column tiles along x (the NDRange's
// x is the column index); the tile depends on the output's shape (and on
// the dtype where a tuning record sets its key: the key's variant).
std::optional<TileLayout> OpenclDevice::do_tile_layout(Op op, DType dtype, std::size_t rows, std::size_t cols) const {
    TileLayout t;
    t.variant = tiles_.choose(rows, cols);
    {
        std::shared_lock<std::shared_mutex> lock(tuning_mutex_);
        if (!tuned_.empty()) {
            const auto it = tuned_.find(TuningKey{op, dtype, gemm_shape_class(rows, cols)});
            if (it != tuned_.end()) t.variant = it->second;
        }
    }
    const GemmParams& p = variant(t.variant);
    t.block = Dim3{p.bx, p.by, 1};
    t.tile_rows = p.tile_rows();
    t.tile_cols = p.tile_cols();
    return t;
}

LaunchGeometry OpenclDevice::do_default_geometry(Op op, DType dtype, std::size_t rows, std::size_t cols) const {
    // EW_VW of dtype's program: the f32 program's vector width, 1 in the others.
    const std::size_t width = dtype == DType::f32 ? ew_width_ : 1;
    const auto items = [](std::size_t elements, std::size_t per_item) {
        return std::max<std::size_t>(1, ceil_div(elements, per_item));
    };
    if (op == Op::add && add_block_)  // CPU devices: one element per work-item, large work-groups
        return geometry_1d_fit(rows * cols, add_block_, info().limits);
    if (op == Op::sigmoid) {  // pairs of vectors per work-item where EW_VW > 1 (kernels/elementwise.cl)
        const std::size_t n = items(rows * cols, width > 1 ? 2 * width : 1);
        // CPU devices: add's large work-groups (PoCL: +0.1 of add's GB/s at 1e7 over 256)
        return add_block_ ? geometry_1d_fit(n, add_block_, info().limits)
                          : Device::do_default_geometry(op, dtype, 1, n);
    }
    if (op == Op::column_sum)  // a vector of EW_VW columns per work-item (kernels/reduce.cl)
        return Device::do_default_geometry(op, dtype, 1, items(cols, width));
    // The kernels of EW_VW-wide vectors (kernels/elementwise.cl).
    if (op == Op::add || op == Op::relu || op == Op::relu_backward || op == Op::sigmoid_backward ||
        op == Op::bce_with_logits || op == Op::bce_with_logits_backward || op == Op::bias_activation)
        return Device::do_default_geometry(op, dtype, 1, items(rows * cols, width));
    return Device::do_default_geometry(op, dtype, rows, cols);
}

std::size_t GemmTiles::choose(std::size_t m, std::size_t n) const noexcept {
    if (count == 1) return general;
    (void)m;
    return n <= tiles[narrow].tile_cols() ? narrow : general;
}

}  // namespace opencl
}  // namespace accel
