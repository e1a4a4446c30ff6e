// Kokkos backend: elementwise kernels as functors, one index per call, run
// with a RangePolicy over [0, n) (see KokkosDevice for the chunk size). Each
// is a template over the storage type T (float, double, Eigen::half,
// Eigen::bfloat16) computing in F = Compute<T>: loads widen, stores round once.
#pragma once

#include "views.hpp"

#include "host_loops.hpp"

#include "../../common/dot_math.hpp"

#include <accel/round_to_odd.hpp>

#include <type_traits>

namespace accel {
namespace kokkos {

/// Widening loads and rounding stores (backends/common/compute_type.hpp).
using compute::from_compute;
using compute::to_compute;

/// The formulas of the op table's elementwise ops (OpInfo::elementwise_reference),
/// one element in F = Compute<T>: y = f(a, b), b unused by ops of one input.
namespace formula {
struct Add {
    template <class F>
    KOKKOS_INLINE_FUNCTION F operator()(F a, F b) const { return a + b; }
};
struct Mul {
    template <class F>
    KOKKOS_INLINE_FUNCTION F operator()(F a, F b) const { return a * b; }
};
struct Copy {
    template <class F>
    KOKKOS_INLINE_FUNCTION F operator()(F x, F) const { return x; }
};
struct Sigmoid {
    template <class F>
    KOKKOS_INLINE_FUNCTION F operator()(F x, F) const { return sigmoid1(x); }
};
struct Relu {
    template <class F>
    KOKKOS_INLINE_FUNCTION F operator()(F x, F) const { return relu1(x); }
};
/// a = dy, b = x.
struct ReluBackward {
    template <class F>
    KOKKOS_INLINE_FUNCTION F operator()(F dy, F x) const { return x > F(0) ? dy : F(0); }
};
/// a = dy, b = y = σ(x).
struct SigmoidBackward {
    template <class F>
    KOKKOS_INLINE_FUNCTION F operator()(F dy, F y) const { return dy * y * (F(1) - y); }
};
/// The gelu ops (backends/common/gelu_math.hpp); a = dy, b = x for the backward ones.
template <Op kOp>
struct Gelu {
    template <class F>
    KOKKOS_INLINE_FUNCTION F operator()(F a, F b) const { return gelu_math::of<kOp, KokkosMath>(a, b); }
};
/// a = z (logit), b = t (target).
struct Bce {
    template <class F>
    KOKKOS_INLINE_FUNCTION F operator()(F z, F t) const { return bce1(z, t); }
};
}  // namespace formula

/// y[i] = Formula(a[i], b[i]) for one elementwise op; a or b may alias y
/// (in place). Ops of one input are given b = a.
template <class T, class Formula>
struct ElementwiseFn {
    ConstTypedView<T> a, b;
    TypedView<T> y;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
        y(i) = from_compute<T>(Formula{}(to_compute(a(i)), to_compute(b(i))));
    }
};

/// Calls run(ElementwiseFn<T, formula of op>{a, b, y}) and returns true, or
/// returns false when `op` has no formula here. The one list of this
/// backend's per-element kernels: kokkos_ops.cpp registers every op of
/// elementwise_ops_of_every_backend() through it.
template <class T, class Run>
bool with_elementwise_fn(Op op, ConstTypedView<T> a, ConstTypedView<T> b, TypedView<T> y, Run&& run) {
    switch (op) {
        case Op::add: run(ElementwiseFn<T, formula::Add>{a, b, y}); return true;
        case Op::mul: run(ElementwiseFn<T, formula::Mul>{a, b, y}); return true;
        case Op::copy: run(ElementwiseFn<T, formula::Copy>{a, b, y}); return true;
        case Op::sigmoid: run(ElementwiseFn<T, formula::Sigmoid>{a, b, y}); return true;
        case Op::relu: run(ElementwiseFn<T, formula::Relu>{a, b, y}); return true;
        case Op::relu_backward: run(ElementwiseFn<T, formula::ReluBackward>{a, b, y}); return true;
        case Op::sigmoid_backward: run(ElementwiseFn<T, formula::SigmoidBackward>{a, b, y}); return true;
        case Op::bce_with_logits: run(ElementwiseFn<T, formula::Bce>{a, b, y}); return true;
        case Op::gelu: run(ElementwiseFn<T, formula::Gelu<Op::gelu>>{a, b, y}); return true;
        case Op::gelu_tanh: run(ElementwiseFn<T, formula::Gelu<Op::gelu_tanh>>{a, b, y}); return true;
        case Op::gelu_backward: run(ElementwiseFn<T, formula::Gelu<Op::gelu_backward>>{a, b, y}); return true;
        case Op::gelu_tanh_backward:
            run(ElementwiseFn<T, formula::Gelu<Op::gelu_tanh_backward>>{a, b, y});
            return true;
        default: return false;
    }
}

/// y[i] = s·x[i] (scale), or y[i] = x[i] + s·c[i] (triad, `c` given).
template <class T>
struct ScaledFn {
    ConstTypedView<T> x, c;
    TypedView<T> y;
    Compute<T> s;
    bool triad;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
        y(i) = from_compute<T>(triad ? to_compute(x(i)) + s * to_compute(c(i)) : s * to_compute(x(i)));
    }
};

/// dot's blocks (KernelArgs' DotArgs): index j writes the sum of a·b over
/// its contiguous chunk (dot_math) to partials(j).
template <class T>
struct DotBlocksFn {
    ConstTypedView<T> a, b;
    Kokkos::View<Compute<T>*, Kokkos::AnonymousSpace, Unmanaged> partials;
    std::size_t n, blocks;
    KOKKOS_INLINE_FUNCTION void operator()(Index j) const {
        const std::size_t jj = static_cast<std::size_t>(j);
        partials(j) = dot_math::dot_chunk(a.data(), b.data(), dot_math::chunk_begin(jj, n, blocks),
                                          dot_math::chunk_end(jj, n, blocks));
    }
};

/// dot's total: one index sums the partials in order into y(0).
template <class T>
struct DotSumFn {
    Kokkos::View<const Compute<T>*, Kokkos::AnonymousSpace, Unmanaged> partials;
    TypedView<T> y;
    std::size_t blocks;
    KOKKOS_INLINE_FUNCTION void operator()(Index) const {
        Compute<T> sum = Compute<T>(0);
        for (std::size_t j = 0; j < blocks; ++j) sum += partials(j);
        y(0) = from_compute<T>(sum);
    }
};

/// dz[i] = scale * (sigmoid(z[i]) - t[i]).
template <class T>
struct BceBackwardFn {
    ConstTypedView<T> z, t;
    TypedView<T> dz;
    Compute<T> scale;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
        dz(i) = from_compute<T>(scale * (sigmoid1(to_compute(z(i))) - to_compute(t(i))));
    }
};

/// y[i] = x[i] converted from storage type S to T: through double when
/// either is double, else through float (exact for f16/bf16), rounding once.
/// Host: whether it runs in a host execution space (see the specialization).
template <class S, class T, bool Host>
struct ConvertFn {
    using Wide = std::conditional_t<std::is_same<S, double>::value || std::is_same<T, double>::value, double, float>;
    ConstTypedView<S> x;
    TypedView<T> y;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const { y(i) = static_cast<T>(static_cast<Wide>(x(i))); }
};

/// On host spaces, double → f16/bf16 goes through float rounded to odd, so
/// the value is rounded once (accel/round_to_odd.hpp, host code: this
/// operator() is never compiled for a device).
template <class S, class T>
struct ConvertFn<S, T, true> {
    using Wide = typename ConvertFn<S, T, false>::Wide;
    static constexpr bool kOddFirst =
        std::is_same<S, double>::value && !std::is_same<T, float>::value && !std::is_same<T, double>::value;
    ConstTypedView<S> x;
    TypedView<T> y;
    void operator()(Index i) const {
        if constexpr (kOddFirst)
            y(i) = static_cast<T>(round_to_odd_float(x(i)));
        else
            y(i) = static_cast<T>(static_cast<Wide>(x(i)));
    }
};

/// PyTorch's Adam per element (see ops::adam_step), in Compute<T>.
template <class T>
struct AdamFn {
    using F = Compute<T>;
    TypedView<T> p;
    ConstTypedView<T> g;
    TypedView<T> m, v;
    F beta1, beta2, eps, step_size, bc2_sqrt;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
        const F gi = to_compute(g(i));
        const F mi = beta1 * to_compute(m(i)) + (F(1) - beta1) * gi;
        const F vi = beta2 * to_compute(v(i)) + (F(1) - beta2) * gi * gi;
        m(i) = from_compute<T>(mi);
        v(i) = from_compute<T>(vi);
        p(i) = from_compute<T>(to_compute(p(i)) - step_size * mi / (kmath::sqrt(vi) / bc2_sqrt + eps));
    }
};

/// The fma_throughput probe (see accel::Probes::fma_throughput): 8 independent
/// chains a_j = a_j * 0.9999 + 1e-4 per work-item, y[i] = Σ_j a_j.
/// F: float or double (the probe's compute type).
template <class F>
struct FmaProbeFn {
    TypedView<F> y;
    Index iterations;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
        F a[8];
        for (int j = 0; j < 8; ++j) a[j] = static_cast<F>(static_cast<float>(i) * 1e-9f + static_cast<float>(j));
        for (Index it = 0; it < iterations; ++it)
            for (int j = 0; j < 8; ++j) a[j] = a[j] * F(0.9999f) + F(1e-4f);
        F s = 0;
        for (int j = 0; j < 8; ++j) s += a[j];
        y(i) = s;
    }
};



/// f32 sigmoid on host spaces: index b covers elements [b·kSigmoidBlock,
/// (b+1)·kSigmoidBlock) ∩ [0, n) as one vector loop (one scalar exp per
/// element, ActivateFn's body, ran at 0.07 of add's bandwidth).
struct SigmoidHostFn {
    ConstView x;
    FloatView y;
    Index n;
    void operator()(Index b) const {
        const Index begin = b * kSigmoidBlock, end = begin + kSigmoidBlock < n ? begin + kSigmoidBlock : n;
        host_sigmoid_block(x.data(), y.data(), begin, end);
    }
};





/// f32/f64 column_sum on host spaces: index b sums columns [b·kColumnSumBlock,
/// (b+1)·kColumnSumBlock) ∩ [0, cols) as vector lanes (ColumnSumFn walks one
/// column per index, a stride of cols between loads).
template <class F>
struct ColumnSumHostFn {
    const F* x;
    F* y;
    Index rows, cols;
    void operator()(Index b) const {
        const Index c0 = b * kColumnSumBlock, c1 = c0 + kColumnSumBlock < cols ? c0 + kColumnSumBlock : cols;
        host_column_sum_block(x, y, rows, cols, c0, c1);
    }
};

/// dot's blocks on host spaces in f32/f64: DotBlocksFn's chunks, each one
/// vector loop (host_dot_block).
template <class F>
struct DotBlocksHostFn {
    const F *a, *b;
    F* partials;
    std::size_t n, blocks;
    void operator()(Index j) const {
        const auto jj = static_cast<std::size_t>(j);
        partials[j] = host_dot_block(a, b, static_cast<Index>(dot_math::chunk_begin(jj, n, blocks)),
                                     static_cast<Index>(dot_math::chunk_end(jj, n, blocks)));
    }
};

/// f32/f64 elementwise ops on host spaces: index b covers elements
/// [b·kSigmoidBlock, (b+1)·kSigmoidBlock) ∩ [0, n) as one vector loop
/// (the per-index functors run scalar: relu_backward's select stayed a
/// branch, and the loop is one call per element).
template <class F>
struct ElementwiseHostFn {
    cpu::Elementwise op;
    const F* a;
    const F* b;
    F* y;
    Index n;
    F scale;
    void operator()(Index blk) const {
        const Index begin = blk * kSigmoidBlock, end = begin + kSigmoidBlock < n ? begin + kSigmoidBlock : n;
        host_elementwise_block(op, a, b, y, begin, end, scale);
    }
};

/// Adam on host spaces, blocks as ElementwiseHostFn.
template <class F>
struct AdamHostFn {
    F *p, *m, *v;
    const F* g;
    Index n;
    F scalars[5];  ///< β1, β2, ε, step size, √(1 − β2^t)
    void operator()(Index blk) const {
        const Index begin = blk * kSigmoidBlock, end = begin + kSigmoidBlock < n ? begin + kSigmoidBlock : n;
        host_adam_block(p, g, m, v, begin, end, scalars);
    }
};



/// f32 dense epilogue on host spaces: index b covers rows [b·kEpilogueRows,
/// (b+1)·kEpilogueRows) ∩ [0, rows) (BiasActivationFn's body per element
/// runs scalar: its activation chosen per element, a scalar exp).
struct BiasActivationHostFn {
    const float* bias;  ///< null: no bias
    float* y;
    Index rows, cols;
    bool read_y;
    int act;
    void operator()(Index b) const {
        const Index r0 = b * kEpilogueRows, r1 = r0 + kEpilogueRows < rows ? r0 + kEpilogueRows : rows;
        host_bias_activation_rows(bias, y, r0, r1, cols, read_y, act);
    }
};



/// The fma_throughput probe on host spaces: index b covers the kFmaLanes
/// elements from b·kFmaLanes, so the 8 chains of 16 neighbouring elements
/// run as vector instructions (FmaProbeFn's scalar chains reached 10 GFLOP/s
/// on a CPU whose vector units give 300). Same values as FmaProbeFn.
template <class F>
struct FmaProbeHostFn {
    TypedView<F> y;
    Index n, iterations;
    void operator()(Index b) const { host_fma_block(y.data(), b * kFmaLanes, n, iterations); }
};

/// y[c] = Σ_r x[r*cols + c], one column per index, summed in row order in Compute<T>.
template <class T>
struct ColumnSumFn {
    ConstTypedView<T> x;
    TypedView<T> y;
    Index rows, cols;
    KOKKOS_INLINE_FUNCTION void operator()(Index c) const {
        Compute<T> s = 0;
        for (Index r = 0; r < rows; ++r) s += to_compute(x(r * cols + c));
        y(c) = from_compute<T>(s);
    }
};

/// y[r,c] = act((read_y ? y[r,c] : 0) + bias[c]) over y[rows, cols] flattened
/// (bias empty: no bias): the vendor path's epilogue and its K = 0 result.
template <class T>
struct BiasActivationFn {
    using F = Compute<T>;
    ConstTypedView<T> bias;
    TypedView<T> y;
    Index cols;
    bool read_y;
    int act;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
        const F v = (read_y ? to_compute(y(i)) : F(0)) + (bias.data() ? to_compute(bias(i % cols)) : F(0));
        y(i) = from_compute<T>(activate(v, act));
    }
};


}  // namespace kokkos
}  // namespace accel
