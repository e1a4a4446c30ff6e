// GELU and its derivatives, one element in F (float or double), for the
// backends written in C++ (host, Kokkos, CUDA and HIP): the formulas of
// accel/elementwise_math.hpp (Hendrycks & Gimpel 2016; PyTorch's gelu), over
// a backend's math M: M::erfc, M::exp and M::sigmoid (its stable logistic),
// static functions callable where the kernel runs. Φ(x) = erfc(−x/√2)/2 and
// (1 + tanh u)/2 = σ(2u) keep full relative accuracy in the negative tail;
// at ±Inf the limits (gelu(−Inf) = −0, not −Inf·0 = NaN); x³ may overflow
// to ±Inf, which σ saturates; NaN propagates.
#pragma once

#include "compute_type.hpp"  // ACCEL_COMPUTE_FN

#include <accel/op_table.hpp>

namespace accel {
namespace gelu_math {

constexpr double kInvSqrt2 = 0.70710678118654752440, kInvSqrt2Pi = 0.39894228040143267794,
                 kSqrt2OverPi = 0.79788456080286535588, kCubic = 0.044715;

/// −0 for x < 0, else +0: the value where Φ or σ underflows (x = −Inf too).
template <class F>
ACCEL_COMPUTE_FN F signed_zero(F x) {
    return x < F(0) ? -F(0) : F(0);
}

/// x·Φ(x) (approximate='none').
template <class M, class F>
ACCEL_COMPUTE_FN F gelu(F x) {
    const F p = F(0.5) * M::erfc(-x * F(kInvSqrt2));
    return p == F(0) ? signed_zero(x) : x * p;
}

/// 2u = 2√(2/π)·x·(1 + 0.044715·x²).
template <class F>
ACCEL_COMPUTE_FN F tanh_arg2(F x) {
    return F(2 * kSqrt2OverPi) * x * (F(1) + F(kCubic) * x * x);
}

/// x·(1 + tanh u)/2 = x·σ(2u) (approximate='tanh').
template <class M, class F>
ACCEL_COMPUTE_FN F gelu_tanh(F x) {
    const F s = M::sigmoid(tanh_arg2(x));
    return s == F(0) ? signed_zero(x) : x * s;
}

/// dy·(Φ(x) + x·φ(x)), φ(x) = exp(−x²/2)/√(2π); x·φ(x) is 0 where φ
/// underflows (x = ±Inf included).
template <class M, class F>
ACCEL_COMPUTE_FN F gelu_backward(F dy, F x) {
    const F phi = F(kInvSqrt2Pi) * M::exp(F(-0.5) * x * x);
    const F p = F(0.5) * M::erfc(-x * F(kInvSqrt2));
    return dy * (p + (phi == F(0) ? F(0) : x * phi));
}

/// dy·(s + 2x·s·σ(−2u)·u'), s = σ(2u), u' = √(2/π)(1 + 3·0.044715x²):
/// (1 + tanh u)/2 = s and (1 − tanh²u)/2 = 2s·σ(−2u); the second term is 0
/// where s·σ(−2u) underflows (its u' may be Inf).
template <class M, class F>
ACCEL_COMPUTE_FN F gelu_tanh_backward(F dy, F x) {
    const F u2 = tanh_arg2(x);
    const F s = M::sigmoid(u2), ss = s * M::sigmoid(-u2);
    const F du = F(kSqrt2OverPi) * (F(1) + F(3 * kCubic) * x * x);
    return dy * (s + (ss == F(0) ? F(0) : F(2) * ss * x * du));
}

/// The gelu op kOp at one element: a = x for gelu and gelu_tanh (b unused),
/// a = dy and b = x for their backward ops.
template <Op kOp, class M, class F>
ACCEL_COMPUTE_FN F of(F a, F b) {
    static_assert(kOp == Op::gelu || kOp == Op::gelu_tanh || kOp == Op::gelu_backward ||
                      kOp == Op::gelu_tanh_backward,
                  "not a gelu op");
    if constexpr (kOp == Op::gelu) return gelu<M>(a);
    else if constexpr (kOp == Op::gelu_tanh) return gelu_tanh<M>(a);
    else if constexpr (kOp == Op::gelu_backward) return gelu_backward<M>(a, b);
    else return gelu_tanh_backward<M>(a, b);
}

}  // namespace gelu_math
}  // namespace accel
