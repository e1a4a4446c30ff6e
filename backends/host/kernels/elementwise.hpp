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

/// The fma_throughput probe for work-item i (see Device::k_fma_throughput).
inline float fma_probe(std::size_t i, std::size_t iterations) {
    float a[8];
    for (int j = 0; j < 8; ++j) a[j] = static_cast<float>(i) * 1e-9f + static_cast<float>(j);
    for (std::size_t it = 0; it < iterations; ++it)
        for (int j = 0; j < 8; ++j) a[j] = a[j] * 0.9999f + 1e-4f;  // contracted to an FMA where the CPU has one
    float s = 0;
    for (int j = 0; j < 8; ++j) s += a[j];
    return s;
}

}  // namespace host
}  // namespace accel
