// Elementwise loops shared by the CPU backends (the host backend and Kokkos'
// host execution spaces): written once, inlined into each backend's
// multi-versioned functions so that every clone vectorizes them for its
// instruction set.
#pragma once

#include <accel/activation_codes.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace accel {
namespace cpu {

/// exp(y) for y <= 0 (or NaN), float32, branch-free so that loops of it
/// vectorize inline: y = k·ln2 + r with k = round(y·log2(e)) and |r| <=
/// ln2/2 (ln2 in two parts, so r is exact up to the last fma), exp(r) by its
/// Taylor polynomial to degree 6 (truncation at most (ln2/2)^7/7! = 1.2e-7
/// relative), times 2^k. k comes from adding 1.5·2^23, which rounds
/// y·log2(e) to an integer in the low mantissa bits. 2^k is applied as
/// 2^(k+64) · 2^-64, both normal floats: the first product is exact, the
/// second rounds once, so results in the subnormal range (y < -87.34) are
/// exp's value rounded to the nearest subnormal, and values below half the
/// smallest subnormal (y < -103.97) round to 0. y below kExpFloor is taken at it (exp is 0 there either way),
/// so k >= -159 and 2^(k+64) stays normal; -inf gives 0, NaN passes.
/// Relative error on [-87.3, 0]: at most 2.3e-7 (libm's expf: 0.5 ulp);
/// below, at most that plus half a subnormal (7e-46) absolute.
/// The OpenCL backend's exp_nonpositive (kernels/common.cl) is the same
/// algorithm in OpenCL C. Why not libmvec's vector expf: the call and its
/// special cases cost more than the whole sigmoid's memory traffic on CPUs.
constexpr float kExpFloor = -110.0f;
__attribute__((always_inline)) inline float exp_nonpositive(float y) {
    y = y < kExpFloor ? kExpFloor : y;
    const float kf = std::fma(y, 1.44269504088896341f, 12582912.0f);  // 1.5·2^23 + k
    const float k = kf - 12582912.0f;
    float r = std::fma(k, -0.693145751953125f, y);  // ln2, high part: k·it is exact
    r = std::fma(k, -1.428606765330187045e-06f, r);  // ln2, low part
    float p = 1.0f / 720.0f;
    p = std::fma(p, r, 1.0f / 120.0f);
    p = std::fma(p, r, 1.0f / 24.0f);
    p = std::fma(p, r, 1.0f / 6.0f);
    p = std::fma(p, r, 0.5f);
    p = std::fma(p, r, 1.0f);
    p = std::fma(p, r, 1.0f);
    std::uint32_t bits;  // unsigned: a NaN's bits wrap, defined (its p is NaN anyway)
    std::memcpy(&bits, &kf, sizeof bits);
    bits = (bits - 0x4B400000u + 127u + 64u) << 23;  // 2^(k+64), k+64 in [-95, 64]: a normal float
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return (p * scale) * 0x1p-64f;  // exact, then one rounding (to a subnormal where exp is one)
}

/// Stable logistic: e = exp(−|x|) never overflows; σ(x) = 1/(1+e) for x ≥ 0
/// and e/(1+e) otherwise. One exp, one division and a select, no branch.
/// At most 3.2e-7 relative error; NaN passes.
__attribute__((always_inline)) inline float sigmoid1(float x) {
    const float e = exp_nonpositive(-std::fabs(x));
    const float r = 1.0f / (1.0f + e);
    return x >= 0.0f ? r : e * r;
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
struct IdentityFn {
    __attribute__((always_inline)) float operator()(float v) const { return v; }
};

/// The dense epilogue on float32 rows [r0, r1) of y[rows, cols] (row-major):
/// y[r,c] = act(y[r,c] + bias[c]) when read_y, else act(bias[c]) (bias
/// null: 0); act an ACCEL_ACTIVATION_* code. One loop per (activation,
/// operands) case, chosen once per call, each body branch-free, so it
/// vectorizes; the activation is sigmoid1 / relu1, the values of the
/// sigmoid and relu ops. Call it from a multi-versioned function.
__attribute__((always_inline)) inline void bias_activation_rows(const float* bias, float* y, std::size_t r0,
                                                                std::size_t r1, std::size_t cols, bool read_y,
                                                                int act) {
    if (act == ACCEL_ACTIVATION_SIGMOID)
        bias_activation_rows_with(bias, y, r0, r1, cols, read_y, SigmoidFn{});
    else if (act == ACCEL_ACTIVATION_RELU)
        bias_activation_rows_with(bias, y, r0, r1, cols, read_y, ReluFn{});
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
