// Kokkos backend: the op kernels (arguments already validated by ops/).
// Elementwise ops: RangePolicy functors (kernels/elementwise.hpp); matmul and
// dense: the team-scratch tiled functor (kernels/matmul.hpp). Every kernel
// first checks that Kokkos is still up (require_runtime, BackendUnavailable
// once the application finalized it) and dispatches under dispatch_lock().
#include "kokkos_device.hpp"
#include "../common/kernel_table.hpp"

#include <accel/error.hpp>

#include <Eigen/Core>

#include "kernels/elementwise.hpp"
#include "kernels/matmul.hpp"

#include <algorithm>
#include <climits>
#include <type_traits>

namespace accel {
namespace kokkos {

namespace {

ConstView cv(DeviceHandle h, std::size_t n) { return ConstView(static_cast<const float*>(h), h ? n : 0); }
FloatView fv(DeviceHandle h, std::size_t n) { return FloatView(static_cast<float*>(h), n); }

int act_code(Activation a) { return static_cast<int>(a); }  // the ACCEL_ACTIVATION_* code

// parallel_for over [0, n) on the stream's instance of Space, chunks of block.x.
template <class Space, class F>
void range(const char* label, std::size_t n, const LaunchGeometry& g, Stream& s, const F& f) {
    require_runtime();
    Kokkos::RangePolicy<Space, Kokkos::IndexType<Index>> policy(instance_of<Space>(s), 0, static_cast<Index>(n));
    policy.set_chunk_size(static_cast<int>(g.block.x));
    auto lock = dispatch_lock();
    Kokkos::parallel_for(label, policy, f);
}

// Host spaces: the blocks of kSigmoidBlock elements covering n elements,
// and the geometry whose chunk is block.x elements' worth of them (at least one).
std::size_t host_blocks(std::size_t n) { return (n + kSigmoidBlock - 1) / kSigmoidBlock; }
LaunchGeometry host_block_geometry(const LaunchGeometry& g) {
    LaunchGeometry blocks = g;
    blocks.block.x = std::max<std::size_t>(1, g.block.x / kSigmoidBlock);
    return blocks;
}

// Launches the tiled functor f (operands, sizes, epilogue set) with the
// geometry's tile and league size (see kokkos_device.hpp).
template <class Space, class V>
void tiled(const char* label, TiledMatmulFn<Space, V> f, const LaunchGeometry& g, Stream& s) {
    require_runtime();
    using Policy = typename TiledMatmulFn<Space, V>::Policy;
    f.bx = static_cast<int>(g.block.x);
    f.by = static_cast<int>(g.block.y);
    f.tiles_x = (f.n + f.bx - 1) / f.bx;
    f.tiles = f.tiles_x * ((f.m + f.by - 1) / f.by);
    const std::size_t bytes = TiledMatmulFn<Space, V>::scratch_bytes(f.bx, f.by);
    const auto scratch_max = [](int level) { return static_cast<std::size_t>(Policy::scratch_size_max(level)); };
    if (bytes <= scratch_max(0))
        f.scratch_level = 0;
    else if (bytes <= scratch_max(1))
        f.scratch_level = 1;
    else
        throw InvalidArgument(std::string(label) + ": launch geometry " + g.to_string() + " needs " +
                              std::to_string(bytes) + " bytes of team scratch; " + Space::name() +
                              " offers at most " + std::to_string(scratch_max(1)) +
                              "; use a smaller block");
    const Index league = std::min<Index>({static_cast<Index>(g.grid.volume()), f.tiles, Index{INT_MAX}});
    const auto scratch = Kokkos::PerTeam(bytes);
    // Host spaces: one thread per team (the host body; see kernels/matmul.hpp).
    // Device spaces: lanes = the largest power of two <= block.x the space
    // allows (CUDA: 32), team size = min(block.y, team_size_max).
    int lanes = 1, team = 1;
    if constexpr (!is_host_space<Space>) {
        while (lanes * 2 <= std::min(f.bx, Policy::vector_length_max())) lanes *= 2;
        const Policy probe = Policy(instance_of<Space>(s), static_cast<int>(league), Kokkos::AUTO, lanes)
                                 .set_scratch_size(f.scratch_level, scratch);
        team = std::max(1, std::min(f.by, probe.team_size_max(f, Kokkos::ParallelForTag())));
    }
    const Policy policy =
        Policy(instance_of<Space>(s), static_cast<int>(league), team, lanes).set_scratch_size(f.scratch_level, scratch);
    auto lock = dispatch_lock();
    Kokkos::parallel_for(label, policy, f);
}

template <class Space, class V>
TiledMatmulFn<Space, V> matmul_fn(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t m, std::size_t n,
                                  std::size_t k, bool ta, bool tb) {
    TiledMatmulFn<Space, V> f{};
    f.a = ConstTypedView<V>(static_cast<const V*>(a), m * k);
    f.b = ConstTypedView<V>(static_cast<const V*>(b), k * n);
    f.c = TypedView<V>(static_cast<V*>(c), m * n);
    f.m = static_cast<Index>(m);
    f.n = static_cast<Index>(n);
    f.k = static_cast<Index>(k);
    f.ta = ta;
    f.tb = tb;
    f.act = ACCEL_ACTIVATION_NONE;
    return f;
}

}  // namespace

namespace {

template <class T>
ConstTypedView<T> cview(DeviceHandle h, std::size_t n) {
    return ConstTypedView<T>(static_cast<const T*>(h), h ? n : 0);
}
template <class T>
TypedView<T> view(DeviceHandle h, std::size_t n) {
    return TypedView<T>(static_cast<T*>(h), n);
}

// The product a matmul (dense = false) or dense (x·Wᵀ) call computes.
GemmArgs product_of(const KernelArgs& a, bool dense) {
    return dense ? DenseArgs::of(a).gemm() : GemmArgs::of(a);
}

// matmul (dense = false) or dense (x·Wᵀ + bias, activation) of the kernel
// arguments on the tiled kernel in V, over operands already of type V.
template <class Space, class V>
void tiled_product(const char* label, const KernelArgs& a, bool dense, DeviceHandle x, DeviceHandle w,
                   DeviceHandle bias, DeviceHandle y) {
    const GemmArgs p = product_of(a, dense);
    TiledMatmulFn<Space, V> f = matmul_fn<Space, V>(x, w, y, p.m, p.n, p.k, p.trans_a, p.trans_b);
    if (dense) {
        f.bias = cview<V>(bias, p.n);
        f.act = act_code(DenseArgs::of(a).act);
    }
    tiled<Space, V>(label, f, a.geometry, *a.stream);
}

// matmul / dense in storage type T. f32, f64: the tiled kernel on T.
// f16, bf16: the operands (and bias) widened to f32 copies, the f32 tiled
// kernel, C rounded once to T: products accumulate in f32 as the op table
// says, and the GEMM never stores a partial sum in 16 bits.
template <class Space, class T>
void product(const char* label, const KernelArgs& a, bool dense) {
    using MemSpace = typename Space::memory_space;
    using Convert = ConvertFn<T, float, is_host_space<Space>>;
    using Round = ConvertFn<float, T, is_host_space<Space>>;
    if constexpr (std::is_same<T, Compute<T>>::value) {
        tiled_product<Space, T>(label, a, dense, a.in[0], a.in[1], dense ? a.in[2] : nullptr, a.out[0]);
    } else {
        const GemmArgs p = product_of(a, dense);
        const std::size_t m = p.m, n = p.n, k = p.k;
        LaunchGeometry g;
        g.block = {256, 1, 1};
        const auto widen = [&](DeviceHandle h, std::size_t count) {
            Kokkos::View<float*, MemSpace> w(Kokkos::view_alloc(Kokkos::WithoutInitializing, "accel::widened"),
                                             h ? count : 0);
            if (h) range<Space>("accel::convert", count, g, *a.stream, Convert{cview<T>(h, count), w});
            return w;
        };
        const auto x = widen(a.in[0], m * k), w = widen(a.in[1], k * n);
        const auto bias = widen(dense ? a.in[2] : nullptr, n);
        Kokkos::View<float*, MemSpace> y(Kokkos::view_alloc(Kokkos::WithoutInitializing, "accel::widened"), m * n);
        // No bias: null, not the data of an empty view (which need not be null).
        tiled_product<Space, float>(label, a, dense, x.data(), w.data(), dense && a.in[2] ? bias.data() : nullptr, y.data());
        range<Space>("accel::convert", m * n, g, *a.stream, Round{y, view<T>(a.out[0], m * n)});
        instance_of<Space>(*a.stream).fence();  // the copies are freed on return
    }
}

// Every op in storage type T: the functors of kernels/elementwise.hpp, and
// for matmul/dense the tiled kernel (product).
template <class Space, class T>
void register_dtype(Device& d, DType dt) {
    using F = Compute<T>;
    constexpr bool kHost = is_host_space<Space>;
    const OpPath nat = OpPath::native;
    // The elementwise ops of the table: their functors (with_elementwise_fn,
    // kernels/elementwise.hpp) over a range of n; ops of one input get b = a.
    for (Op op : elementwise_ops_of_every_backend())
        d.kernel_table().add(op, dt, nat, [op, label = std::string("accel::") + op_name(op)](const KernelArgs& a) {
            const bool known = with_elementwise_fn<T>(
                op, cview<T>(a.in[0], a.n), cview<T>(a.in[1] ? a.in[1] : a.in[0], a.n), view<T>(a.out[0], a.n),
                [&](const auto& fn) { range<Space>(label.c_str(), a.n, a.geometry, *a.stream, fn); });
            if (!known) throw Unsupported(label + ": no Kokkos functor for this op (kernels/elementwise.hpp)");
        });
    if constexpr (std::is_same<T, float>::value && kHost) {
        // Host spaces: blocks of kSigmoidBlock elements as one vector loop;
        // the chunk is block.x elements' worth of blocks (at least one).
        d.kernel_table().add(Op::sigmoid, dt, nat, [](const KernelArgs& a) {
            range<Space>("accel::sigmoid", host_blocks(a.n), host_block_geometry(a.geometry), *a.stream,
                  SigmoidHostFn{cv(a.in[0], a.n), fv(a.out[0], a.n), static_cast<Index>(a.n)});
        });
    }
    d.kernel_table().add(Op::bias_activation, dt, nat, [](const KernelArgs& a) {
        const MatrixArgs p = MatrixArgs::of(a);
        const std::size_t total = p.rows * p.cols;
        range<Space>("accel::bias_activation", total, a.geometry, *a.stream,
              BiasActivationFn<T>{cview<T>(a.in[0], p.cols), view<T>(a.out[0], total), static_cast<Index>(p.cols),
                                  a.scalars[0] != 0, act_code(p.act)});
    });
    if constexpr (std::is_same<T, float>::value && kHost) {
        // Host spaces: kEpilogueRows rows per index, each a vector loop.
        d.kernel_table().add(Op::bias_activation, dt, nat, [](const KernelArgs& a) {
            LaunchGeometry blocks = a.geometry;
            blocks.block.x = 1;
            const MatrixArgs p = MatrixArgs::of(a);
            const std::size_t count = (p.rows + kEpilogueRows - 1) / kEpilogueRows;
            range<Space>("accel::bias_activation", count, blocks, *a.stream,
                  BiasActivationHostFn{static_cast<const float*>(a.in[0]), static_cast<float*>(a.out[0]),
                                       static_cast<Index>(p.rows), static_cast<Index>(p.cols), a.scalars[0] != 0,
                                       act_code(p.act)});
        });
    }
    d.kernel_table().add(Op::column_sum, dt, nat, [](const KernelArgs& a) {
        const MatrixArgs p = MatrixArgs::of(a);
        range<Space>("accel::column_sum", p.cols, a.geometry, *a.stream,
              ColumnSumFn<T>{cview<T>(a.in[0], p.rows * p.cols), view<T>(a.out[0], p.cols), static_cast<Index>(p.rows),
                             static_cast<Index>(p.cols)});
    });
    d.kernel_table().add(Op::bce_with_logits_backward, dt, nat, [](const KernelArgs& a) {
        range<Space>("accel::bce_with_logits_backward", a.n, a.geometry, *a.stream,
              BceBackwardFn<T>{cview<T>(a.in[0], a.n), cview<T>(a.in[1], a.n), view<T>(a.out[0], a.n),
                               static_cast<F>(a.scalars[0])});
    });
    for (Op op : {Op::scale, Op::triad})
        d.kernel_table().add(op, dt, nat, [triad = op == Op::triad](const KernelArgs& a) {
            range<Space>(triad ? "accel::triad" : "accel::scale", a.n, a.geometry, *a.stream,
                  ScaledFn<T>{cview<T>(a.in[0], a.n), cview<T>(triad ? a.in[1] : a.in[0], a.n), view<T>(a.out[0], a.n),
                              static_cast<F>(a.scalars[0]), triad});
        });
    d.kernel_table().add(Op::dot, dt, nat, [](const KernelArgs& a) {
        // One index per block, then one index for the total (a fixed order).
        const DotArgs p = DotArgs::of(a);
        const Kokkos::View<F*, Kokkos::AnonymousSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> partials(
            static_cast<F*>(p.partials), p.blocks);
        LaunchGeometry per_block = a.geometry;
        per_block.block.x = 1;
        range<Space>("accel::dot", p.blocks, per_block, *a.stream,
              DotBlocksFn<T>{cview<T>(a.in[0], a.n), cview<T>(a.in[1], a.n), partials, a.n, p.blocks});
        range<Space>("accel::dot_sum", 1, per_block, *a.stream, DotSumFn<T>{partials, view<T>(a.out[0], 1), p.blocks});
    });
    d.kernel_table().add(Op::convert, dt, nat, [](const KernelArgs& a) {
        const auto run = [&a](auto source) {
            using S = decltype(source);
            range<Space>("accel::convert", a.n, a.geometry, *a.stream,
                  ConvertFn<S, T, kHost>{cview<S>(a.in[0], a.n), view<T>(a.out[0], a.n)});
        };
        switch (a.src_dtype) {
            case DType::f32: return run(float{});
            case DType::f64: return run(double{});
            case DType::f16: return run(Eigen::half{});
            case DType::bf16: return run(Eigen::bfloat16{});
        }
    });
    d.kernel_table().add(Op::adam_step, dt, nat, [](const KernelArgs& a) {
        const auto h = AdamScalarArgs::of(a);
        range<Space>("accel::adam_step", a.n, a.geometry, *a.stream,
              AdamFn<T>{view<T>(a.out[0], a.n), cview<T>(a.in[1], a.n), view<T>(a.out[1], a.n),
                        view<T>(a.out[2], a.n), F(h.beta1), F(h.beta2), F(h.eps), F(h.step_size),
                        F(h.bias_correction2_sqrt)});
    });
    if constexpr (kHost && std::is_same<T, F>::value) {
        // Host spaces, f32/f64: blocks of kSigmoidBlock elements as one
        // vector loop (the chunk is block.x elements' worth of blocks).
        for (const cpu::ElementwiseOp& e : cpu::kElementwiseOps)
            d.kernel_table().add(e.op, dt, nat, [e, label = std::string("accel::") + op_name(e.op)](const KernelArgs& a) {
                const F scale = cpu::takes_scale(e.loop) ? static_cast<F>(a.scalars[0]) : F(0);
                const F* x0 = static_cast<const F*>(a.in[0]);
                range<Space>(label.c_str(), host_blocks(a.n), host_block_geometry(a.geometry), *a.stream,
                      ElementwiseHostFn<F>{e.loop, x0, a.in[1] ? static_cast<const F*>(a.in[1]) : x0,
                                           static_cast<F*>(a.out[0]), static_cast<Index>(a.n), scale});
            });
        d.kernel_table().add(Op::column_sum, dt, nat, [](const KernelArgs& a) {
            LaunchGeometry one = a.geometry;
            one.block.x = 1;
            const MatrixArgs p = MatrixArgs::of(a);
            range<Space>("accel::column_sum", (p.cols + kColumnSumBlock - 1) / kColumnSumBlock, one, *a.stream,
                  ColumnSumHostFn<F>{static_cast<const F*>(a.in[0]), static_cast<F*>(a.out[0]),
                                     static_cast<Index>(p.rows), static_cast<Index>(p.cols)});
        });
        d.kernel_table().add(Op::dot, dt, nat, [](const KernelArgs& a) {
            const DotArgs p = DotArgs::of(a);
            LaunchGeometry per_block = a.geometry;
            per_block.block.x = 1;
            F* partials = static_cast<F*>(p.partials);
            range<Space>("accel::dot", p.blocks, per_block, *a.stream,
                  DotBlocksHostFn<F>{static_cast<const F*>(a.in[0]), static_cast<const F*>(a.in[1]), partials, a.n,
                                     p.blocks});
            const Kokkos::View<F*, Kokkos::AnonymousSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> sums(partials, p.blocks);
            range<Space>("accel::dot_sum", 1, per_block, *a.stream, DotSumFn<T>{sums, view<T>(a.out[0], 1), p.blocks});
        });
        d.kernel_table().add(Op::adam_step, dt, nat, [](const KernelArgs& a) {
            const auto h = AdamScalarArgs::of(a);
            range<Space>("accel::adam_step", host_blocks(a.n), host_block_geometry(a.geometry), *a.stream,
                  AdamHostFn<F>{static_cast<F*>(a.out[0]), static_cast<F*>(a.out[1]), static_cast<F*>(a.out[2]),
                                static_cast<const F*>(a.in[1]), static_cast<Index>(a.n),
                                {F(h.beta1), F(h.beta2), F(h.eps), F(h.step_size), F(h.bias_correction2_sqrt)}});
        });
    }
    // matmul / dense: the tiled kernel in V = Compute<T> (float or double);
    // the 16-bit types through f32 copies (widened_product).
    d.kernel_table().add(Op::matmul, dt, nat, [](const KernelArgs& a) { product<Space, T>("accel::matmul", a, false); });
    d.kernel_table().add(Op::dense, dt, nat, [](const KernelArgs& a) { product<Space, T>("accel::dense", a, true); });
    if (have_vendor_blas() && (std::is_same<T, float>::value || std::is_same<T, double>::value))
        d.kernel_table().add(Op::gemm, dt, OpPath::vendor, [](const KernelArgs& a) {
            const GemmArgs p = GemmArgs::of(a);
            gemm_vendor(instance_of<Space>(*a.stream), static_cast<const T*>(a.in[0]), static_cast<const T*>(a.in[1]),
                        static_cast<T*>(a.out[0]), p.m, p.n, p.k, p.trans_a, p.trans_b, a.scalars[0]);
        });
}

}  // namespace

template <class Space>
void KokkosDevice<Space>::register_kernels() {
    // The kernel table: every op natively in every dtype; vendor gemm (Kokkos
    // Kernels) in f32 and f64 when the build has it.
    std::vector<DType> vendor;
    if (have_vendor_blas()) vendor = {DType::f32, DType::f64};
    kernel_table().claim({{native_ops_of_every_backend(), {std::begin(kAllDTypes), std::end(kAllDTypes)}, OpPath::native},
                   {{Op::gemm}, vendor, OpPath::vendor}});
    register_dtype<Space, float>(*this, DType::f32);
    register_dtype<Space, double>(*this, DType::f64);
    register_dtype<Space, Eigen::half>(*this, DType::f16);
    register_dtype<Space, Eigen::bfloat16>(*this, DType::bf16);
}

namespace {
// The probe: on host spaces blocks of kFmaLanes elements per index (vector
// instructions), the chunk block.x / kFmaLanes blocks (at least 1); on device
// spaces one element per index. A template so that device builds never
// instantiate the host functor.
template <class Space, class F>
void fma_probe(TypedView<F> y, std::size_t n, std::size_t iterations, const LaunchGeometry& g, Stream& s) {
    if constexpr (is_host_space<Space>) {
        LaunchGeometry blocks = g;
        blocks.block.x = std::max<std::size_t>(1, g.block.x / kFmaLanes);
        const std::size_t count = (n + kFmaLanes - 1) / kFmaLanes;
        range<Space>("accel::fma_throughput", count, blocks, s,
              FmaProbeHostFn<F>{y, static_cast<Index>(n), static_cast<Index>(iterations)});
    } else {
        range<Space>("accel::fma_throughput", n, g, s, FmaProbeFn<F>{y, static_cast<Index>(iterations)});
    }
}
}  // namespace

template <class Space>
void KokkosDevice<Space>::fma_throughput(DeviceHandle y, DType dtype, std::size_t n, std::size_t iterations,
                                         const LaunchGeometry& g, Stream& s) {
    if (dtype == DType::f16)
        throw Unsupported("fma_throughput: " + selector() + " has no f16 probe (accel's Kokkos kernels compute f16 in f32)");
    if (dtype == DType::f64)
        fma_probe<Space>(view<double>(y, n), n, iterations, g, s);
    else
        fma_probe<Space>(fv(y, n), n, iterations, g, s);
}

// Does nothing: accel-bench times it as the bare cost of one launch.
struct EmptyFn {
    KOKKOS_INLINE_FUNCTION void operator()(const Index) const {}
};

template <class Space>
void KokkosDevice<Space>::launch_empty(Stream& s) {
    require_runtime();
    auto lock = dispatch_lock();
    Kokkos::parallel_for("accel::empty",
                         Kokkos::RangePolicy<Space, Kokkos::IndexType<Index>>(instance_of<Space>(s), 0, 1), EmptyFn{});
}

template <class Space>
std::string KokkosDevice<Space>::do_unsupported_reason(Op op, DType t, OpPath path) const {
    if (path == OpPath::vendor && op_info(op).has_vendor_path)
        return have_vendor_blas() ? std::string("Kokkos Kernels' gemm runs f32 and f64 only, not ") + dtype_name(t)
                                  : std::string("this build has no Kokkos Kernels");
    return "";
}

#define ACCEL_KOKKOS_INSTANTIATE_OPS(S)                                                                          \
    template void KokkosDevice<S>::register_kernels();                                                           \
    template void KokkosDevice<S>::launch_empty(Stream&);                                                        \
    template void KokkosDevice<S>::fma_throughput(DeviceHandle, DType, std::size_t, std::size_t,                 \
                                                  const LaunchGeometry&, Stream&);                               \
    template std::string KokkosDevice<S>::do_unsupported_reason(Op, DType, OpPath) const;
ACCEL_KOKKOS_FOR_EACH_SPACE(ACCEL_KOKKOS_INSTANTIATE_OPS)
#undef ACCEL_KOKKOS_INSTANTIATE_OPS

}  // namespace kokkos
}  // namespace accel
