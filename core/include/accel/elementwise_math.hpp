// accel/elementwise_math.hpp — the math of the op table's elementwise ops,
// one element in float64: what OpInfo::elementwise_reference points to and
// the float64 oracle (accel/reference.hpp) applies element by element. Each
// is the op's definition, written from its source (PyTorch's, where the op
// is PyTorch's). Unary ops ignore their second argument. Pure functions:
// thread-safe, never throw; NaN propagates as in PyTorch.
#pragma once

#include <algorithm>
#include <cmath>

namespace accel {
namespace elementwise_math {

/// a + b.
inline double add(double a, double b) { return a + b; }
/// a · b.
inline double mul(double a, double b) { return a * b; }
/// x (the op copy).
inline double copy(double x, double /*unused*/) { return x; }
/// max(x, 0), NaN kept (PyTorch's relu: NaN <= 0 is false).
inline double relu(double x, double /*unused*/) { return x <= 0 ? 0.0 : x; }
/// 1/(1+exp(-x)) in the stable form: exp of a non-positive number only.
inline double sigmoid(double x, double /*unused*/) {
    if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
    const double e = std::exp(x);
    return e / (1.0 + e);
}
/// dy where x > 0, else 0.
inline double relu_backward(double dy, double x) { return x > 0 ? dy : 0.0; }
/// dy·y·(1 − y), y = sigmoid(z).
inline double sigmoid_backward(double dy, double y) { return dy * y * (1.0 - y); }
/// PyTorch's BCEWithLogitsLoss per element (reduction none):
/// max(z,0) − z·t + log(1 + exp(−|z|)).
inline double bce_with_logits(double z, double t) {
    return std::max(z, 0.0) - z * t + std::log1p(std::exp(-std::fabs(z)));
}


// ---- GELU -------------------------------------------------------------------
// Hendrycks & Gimpel, "Gaussian Error Linear Units (GELUs)", arXiv:1606.08415
// (2016); PyTorch's torch.nn.functional.gelu (approximate='none' and 'tanh').
// Φ(x) = erfc(−x/√2)/2 rather than (1 + erf(x/√2))/2: the same value, with
// full relative accuracy where Φ is tiny (x → −∞). The tanh form uses
// (1 + tanh u)/2 = σ(2u) (exact), so its negative tail keeps its digits too.
// At ±Inf the limits: gelu(+Inf) = +Inf, gelu(−Inf) = −0, Φ(±Inf) + x·φ(x)
// → 1, 0 (the literal product −Inf·0 would be NaN).

/// x·Φ(x) = x·(1 + erf(x/√2))/2 (approximate='none').
inline double gelu(double x, double /*unused*/) {
    const double p = 0.5 * std::erfc(-x * 0.70710678118654752440);
    return p == 0.0 ? std::copysign(0.0, x) : x * p;
}
/// x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))/2 (approximate='tanh'), as
/// x·σ(2u); x³ may overflow to ±Inf, which saturates σ.
inline double gelu_tanh(double x, double /*unused*/) {
    const double u = 0.79788456080286535588 * x * (1.0 + 0.044715 * x * x);
    const double s = sigmoid(2.0 * u, 0.0);
    return s == 0.0 ? std::copysign(0.0, x) : x * s;
}
/// dy·(Φ(x) + x·φ(x)), φ(x) = exp(−x²/2)/√(2π): the derivative of gelu.
inline double gelu_backward(double dy, double x) {
    const double phi = 0.39894228040143267794 * std::exp(-0.5 * x * x);
    const double p = 0.5 * std::erfc(-x * 0.70710678118654752440);
    return dy * (p + (phi == 0.0 ? 0.0 : x * phi));
}
/// dy·d/dx of gelu_tanh: with u = √(2/π)(x + 0.044715x³), t = tanh u,
/// (1 + t)/2 + x·(1 − t²)/2·√(2/π)(1 + 3·0.044715x²); as s = σ(2u),
/// (1 + t)/2 = s and (1 − t²)/2 = 2·s·σ(−2u).
inline double gelu_tanh_backward(double dy, double x) {
    const double u = 0.79788456080286535588 * x * (1.0 + 0.044715 * x * x);
    const double s = sigmoid(2.0 * u, 0.0), sc = sigmoid(-2.0 * u, 0.0);
    const double ss = s * sc;
    const double du = 0.79788456080286535588 * (1.0 + 3.0 * 0.044715 * x * x);
    return dy * (s + (ss == 0.0 ? 0.0 : 2.0 * ss * x * du));
}

}  // namespace elementwise_math
}  // namespace accel
