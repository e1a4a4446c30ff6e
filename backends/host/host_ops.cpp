// Host backend: the op kernels, registered per (op, dtype, path) (arguments
// already validated by ops/). Each kernel is written once as a template over
// the storage type T; it computes in F = Compute<T> (double for f64, float
// otherwise: f16/bf16 are storage only) and rounds once when it stores. The
// f32 instantiation is the same loop the compiler vectorizes; sigmoid and the
// f32 matmul keep their tuned kernels (kernels/).
#include "host_device.hpp"
#include "../common/kernel_table.hpp"

#include "kernels/elementwise.hpp"
#include "kernels/matmul.hpp"
#include "kernels/parallel.hpp"

#include "../common/compute_type.hpp"
#include "../common/dot_math.hpp"

#include <accel/error.hpp>
#include <accel/round_to_odd.hpp>

#include <Eigen/Core>

#include <cmath>
#include <type_traits>
#include <vector>

namespace accel {
namespace host {

namespace {

using compute::Compute;

template <class T>
Compute<T> ld(const T* p, std::size_t i) {
    return compute::to_compute(p[i]);
}
template <class T>
void st(T* p, std::size_t i, Compute<T> v) {
    p[i] = compute::from_compute<T>(v);  // Eigen::half / bfloat16: round to nearest even
}

// Elementwise: block.x elements per task, each task a plain loop.
template <class Body>
void each(std::size_t n, const LaunchGeometry& g, Body body) {
    parallel_for(n, g.block.x, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) body(i);
    });
}

template <class F>
F activate(F v, Activation act) {
    switch (act) {
        case Activation::relu: return relu1(v);
        case Activation::sigmoid: return sigmoid1(v);
        case Activation::gelu: return gelu_math::gelu<cpu::CpuMath>(v);
        case Activation::gelu_tanh: return gelu_math::gelu_tanh<cpu::CpuMath>(v);
        case Activation::none: break;
    }
    return v;
}

// out[0][i] = op(in[0][i], in[1][i]) (cpu::Elementwise; scale = scalars[0]
// for bce_with_logits_backward). f32/f64: the vectorized, multi-versioned
// loops (kernels/elementwise); f16/bf16 per element, widened and rounded once.
template <class T>
void elementwise(cpu::Elementwise op, const KernelArgs& a) {
    using F = Compute<T>;
    const T* x0 = in<T>(a.in[0]);
    const T* x1 = a.in[1] ? in<T>(a.in[1]) : x0;  // ops of one input: b = a, unused
    T* y = out<T>(a.out[0]);
    const F scale = cpu::takes_scale(op) ? static_cast<F>(a.scalars[0]) : F(0);
    if constexpr (std::is_same<T, F>::value) {
        parallel_for(a.n, a.geometry.block.x,
                     [&](std::size_t b, std::size_t e) { host::elementwise(op, x0, x1, y, b, e, scale); });
    } else {
        const auto run = [&](auto op_constant) {
            constexpr cpu::Elementwise kOp = decltype(op_constant)::value;
            each(a.n, a.geometry,
                 [=](std::size_t i) { st(y, i, cpu::elementwise1<kOp>(ld(x0, i), ld(x1, i), scale)); });
        };
        cpu::with_elementwise(op, run);
    }
}

// y[r,c] = act(alpha·y[r,c] + bias[c]) over y[rows, cols]; alpha 0 does not read y.
// float32: the vectorized, multi-versioned rows (kernels/elementwise).
template <class T>
void bias_activation(const T* bias, T* y, std::size_t rows, std::size_t cols, bool read_y, Activation act) {
    using F = Compute<T>;
    if constexpr (std::is_same<T, float>::value) {
        parallel_for(rows, 16, [&](std::size_t r0, std::size_t r1) {
            bias_activation_rows(bias, y, r0, r1, cols, read_y, static_cast<int>(act));
        });
        return;
    }
    parallel_for(rows, 16, [&](std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r)
            for (std::size_t c = 0; c < cols; ++c) {
                const F v = (read_y ? ld(y, r * cols + c) : F(0)) + (bias ? ld(bias, c) : F(0));
                st(y, r * cols + c, activate(v, act));
            }
    });
}

// C[m,n] = op(A)·op(B) accumulated in F. f32 and f64: the blocked CPU GEMM
// (kernels/matmul). f16/bf16: operands widened to f32 once (as a GEMM packs
// them), the f32 GEMM, one rounding of C (a 16-bit C inside the GEMM would
// be rounded after every KC-deep pass).
template <class T>
void matmul_native_t(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb) {
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
        matmul_native(a, b, c, m, n, k, ta, tb);
    } else {
        std::vector<float> a32(m * k), b32(k * n), c32(m * n);
        for (std::size_t i = 0; i < a32.size(); ++i) a32[i] = ld(a, i);
        for (std::size_t i = 0; i < b32.size(); ++i) b32[i] = ld(b, i);
        matmul_native(a32.data(), b32.data(), c32.data(), m, n, k, ta, tb);
        for (std::size_t i = 0; i < c32.size(); ++i) st(c, i, c32[i]);
    }
}

// y[i] = x[i] converted from S to T, rounded once: through double when
// either is double (double → f16/bf16 through float rounded to odd), else
// through float (exact for every f16/bf16 value).
template <class S, class T>
void convert_range(const void* x, void* y, std::size_t n, const LaunchGeometry& g) {
    const S* xi = static_cast<const S*>(x);
    T* yo = static_cast<T*>(y);
    if constexpr (std::is_same<S, double>::value && !std::is_same<T, float>::value && !std::is_same<T, double>::value)
        each(n, g, [=](std::size_t i) { yo[i] = static_cast<T>(round_to_odd_float(xi[i])); });
    else {
        using Wide = std::conditional_t<std::is_same<S, double>::value || std::is_same<T, double>::value, double, float>;
        each(n, g, [=](std::size_t i) { yo[i] = static_cast<T>(static_cast<Wide>(xi[i])); });
    }
}

// Calls f(S{}) with S the host storage type of dtype t.
template <class F>
void with_storage(DType t, F f) {
    switch (t) {
        case DType::f32: return f(float{});
        case DType::f64: return f(double{});
        case DType::f16: return f(Eigen::half{});
        case DType::bf16: return f(Eigen::bfloat16{});
    }
}

template <class T>
void register_dtype(HostDevice& d, DType dt) {
    using F = Compute<T>;
    const OpPath native = OpPath::native;
    for (const cpu::ElementwiseOp& e : cpu::kElementwiseOps)
        d.kernel_table().add(e.op, dt, native, [loop = e.loop](const KernelArgs& a) { elementwise<T>(loop, a); });
    d.kernel_table().add(Op::sigmoid, dt, native, [](const KernelArgs& a) {
        const T* x = in<T>(a.in[0]);
        T* y = out<T>(a.out[0]);
        if constexpr (std::is_same<T, float>::value)
            parallel_for(a.n, a.geometry.block.x, [&](std::size_t b, std::size_t e) { sigmoid_range(x, y, b, e); });
        else
            each(a.n, a.geometry, [=](std::size_t i) { st(y, i, sigmoid1(ld(x, i))); });
    });
    d.kernel_table().add(Op::matmul, dt, native, [](const KernelArgs& a) {
        const GemmArgs p = GemmArgs::of(a);
        matmul_native_t(in<T>(a.in[0]), in<T>(a.in[1]), out<T>(a.out[0]), p.m, p.n, p.k, p.trans_a, p.trans_b);
    });
    d.kernel_table().add(Op::dense, dt, native, [](const KernelArgs& a) {
        const DenseArgs p = DenseArgs::of(a);
        const GemmArgs xw = p.gemm();  // x·Wᵀ, W [out, in]
        T* y = out<T>(a.out[0]);
        matmul_native_t(in<T>(a.in[0]), in<T>(a.in[1]), y, xw.m, xw.n, xw.k, xw.trans_a, xw.trans_b);
        if (a.in[2] || p.act != Activation::none) bias_activation(in<T>(a.in[2]), y, p.batch, p.out, true, p.act);
    });
    d.kernel_table().add(Op::bias_activation, dt, native, [](const KernelArgs& a) {
        const MatrixArgs p = MatrixArgs::of(a);
        bias_activation(in<T>(a.in[0]), out<T>(a.out[0]), p.rows, p.cols, a.scalars[0] != 0, p.act);
    });
    d.kernel_table().add(Op::column_sum, dt, native, [](const KernelArgs& a) {
        const T* x = in<T>(a.in[0]);
        T* y = out<T>(a.out[0]);
        const std::size_t rows = MatrixArgs::of(a).rows, cols = MatrixArgs::of(a).cols;
        // Columns split across threads; each column summed in row order, in F.
        if constexpr (std::is_same<T, F>::value) {
            parallel_for(cols, cpu::kColumnSumWidth,
                         [&](std::size_t c0, std::size_t c1) { column_sum(x, y, rows, cols, c0, c1); });
            return;
        }
        parallel_for(cols, 64, [&](std::size_t c0, std::size_t c1) {
            std::vector<F> acc(c1 - c0, F(0));
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t c = c0; c < c1; ++c) acc[c - c0] += ld(x, r * cols + c);
            for (std::size_t c = c0; c < c1; ++c) st(y, c, acc[c - c0]);
        });
    });
    d.kernel_table().add(Op::dot, dt, native, [](const KernelArgs& a) {
        // Block j is the j-th contiguous chunk (dot_math), summed on one
        // thread; then the blocks' sums in order.
        const DotArgs p = DotArgs::of(a);
        const T *x = in<T>(a.in[0]), *y = in<T>(a.in[1]);
        F* partial = out<F>(p.partials);
        parallel_for(p.blocks, 1, [&](std::size_t j0, std::size_t j1) {
            for (std::size_t j = j0; j < j1; ++j) {
                const std::size_t b = dot_math::chunk_begin(j, a.n, p.blocks), e = dot_math::chunk_end(j, a.n, p.blocks);
                if constexpr (std::is_same<T, F>::value)
                    partial[j] = dot(x, y, b, e);  // multi-versioned (kernels/elementwise)
                else
                    partial[j] = dot_math::dot_chunk(x, y, b, e);
            }
        });
        F sum = F(0);
        for (std::size_t j = 0; j < p.blocks; ++j) sum += partial[j];
        st(out<T>(a.out[0]), 0, sum);
    });
    d.kernel_table().add(Op::bce_with_logits, dt, native, [](const KernelArgs& a) {
        const T *z = in<T>(a.in[0]), *t = in<T>(a.in[1]);
        T* l = out<T>(a.out[0]);
        each(a.n, a.geometry, [=](std::size_t i) { st(l, i, bce1(ld(z, i), ld(t, i))); });
    });
    d.kernel_table().add(Op::convert, dt, native, [](const KernelArgs& a) {
        with_storage(a.src_dtype, [&](auto s) { convert_range<decltype(s), T>(a.in[0], a.out[0], a.n, a.geometry); });
    });
    d.kernel_table().add(Op::adam_step, dt, native, [](const KernelArgs& a) {
        T *p = out<T>(a.out[0]), *m = out<T>(a.out[1]), *v = out<T>(a.out[2]);
        const T* g = in<T>(a.in[1]);
        const auto h = AdamScalarArgs::of(a);
        const AdamScalars<F> s{F(h.beta1), F(h.beta2), F(h.eps), F(h.step_size), F(h.bias_correction2_sqrt)};
        if constexpr (std::is_same<T, F>::value) {
            parallel_for(a.n, a.geometry.block.x, [&](std::size_t b, std::size_t e) { adam(p, g, m, v, b, e, s); });
        } else {
            each(a.n, a.geometry, [=](std::size_t i) {
                F pi = ld(p, i), mi = ld(m, i), vi = ld(v, i);
                adam1(pi, ld(g, i), mi, vi, s);
                st(p, i, pi);
                st(m, i, mi);
                st(v, i, vi);
            });
        }
    });
}

}  // namespace

// The dtypes the CBLAS runs gemm in: sgemm (f32), dgemm (f64), sbgemm (bf16,
// OpenBLAS built with BUILD_BFLOAT16).
static std::vector<DType> vendor_gemm_dtypes(const Cblas& blas) {
    std::vector<DType> all;
    if (blas.sgemm) all.push_back(DType::f32);
    if (blas.dgemm) all.push_back(DType::f64);
    if (blas.sbgemm) all.push_back(DType::bf16);
    return all;
}

void HostDevice::register_kernels() {
    // The kernel table: every op in every dtype natively; vendor gemm where the CBLAS has the dtype.
    const Cblas& blas = cblas();
    kernel_table().claim({{native_ops_of_every_backend(), {std::begin(kAllDTypes), std::end(kAllDTypes)}, OpPath::native},
                   {{Op::gemm}, vendor_gemm_dtypes(blas), OpPath::vendor}});
    register_dtype<float>(*this, DType::f32);
    register_dtype<double>(*this, DType::f64);
    register_dtype<Eigen::half>(*this, DType::f16);
    register_dtype<Eigen::bfloat16>(*this, DType::bf16);
    for (DType t : vendor_gemm_dtypes(blas))
        with_storage(t, [&](auto storage) {
            using T = decltype(storage);
            if constexpr (!std::is_same<T, Eigen::half>::value)  // no CBLAS has an f16 gemm
                kernel_table().add(Op::gemm, t, OpPath::vendor, [&blas](const KernelArgs& a) {
                    const GemmArgs p = GemmArgs::of(a);
                    gemm_vendor(blas, in<T>(a.in[0]), in<T>(a.in[1]), out<T>(a.out[0]), p.m, p.n, p.k, p.trans_a,
                                p.trans_b, a.scalars[0]);
                });
        });
}

// The library's file name and the missing entry point, not the description
// (its folder and CPU core differ between machines; accel-info shows it).
std::string HostDevice::do_unsupported_reason(Op op, DType t, OpPath path) const {
    if (path != OpPath::vendor || !op_info(op).has_vendor_path) return "";
    const Cblas& blas = cblas();
    if (!blas.sgemm) return "no CBLAS library was loaded: " + blas.description;
    if (t == DType::f16)
        return "CBLAS has no f16 gemm (the host's vendor kernels are cblas_sgemm, cblas_dgemm and cblas_sbgemm)";
    const char* entry = t == DType::f64 ? "cblas_dgemm" : t == DType::bf16 ? "cblas_sbgemm" : "cblas_sgemm";
    std::string why = "the host's CBLAS (" + blas.library + ") has no " + entry;
    if (t == DType::bf16) why += " (OpenBLAS has it when built with BUILD_BFLOAT16)";
    return why;
}

void HostDevice::fma_throughput(DeviceHandle y, DType dtype, std::size_t n, std::size_t iterations,
                                const LaunchGeometry& g, Stream&) {
    if (dtype == DType::f16)
        throw Unsupported("fma_throughput: " + selector() + " has no f16 probe (C++17 has no half arithmetic; f16 "
                          "computes in f32)");
    const auto run = [&](auto* yo) {
        parallel_for(n, g.block.x, [&](std::size_t b, std::size_t e) { fma_probe(yo, b, e, iterations); });
    };
    if (dtype == DType::f64)
        run(out<double>(y));
    else
        run(out<float>(y));
}

}  // namespace host
}  // namespace accel
