// Kokkos backend: the op kernels (arguments already validated by ops/).
// Elementwise ops: RangePolicy functors (kernels/elementwise.hpp); matmul and
// dense: the team-scratch tiled functor (kernels/matmul.hpp). Every kernel
// first checks that Kokkos is still up (require_runtime, BackendUnavailable
// once the application finalized it) and dispatches under dispatch_lock().
#include "kokkos_device.hpp"

#include <accel/error.hpp>

#include "kernels/elementwise.hpp"
#include "kernels/matmul.hpp"

#include <algorithm>
#include <climits>

namespace accel {
namespace kokkos {

namespace {

ConstView cv(DeviceHandle h, std::size_t n) { return ConstView(static_cast<const float*>(h), h ? n : 0); }
FloatView fv(DeviceHandle h, std::size_t n) { return FloatView(static_cast<float*>(h), n); }

int act_code(Activation a) {
    return a == Activation::relu ? act_relu : a == Activation::sigmoid ? act_sigmoid : act_none;
}

// parallel_for over [0, n) on the stream's instance, chunks of block.x.
template <class F>
void range(const char* label, std::size_t n, const LaunchGeometry& g, Stream& s, const F& f) {
    require_runtime();
    Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>> policy(instance_of(s), 0, static_cast<Index>(n));
    policy.set_chunk_size(static_cast<int>(g.block.x));
    auto lock = dispatch_lock();
    Kokkos::parallel_for(label, policy, f);
}

// Launches the tiled functor f (operands, sizes, epilogue set) with the
// geometry's tile and league size (see kokkos_device.hpp).
void tiled(const char* label, TiledMatmulFn f, const LaunchGeometry& g, Stream& s) {
    require_runtime();
    using Policy = TiledMatmulFn::Policy;
    f.bx = static_cast<int>(g.block.x);
    f.by = static_cast<int>(g.block.y);
    f.tiles_x = (f.n + f.bx - 1) / f.bx;
    f.tiles = f.tiles_x * ((f.m + f.by - 1) / f.by);
    const std::size_t bytes = TiledMatmulFn::scratch_bytes(f.bx, f.by);
    const auto scratch_max = [](int level) { return static_cast<std::size_t>(Policy::scratch_size_max(level)); };
    if (bytes <= scratch_max(0))
        f.scratch_level = 0;
    else if (bytes <= scratch_max(1))
        f.scratch_level = 1;
    else
        throw InvalidArgument(std::string(label) + ": launch geometry " + g.to_string() + " needs " +
                              std::to_string(bytes) + " bytes of team scratch; " + ExecSpace::name() +
                              " offers at most " + std::to_string(scratch_max(1)) +
                              "; use a smaller block");
    const Index league = std::min<Index>({static_cast<Index>(g.grid.volume()), f.tiles, Index{INT_MAX}});
    const auto scratch = Kokkos::PerTeam(bytes);
    // Host spaces: one thread per team (the host body; see kernels/matmul.hpp).
    // Device spaces: lanes = the largest power of two <= block.x the space
    // allows (CUDA: 32), team size = min(block.y, team_size_max).
    int lanes = 1, team = 1;
    if (!kHostSpace) {
        while (lanes * 2 <= std::min(f.bx, Policy::vector_length_max())) lanes *= 2;
        const Policy probe = Policy(instance_of(s), static_cast<int>(league), Kokkos::AUTO, lanes)
                                 .set_scratch_size(f.scratch_level, scratch);
        team = std::max(1, std::min(f.by, probe.team_size_max(f, Kokkos::ParallelForTag())));
    }
    const Policy policy =
        Policy(instance_of(s), static_cast<int>(league), team, lanes).set_scratch_size(f.scratch_level, scratch);
    auto lock = dispatch_lock();
    Kokkos::parallel_for(label, policy, f);
}

TiledMatmulFn matmul_fn(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t m, std::size_t n,
                        std::size_t k, bool ta, bool tb) {
    TiledMatmulFn f{};
    f.a = cv(a, m * k);
    f.b = cv(b, k * n);
    f.c = fv(c, m * n);
    f.m = static_cast<Index>(m);
    f.n = static_cast<Index>(n);
    f.k = static_cast<Index>(k);
    f.ta = ta;
    f.tb = tb;
    f.act = act_none;
    return f;
}

}  // namespace

void KokkosDevice::k_add(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t n, const LaunchGeometry& g,
                         Stream& s) {
    range("accel::add", n, g, s, AddFn{cv(a, n), cv(b, n), fv(c, n)});
}

void KokkosDevice::k_sigmoid(DeviceHandle x, DeviceHandle y, std::size_t n, const LaunchGeometry& g, Stream& s) {
    range("accel::sigmoid", n, g, s, ActivateFn{cv(x, n), fv(y, n), act_sigmoid});
}

void KokkosDevice::k_relu(DeviceHandle x, DeviceHandle y, std::size_t n, const LaunchGeometry& g, Stream& s) {
    range("accel::relu", n, g, s, ActivateFn{cv(x, n), fv(y, n), act_relu});
}

void KokkosDevice::k_relu_backward(DeviceHandle dy, DeviceHandle x, DeviceHandle dx, std::size_t n,
                                   const LaunchGeometry& g, Stream& s) {
    range("accel::relu_backward", n, g, s, ReluBackwardFn{cv(dy, n), cv(x, n), fv(dx, n)});
}

void KokkosDevice::k_sigmoid_backward(DeviceHandle dy, DeviceHandle y, DeviceHandle dx, std::size_t n,
                                      const LaunchGeometry& g, Stream& s) {
    range("accel::sigmoid_backward", n, g, s, SigmoidBackwardFn{cv(dy, n), cv(y, n), fv(dx, n)});
}

void KokkosDevice::k_matmul(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t m, std::size_t n,
                            std::size_t k, bool ta, bool tb, const LaunchGeometry& g, Stream& s) {
    tiled("accel::matmul", matmul_fn(a, b, c, m, n, k, ta, tb), g, s);
}

void KokkosDevice::k_gemm_vendor(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t m, std::size_t n,
                                 std::size_t k, bool ta, bool tb, float beta, Stream& s) {
    gemm_vendor(instance_of(s), static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(c), m,
                n, k, ta, tb, beta);
}

void KokkosDevice::k_bias_activation(DeviceHandle bias, DeviceHandle y, std::size_t rows, std::size_t cols,
                                     bool read_y, Activation act, const LaunchGeometry& g, Stream& s) {
    range("accel::bias_activation", rows * cols, g, s,
          BiasActivationFn{cv(bias, cols), fv(y, rows * cols), static_cast<Index>(cols), read_y, act_code(act)});
}

void KokkosDevice::k_dense(DeviceHandle x, DeviceHandle w, DeviceHandle bias, DeviceHandle y, std::size_t batch,
                           std::size_t in, std::size_t out, Activation act, const LaunchGeometry& g, Stream& s) {
    TiledMatmulFn f = matmul_fn(x, w, y, batch, out, in, false, true);  // x·Wᵀ, W stored [out, in]
    f.bias = cv(bias, out);
    f.act = act_code(act);
    tiled("accel::dense", f, g, s);
}

void KokkosDevice::k_column_sum(DeviceHandle x, DeviceHandle y, std::size_t rows, std::size_t cols,
                                const LaunchGeometry& g, Stream& s) {
    range("accel::column_sum", cols, g, s,
          ColumnSumFn{cv(x, rows * cols), fv(y, cols), static_cast<Index>(rows), static_cast<Index>(cols)});
}

void KokkosDevice::k_bce_with_logits(DeviceHandle z, DeviceHandle t, DeviceHandle l, std::size_t n,
                                     const LaunchGeometry& g, Stream& s) {
    range("accel::bce_with_logits", n, g, s, BceFn{cv(z, n), cv(t, n), fv(l, n)});
}

void KokkosDevice::k_bce_with_logits_backward(DeviceHandle z, DeviceHandle t, DeviceHandle dz, std::size_t n,
                                              float scale, const LaunchGeometry& g, Stream& s) {
    range("accel::bce_with_logits_backward", n, g, s, BceBackwardFn{cv(z, n), cv(t, n), fv(dz, n), scale});
}

void KokkosDevice::k_adam_step(DeviceHandle p, DeviceHandle grad, DeviceHandle m, DeviceHandle v, std::size_t n,
                               float beta1, float beta2, float eps, float step_size, float bc2_sqrt,
                               const LaunchGeometry& g, Stream& s) {
    range("accel::adam_step", n, g, s,
          AdamFn{fv(p, n), cv(grad, n), fv(m, n), fv(v, n), beta1, beta2, eps, step_size, bc2_sqrt});
}

namespace {
// The probe: on host spaces blocks of kFmaLanes elements per index (vector
// instructions), the chunk block.x / kFmaLanes blocks (at least 1); on device
// spaces one element per index. A template so that device builds never
// instantiate the host functor.
template <bool Host = kHostSpace>
void fma_probe(FloatView y, std::size_t n, std::size_t iterations, const LaunchGeometry& g, Stream& s) {
    if constexpr (Host) {
        LaunchGeometry blocks = g;
        blocks.block.x = std::max<std::size_t>(1, g.block.x / kFmaLanes);
        const std::size_t count = (n + kFmaLanes - 1) / kFmaLanes;
        range("accel::fma_throughput", count, blocks, s,
              FmaProbeHostFn{y, static_cast<Index>(n), static_cast<Index>(iterations)});
    } else {
        range("accel::fma_throughput", n, g, s, FmaProbeFn{y, static_cast<Index>(iterations)});
    }
}
}  // namespace

void KokkosDevice::fma_throughput(DeviceHandle y, std::size_t n, std::size_t iterations, const LaunchGeometry& g,
                                    Stream& s) {
    fma_probe(fv(y, n), n, iterations, g, s);
}

// Does nothing: accel-bench times it as the bare cost of one launch.
struct EmptyFn {
    KOKKOS_INLINE_FUNCTION void operator()(const Index) const {}
};

void KokkosDevice::launch_empty(Stream& s) {
    require_runtime();
    auto lock = dispatch_lock();
    Kokkos::parallel_for("accel::empty", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(instance_of(s), 0, 1),
                         EmptyFn{});
}

}  // namespace kokkos
}  // namespace accel
