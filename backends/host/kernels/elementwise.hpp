// Host elementwise kernels: one loop each, vectorizable by the compiler.
#pragma once

#include <cmath>
#include <cstddef>

#include "../../common/cpu_elementwise.hpp"

namespace accel {
namespace host {

/// The stable logistic of the CPU backends (backends/common).
using cpu::sigmoid1;

/// The same in double (f64 tensors compute in double).
inline double sigmoid1(double x) {
    const double e = std::exp(-std::fabs(x));
    const double r = 1.0 / (1.0 + e);
    return x >= 0.0 ? r : e * r;
}

/// max(x, 0) that keeps NaN, float or double (backends/common).
using cpu::relu1;

/// The stable BCE-with-logits term max(z,0) − z·t + log1p(exp(−|z|)).
template <class F>
F bce1(F z, F t) {
    return std::fmax(z, F(0)) - z * t + std::log1p(std::exp(-std::fabs(z)));
}

/// Adam per element (see ops::adam_step), in F (float or double).
template <class F>
void adam1(F& p, F g, F& m, F& v, F beta1, F beta2, F eps, F step_size, F bc2_sqrt) {
    m = beta1 * m + (F(1) - beta1) * g;
    v = beta2 * v + (F(1) - beta2) * g * g;
    p -= step_size * m / (std::sqrt(v) / bc2_sqrt + eps);
}

/// y[i] = sigmoid1(x[i]) for i in [b, e); x may equal y. Vectorized
/// (cpu::sigmoid_range) and multi-versioned; defined in elementwise.cpp.
void sigmoid_range(const float* x, float* y, std::size_t b, std::size_t e);

/// The dense epilogue on float32 rows [r0, r1) of y[rows, cols]
/// (cpu::bias_activation_rows), multi-versioned; defined in elementwise.cpp.
void bias_activation_rows(const float* bias, float* y, std::size_t r0, std::size_t r1, std::size_t cols, bool read_y,
                          int act);

/// The fma_throughput probe for work-items [i0, i1) (see accel::Probes::fma_throughput).
/// Items are processed 16 at a time so that the 8 dependent chains of 16
/// lanes each keep both FMA pipes busy; defined in elementwise.cpp.
void fma_probe(float* y, std::size_t i0, std::size_t i1, std::size_t iterations);
/// The same in f64.
void fma_probe(double* y, std::size_t i0, std::size_t i1, std::size_t iterations);

}  // namespace host
}  // namespace accel
