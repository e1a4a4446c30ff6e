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

}  // namespace elementwise_math
}  // namespace accel
