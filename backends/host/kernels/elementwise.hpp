// Host elementwise kernels: one loop each, vectorizable by the compiler.
#pragma once

#include <cmath>
#include <cstddef>

#include "../../common/cpu_elementwise.hpp"

namespace accel {
namespace host {

/// The stable logistic of the CPU backends, float and double (backends/common).
using cpu::sigmoid1;

/// max(x, 0) that keeps NaN, float or double (backends/common).
using cpu::relu1;

/// The stable BCE-with-logits term max(z,0) − z·t + log1p(exp(−|z|)).
template <class F>
F bce1(F z, F t) {
    return std::fmax(z, F(0)) - z * t + std::log1p(std::exp(-std::fabs(z)));
}

/// Adam per element and its scalars (backends/common).
using cpu::adam1;
using cpu::AdamScalars;

/// y[i] = op(a[i], b[i]) for i in [begin, end) (cpu::elementwise_range:
/// add, relu, relu_backward, sigmoid_backward, bce_with_logits_backward),
/// vectorized and multi-versioned; defined in elementwise.cpp.
void elementwise(cpu::Elementwise op, const float* a, const float* b, float* y, std::size_t begin, std::size_t end,
                 float scale);
/// The same in f64.
void elementwise(cpu::Elementwise op, const double* a, const double* b, double* y, std::size_t begin,
                 std::size_t end, double scale);

/// Σ a[i]·b[i] for i in [begin, end) (dot_math::dot_chunk), vectorized and
/// multi-versioned; defined in elementwise.cpp.
float dot(const float* a, const float* b, std::size_t begin, std::size_t end);
/// The same in f64.
double dot(const double* a, const double* b, std::size_t begin, std::size_t end);

/// Column sums of x[rows, cols] for columns [c0, c1) (cpu::column_sum_range),
/// vectorized and multi-versioned; defined in elementwise.cpp.
void column_sum(const float* x, float* y, std::size_t rows, std::size_t cols, std::size_t c0, std::size_t c1);
/// The same in f64.
void column_sum(const double* x, double* y, std::size_t rows, std::size_t cols, std::size_t c0, std::size_t c1);

/// Adam on elements [begin, end) (cpu::adam_range), vectorized and
/// multi-versioned; defined in elementwise.cpp.
void adam(float* p, const float* g, float* m, float* v, std::size_t begin, std::size_t end,
          const AdamScalars<float>& s);
/// The same in f64.
void adam(double* p, const double* g, double* m, double* v, std::size_t begin, std::size_t end,
          const AdamScalars<double>& s);

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
