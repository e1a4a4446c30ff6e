// Host elementwise kernels: one loop each, vectorizable by the compiler.
#pragma once

#include <cmath>
#include <cstddef>

namespace accel {
namespace host {

/// Stable logistic: exp() only of a non-positive argument.
inline float sigmoid1(float x) {
    if (x >= 0.0f) return 1.0f / (1.0f + std::exp(-x));
    const float e = std::exp(x);
    return e / (1.0f + e);
}

/// The stable BCE-with-logits term max(z,0) − z·t + log1p(exp(−|z|)).
inline float bce1(float z, float t) { return std::fmax(z, 0.0f) - z * t + std::log1p(std::exp(-std::fabs(z))); }

/// Adam per element (see Device::k_adam_step).
inline void adam1(float& p, float g, float& m, float& v, float beta1, float beta2, float eps, float step_size,
                  float bc2_sqrt) {
    m = beta1 * m + (1.0f - beta1) * g;
    v = beta2 * v + (1.0f - beta2) * g * g;
    p -= step_size * m / (std::sqrt(v) / bc2_sqrt + eps);
}

/// The fma_throughput probe for work-items [i0, i1) (see Device::k_fma_throughput).
/// Items are processed 16 at a time so that the 8 dependent chains of 16
/// lanes each keep both FMA pipes busy; defined in elementwise.cpp.
void fma_probe(float* y, std::size_t i0, std::size_t i1, std::size_t iterations);

}  // namespace host
}  // namespace accel
