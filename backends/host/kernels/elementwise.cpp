#include "elementwise.hpp"

#include "simd.hpp"

#include "../../common/dot_math.hpp"


namespace accel {
namespace host {

ACCEL_HOST_MULTIVERSION
void sigmoid_range(const float* x, float* y, std::size_t b, std::size_t e) {
    cpu::sigmoid_range(x, y, b, e);
}

ACCEL_HOST_MULTIVERSION
void elementwise(cpu::Elementwise op, const float* a, const float* b, float* y, std::size_t begin, std::size_t end,
                 float scale) {
    cpu::elementwise_range(op, a, b, y, begin, end, scale);
}

ACCEL_HOST_MULTIVERSION
void elementwise(cpu::Elementwise op, const double* a, const double* b, double* y, std::size_t begin,
                 std::size_t end, double scale) {
    cpu::elementwise_range(op, a, b, y, begin, end, scale);
}

ACCEL_HOST_MULTIVERSION
float dot(const float* a, const float* b, std::size_t begin, std::size_t end) {
    return dot_math::dot_chunk(a, b, begin, end);
}

ACCEL_HOST_MULTIVERSION
double dot(const double* a, const double* b, std::size_t begin, std::size_t end) {
    return dot_math::dot_chunk(a, b, begin, end);
}

ACCEL_HOST_MULTIVERSION
void column_sum(const float* x, float* y, std::size_t rows, std::size_t cols, std::size_t c0, std::size_t c1) {
    cpu::column_sum_range(x, y, rows, cols, c0, c1);
}

ACCEL_HOST_MULTIVERSION
void column_sum(const double* x, double* y, std::size_t rows, std::size_t cols, std::size_t c0, std::size_t c1) {
    cpu::column_sum_range(x, y, rows, cols, c0, c1);
}

ACCEL_HOST_MULTIVERSION
void adam(float* p, const float* g, float* m, float* v, std::size_t begin, std::size_t end,
          const AdamScalars<float>& s) {
    cpu::adam_range(p, g, m, v, begin, end, s);
}

ACCEL_HOST_MULTIVERSION
void adam(double* p, const double* g, double* m, double* v, std::size_t begin, std::size_t end,
          const AdamScalars<double>& s) {
    cpu::adam_range(p, g, m, v, begin, end, s);
}

ACCEL_HOST_MULTIVERSION
void bias_activation_rows(const float* bias, float* y, std::size_t r0, std::size_t r1, std::size_t cols, bool read_y,
                          int act) {
    cpu::bias_activation_rows(bias, y, r0, r1, cols, read_y, act);
}

ACCEL_HOST_MULTIVERSION
void fma_probe(float* y, std::size_t i0, std::size_t i1, std::size_t iterations) {
    for (std::size_t b = i0; b < i1; b += cpu::kFmaProbeLanes) cpu::fma_probe_block(y, b, i1, iterations);
}

ACCEL_HOST_MULTIVERSION
void fma_probe(double* y, std::size_t i0, std::size_t i1, std::size_t iterations) {
    for (std::size_t b = i0; b < i1; b += cpu::kFmaProbeLanes) cpu::fma_probe_block(y, b, i1, iterations);
}

}  // namespace host
}  // namespace accel
