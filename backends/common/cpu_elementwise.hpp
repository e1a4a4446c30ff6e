// Elementwise loops shared by the CPU backends (the host backend and Kokkos'
// host execution spaces): written once, inlined into each backend's
// multi-versioned functions so that every clone vectorizes them for its
// instruction set.
#pragma once

#include <accel/activation_codes.h>

#include "elementwise_ops.hpp"
#include "gelu_math.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace accel {
namespace cpu {

/// exp(y)·2^64 for y <= 0 (or NaN), float32, as the product of the two
/// normal floats `mantissa`·`scale` (so that a caller can fuse it into an
/// fma); branch-free so that loops of it vectorize inline. y = k·ln2 + r
/// with k = round(y·log2(e)) and |r| <= ln2/2 (ln2 in two parts, so r is
/// exact up to the last fma); exp(r) by a
/// degree-5 polynomial, 1 + r + r²·q(r) with q the cubic that minimizes
/// the largest relative error on [-ln2/2, ln2/2] (1.06e-7; Taylor's degree
/// 5 would leave 2.4e-6), evaluated by Horner; times 2^(k+64), built in the
/// exponent field. k comes from adding 1.5·2^23, which rounds y·log2(e) to
/// an integer in the low mantissa bits. Why scaled by 2^64: for every y
/// down to kExpFloor the result is a normal float and the product exact,
/// so the caller's one division rounds once, straight to the subnormal
/// where its value is one. y below kExpFloor is taken at it (k >= -188, so
/// 2^(k+64) stays normal; exp is far below the smallest subnormal there);
/// -inf gives exp(kExpFloor)·2^64, NaN passes. Relative error at most
/// 1.06e-7 + 2.5 roundings (1.5e-7 in all).
/// The OpenCL backend's exp_nonpositive (kernels/common.cl) is the same
/// algorithm in OpenCL C. Why not libmvec's vector expf: the call and its
/// special cases cost more than the whole sigmoid's memory traffic on CPUs.
constexpr float kExpFloor = -130.0f;
struct ScaledExp {
    float mantissa, scale;  ///< exp(y)·2^64 = mantissa·scale, exactly
};
__attribute__((always_inline)) inline ScaledExp exp_nonpositive_2p64(float y) {
    y = y < kExpFloor ? kExpFloor : y;
    const float kf = std::fma(y, 1.44269504088896341f, 12582912.0f);  // 1.5·2^23 + k
    const float k = kf - 12582912.0f;
    float r = std::fma(k, -0.693145751953125f, y);  // ln2, high part: k·it is exact
    r = std::fma(k, -1.428606765330187045e-06f, r);  // ln2, low part
    float p = 0x1.106284p-7f;                        // q's coefficients, r³ down to r⁰
    p = std::fma(p, r, 0x1.5729fp-5f);
    p = std::fma(p, r, 0x1.5557aep-3f);
    p = std::fma(p, r, 0x1.fffdfcp-2f);
    p = std::fma(p, r, 1.0f);
    p = std::fma(p, r, 1.0f);
    std::uint32_t bits;  // unsigned: a NaN's bits wrap, defined (its p is NaN anyway)
    std::memcpy(&bits, &kf, sizeof bits);
    bits = (bits - 0x4B400000u + 127u + 64u) << 23;  // 2^(k+64), k+64 in [-124, 64]: a normal float
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return {p, scale};
}

/// Stable logistic, float32: with E = exp(−|x|)·2^64 (never overflows),
/// σ(x) = 2^64 / (2^64 + E) for x ≥ 0 and E / (2^64 + E) otherwise — one
/// division, which rounds the result once, subnormals included (σ(x) <
/// 2^-126 for x < -87.3). No branch: the numerator is a select. At most
/// 2.7e-7 relative error (all 2^32 inputs checked against float64), or half
/// a subnormal where the value is one; σ(−inf) = 0, σ(+inf) = 1, NaN passes.
/// The denominator is an explicit fma so that no compiler contracts it
/// differently in a vector body and its scalar tail: every element gets the
/// same bits wherever it lies.
__attribute__((always_inline)) inline float sigmoid1(float x) {
    std::uint32_t bits;  // −|x|: the sign bit set (one operation, not abs and negate)
    std::memcpy(&bits, &x, sizeof bits);
    bits |= 0x80000000u;
    float neg_abs;
    std::memcpy(&neg_abs, &bits, sizeof neg_abs);
    const ScaledExp e = exp_nonpositive_2p64(neg_abs);
    return (x >= 0.0f ? 0x1p64f : e.mantissa * e.scale) / std::fma(e.mantissa, e.scale, 0x1p64f);
}

/// The same in double (f64 tensors compute in double): libm's exp of
/// -|x| (never overflows; its subnormal range starts at -708).
inline double sigmoid1(double x) {
    const double e = std::exp(-std::fabs(x));
    const double r = 1.0 / (1.0 + e);
    return x >= 0.0 ? r : e * r;
}

/// Elements of one step of sigmoid_range's alternation between its halves.
constexpr std::size_t kSigmoidRun = 64;

/// y[i] = sigmoid1(x[i]) for i in [b, e) (float32; x may equal y). The
/// range is taken as two halves, done kSigmoidRun elements at a time in
/// alternation: two streams far apart keep more cache-line fills in flight
/// than one (on one 2-core Xeon thread, 0.90 of add's GB/s instead of
/// 0.73). Call it from a multi-versioned function: forced inline, it
/// vectorizes there.
__attribute__((always_inline)) inline void sigmoid_range(const float* x, float* y, std::size_t b, std::size_t e) {
    const std::size_t half = (e - b) / 2 / kSigmoidRun * kSigmoidRun, mid = b + half;
    for (std::size_t s = 0; s < half; s += kSigmoidRun) {
#pragma omp simd
        for (std::size_t i = b + s; i < b + s + kSigmoidRun; ++i) y[i] = sigmoid1(x[i]);
#pragma omp simd
        for (std::size_t i = mid + s; i < mid + s + kSigmoidRun; ++i) y[i] = sigmoid1(x[i]);
    }
#pragma omp simd
    for (std::size_t i = b + 2 * half; i < e; ++i) y[i] = sigmoid1(x[i]);
}

/// max(x, 0) that keeps NaN (as PyTorch): NaN <= 0 is false, so NaN passes.
/// One compare and a select: loops of it vectorize. F: float or double.
template <class F>
__attribute__((always_inline)) inline F relu1(F x) {
    return x <= F(0) ? F(0) : x;
}

/// The math of the gelu ops on the CPU (backends/common/gelu_math.hpp):
/// libm's erfc and exp, sigmoid1. F: float or double.
struct CpuMath {
    template <class F> ACCEL_COMPUTE_FN static F erfc(F x) { return std::erfc(x); }
    template <class F> ACCEL_COMPUTE_FN static F exp(F x) { return std::exp(x); }
    template <class F> ACCEL_COMPUTE_FN static F sigmoid(F x) { return sigmoid1(x); }
};

/// op(a, b) for one element in F (float or double), the formulas of
/// Elementwise. Every operand is an argument (loaded unconditionally by the
/// caller), so the selects of relu and relu_backward vectorize without
/// masked loads (GCC keeps `c ? b[i] : 0` as a branch where the ISA has none).
template <Elementwise Op, class F>
__attribute__((always_inline)) inline F elementwise1(F a, F b, F scale) {
    if constexpr (Op == Elementwise::add)
        return a + b;
    else if constexpr (Op == Elementwise::mul)
        return a * b;
    else if constexpr (Op == Elementwise::relu)
        return relu1(a);
    else if constexpr (Op == Elementwise::relu_backward)
        return b > F(0) ? a : F(0);
    else if constexpr (Op == Elementwise::sigmoid_backward)
        return a * b * (F(1) - b);
    else if constexpr (Op == Elementwise::gelu)
        return gelu_math::of<accel::Op::gelu, CpuMath>(a, b);
    else if constexpr (Op == Elementwise::gelu_tanh)
        return gelu_math::of<accel::Op::gelu_tanh, CpuMath>(a, b);
    else if constexpr (Op == Elementwise::gelu_backward)
        return gelu_math::of<accel::Op::gelu_backward, CpuMath>(a, b);
    else if constexpr (Op == Elementwise::gelu_tanh_backward)
        return gelu_math::of<accel::Op::gelu_tanh_backward, CpuMath>(a, b);
    else if constexpr (Op == Elementwise::scale)
        return scale * a;
    else if constexpr (Op == Elementwise::triad)
        return a + scale * b;
    else if constexpr (Op == Elementwise::copy)
        return a;
    else
        return scale * (sigmoid1(a) - b);
}

/// y[i] = elementwise1<Op>(a[i], b[i]) for i in [begin, end) (b unused by
/// the ops of one input).
template <Elementwise Op, class F>
__attribute__((always_inline)) inline void elementwise_loop(const F* a, const F* b, F* y, std::size_t begin,
                                                            std::size_t end, F scale) {
    if constexpr (is_unary(Op)) {
#pragma omp simd
        for (std::size_t i = begin; i < end; ++i) y[i] = elementwise1<Op>(a[i], F(0), scale);
    } else {
#pragma omp simd
        for (std::size_t i = begin; i < end; ++i) y[i] = elementwise1<Op>(a[i], b[i], scale);
    }
}

/// y[i] = op(a[i], b[i]) for i in [begin, end), F float or double (b unused
/// by relu; y may equal a or b): one vector loop per op, chosen once per
/// call. Call it from a multi-versioned function.
template <class F>
__attribute__((always_inline)) inline void elementwise_range(Elementwise op, const F* a, const F* b, F* y,
                                                             std::size_t begin, std::size_t end, F scale) {
    switch (op) {
        case Elementwise::add: return elementwise_loop<Elementwise::add>(a, b, y, begin, end, scale);
        case Elementwise::mul: return elementwise_loop<Elementwise::mul>(a, b, y, begin, end, scale);
        case Elementwise::relu: return elementwise_loop<Elementwise::relu>(a, b, y, begin, end, scale);
        case Elementwise::relu_backward:
            return elementwise_loop<Elementwise::relu_backward>(a, b, y, begin, end, scale);
        case Elementwise::sigmoid_backward:
            return elementwise_loop<Elementwise::sigmoid_backward>(a, b, y, begin, end, scale);
        case Elementwise::bce_with_logits_backward:
            return elementwise_loop<Elementwise::bce_with_logits_backward>(a, b, y, begin, end, scale);
        case Elementwise::gelu: return elementwise_loop<Elementwise::gelu>(a, b, y, begin, end, scale);
        case Elementwise::gelu_tanh: return elementwise_loop<Elementwise::gelu_tanh>(a, b, y, begin, end, scale);
        case Elementwise::gelu_backward:
            return elementwise_loop<Elementwise::gelu_backward>(a, b, y, begin, end, scale);
        case Elementwise::gelu_tanh_backward:
            return elementwise_loop<Elementwise::gelu_tanh_backward>(a, b, y, begin, end, scale);
        case Elementwise::scale: return elementwise_loop<Elementwise::scale>(a, b, y, begin, end, scale);
        case Elementwise::triad: return elementwise_loop<Elementwise::triad>(a, b, y, begin, end, scale);
        case Elementwise::copy: return elementwise_loop<Elementwise::copy>(a, b, y, begin, end, scale);
    }
}

/// Calls f(std::integral_constant<Elementwise, op>{}): the loop of `op` as a
/// compile-time constant, for callers outside the vectorized path (16-bit
/// storage, one element at a time).
template <class Fn>
void with_elementwise(Elementwise op, Fn&& f) {
    using E = Elementwise;
    switch (op) {
        case E::add: return f(std::integral_constant<E, E::add>{});
        case E::mul: return f(std::integral_constant<E, E::mul>{});
        case E::relu: return f(std::integral_constant<E, E::relu>{});
        case E::relu_backward: return f(std::integral_constant<E, E::relu_backward>{});
        case E::sigmoid_backward: return f(std::integral_constant<E, E::sigmoid_backward>{});
        case E::bce_with_logits_backward: return f(std::integral_constant<E, E::bce_with_logits_backward>{});
        case E::gelu: return f(std::integral_constant<E, E::gelu>{});
        case E::gelu_tanh: return f(std::integral_constant<E, E::gelu_tanh>{});
        case E::gelu_backward: return f(std::integral_constant<E, E::gelu_backward>{});
        case E::gelu_tanh_backward: return f(std::integral_constant<E, E::gelu_tanh_backward>{});
        case E::scale: return f(std::integral_constant<E, E::scale>{});
        case E::triad: return f(std::integral_constant<E, E::triad>{});
        case E::copy: return f(std::integral_constant<E, E::copy>{});
    }
}

/// Columns summed together by column_sum_range: one accumulator row of
/// 64 values (4 AVX-512 or 8 AVX2 registers of float).
constexpr std::size_t kColumnSumWidth = 64;

/// y[c] = Σ_r x[r·cols + c] for columns c in [c0, c1) of x[rows, cols]
/// (row-major), each column summed in row order (the bits of a plain loop),
/// kColumnSumWidth columns at a time as vector lanes. F: float or double.
/// Call it from a multi-versioned function.
template <class F>
__attribute__((always_inline)) inline void column_sum_range(const F* x, F* y, std::size_t rows, std::size_t cols,
                                                            std::size_t c0, std::size_t c1) {
    for (std::size_t cb = c0; cb < c1; cb += kColumnSumWidth) {
        const std::size_t w = c1 - cb < kColumnSumWidth ? c1 - cb : kColumnSumWidth;
        F acc[kColumnSumWidth] = {};
        for (std::size_t r = 0; r < rows; ++r) {
            const F* row = x + r * cols + cb;
#pragma omp simd
            for (std::size_t c = 0; c < w; ++c) acc[c] += row[c];
        }
        for (std::size_t c = 0; c < w; ++c) y[cb + c] = acc[c];
    }
}

/// Adam's scalars (ops::adam_step; torch.optim.Adam): β1, β2, ε, the step
/// size lr/(1 − β1^t) and √(1 − β2^t).
template <class F>
struct AdamScalars {
    F beta1, beta2, eps, step_size, bc2_sqrt;
};

/// One Adam update per element (see ops::adam_step), in F (float or double):
/// m ← β1·m + (1−β1)·g, v ← β2·v + (1−β2)·g², p ← p − step·m / (√v/√(1−β2^t) + ε).
template <class F>
__attribute__((always_inline)) inline void adam1(F& p, F g, F& m, F& v, const AdamScalars<F>& s) {
    m = s.beta1 * m + (F(1) - s.beta1) * g;
    v = s.beta2 * v + (F(1) - s.beta2) * g * g;
    p -= s.step_size * m / (std::sqrt(v) / s.bc2_sqrt + s.eps);
}

/// adam1 on elements [begin, end) of p, g, m, v (distinct arrays). Call it
/// from a multi-versioned function.
template <class F>
__attribute__((always_inline)) inline void adam_range(F* p, const F* g, F* m, F* v, std::size_t begin,
                                                      std::size_t end, const AdamScalars<F>& s) {
#pragma omp simd
    for (std::size_t i = begin; i < end; ++i) adam1(p[i], g[i], m[i], v[i], s);
}

/// bias_activation_rows for one activation `f` (a function object).
template <class Act>
__attribute__((always_inline)) inline void bias_activation_rows_with(const float* bias, float* y, std::size_t r0,
                                                                     std::size_t r1, std::size_t cols, bool read_y,
                                                                     Act f) {
    for (std::size_t r = r0; r < r1; ++r) {
        float* row = y + r * cols;
        if (read_y && bias) {
#pragma omp simd
            for (std::size_t c = 0; c < cols; ++c) row[c] = f(row[c] + bias[c]);
        } else if (read_y) {
#pragma omp simd
            for (std::size_t c = 0; c < cols; ++c) row[c] = f(row[c]);
        } else if (bias) {
#pragma omp simd
            for (std::size_t c = 0; c < cols; ++c) row[c] = f(bias[c]);
        } else {
#pragma omp simd
            for (std::size_t c = 0; c < cols; ++c) row[c] = f(0.0f);
        }
    }
}

struct SigmoidFn {
    __attribute__((always_inline)) float operator()(float v) const { return sigmoid1(v); }
};
struct ReluFn {
    __attribute__((always_inline)) float operator()(float v) const { return relu1(v); }
};
struct GeluFn {
    __attribute__((always_inline)) float operator()(float v) const { return gelu_math::gelu<CpuMath>(v); }
};
struct GeluTanhFn {
    __attribute__((always_inline)) float operator()(float v) const { return gelu_math::gelu_tanh<CpuMath>(v); }
};
struct IdentityFn {
    __attribute__((always_inline)) float operator()(float v) const { return v; }
};

/// The dense epilogue on float32 rows [r0, r1) of y[rows, cols] (row-major):
/// y[r,c] = act(y[r,c] + bias[c]) when read_y, else act(bias[c]) (bias
/// null: 0); act an ACCEL_ACTIVATION_* code. One loop per (activation,
/// operands) case, chosen once per call, each body branch-free, so it
/// vectorizes; the activation is the value of the op of its name (sigmoid1,
/// relu1, gelu_math's gelu and gelu_tanh). Call it from a multi-versioned function.
__attribute__((always_inline)) inline void bias_activation_rows(const float* bias, float* y, std::size_t r0,
                                                                std::size_t r1, std::size_t cols, bool read_y,
                                                                int act) {
    if (act == ACCEL_ACTIVATION_SIGMOID)
        bias_activation_rows_with(bias, y, r0, r1, cols, read_y, SigmoidFn{});
    else if (act == ACCEL_ACTIVATION_RELU)
        bias_activation_rows_with(bias, y, r0, r1, cols, read_y, ReluFn{});
    else if (act == ACCEL_ACTIVATION_GELU)
        bias_activation_rows_with(bias, y, r0, r1, cols, read_y, GeluFn{});
    else if (act == ACCEL_ACTIVATION_GELU_TANH)
        bias_activation_rows_with(bias, y, r0, r1, cols, read_y, GeluTanhFn{});
    else
        bias_activation_rows_with(bias, y, r0, r1, cols, read_y, IdentityFn{});
}

/// Elements per call of fma_probe_block: the chains of 16 neighbouring
/// elements are the lanes of vector FMAs (16 floats or doubles: one or two
/// AVX-512 registers per chain, 16 of 32 registers in all).
constexpr std::size_t kFmaProbeLanes = 16;

/// The peak-FMA probe (accel::Probes::fma_throughput) for elements
/// [begin, min(end, begin + kFmaProbeLanes)) in F (float or double): 8
/// chains a_j = a_j·0.9999 + 1e-4 per element, y[i] = Σ_j a_j. Plain arrays
/// the vectorizer keeps in registers (GCC spilled explicit 128-byte vector
/// types of double to the stack: 1/4 of the rate). Call it from a
/// multi-versioned function.
template <class F>
__attribute__((always_inline)) inline void fma_probe_block(F* y, std::size_t begin, std::size_t end,
                                                           std::size_t iterations) {
    constexpr std::size_t L = kFmaProbeLanes;
    F a[8][L];
    for (int j = 0; j < 8; ++j)
        for (std::size_t l = 0; l < L; ++l)
            a[j][l] = static_cast<F>(static_cast<float>(begin + l) * 1e-9f + static_cast<float>(j));
    for (std::size_t it = 0; it < iterations; ++it)
        for (int j = 0; j < 8; ++j)
            for (std::size_t l = 0; l < L; ++l) a[j][l] = a[j][l] * F(0.9999f) + F(1e-4f);
    for (std::size_t l = 0; l < L && begin + l < end; ++l) {
        F s = 0;
        for (int j = 0; j < 8; ++j) s += a[j][l];
        y[begin + l] = s;
    }
}

}  // namespace cpu
}  // namespace accel
