#include "elementwise.hpp"

#include "simd.hpp"

#include <accel/activation_codes.h>

namespace accel {
namespace host {

ACCEL_HOST_MULTIVERSION
void sigmoid_range(const float* x, float* y, std::size_t b, std::size_t e) {
    cpu::sigmoid_range(x, y, b, e);
}

namespace {
// One row loop per (activation, whether y is read): the choice is made once
// per call, and each loop body is branch-free, so it vectorizes.
template <class Act>
__attribute__((always_inline)) inline void rows(const float* bias, float* y, std::size_t r0, std::size_t r1,
                                                std::size_t cols, bool read_y, Act act) {
    for (std::size_t r = r0; r < r1; ++r) {
        float* row = y + r * cols;
        if (read_y && bias) {
#pragma omp simd
            for (std::size_t c = 0; c < cols; ++c) row[c] = act(row[c] + bias[c]);
        } else if (read_y) {
#pragma omp simd
            for (std::size_t c = 0; c < cols; ++c) row[c] = act(row[c]);
        } else if (bias) {
#pragma omp simd
            for (std::size_t c = 0; c < cols; ++c) row[c] = act(bias[c]);
        } else {
#pragma omp simd
            for (std::size_t c = 0; c < cols; ++c) row[c] = act(0.0f);
        }
    }
}
}  // namespace

ACCEL_HOST_MULTIVERSION
void bias_activation_rows(const float* bias, float* y, std::size_t r0, std::size_t r1, std::size_t cols, bool read_y,
                          int act) {
    if (act == ACCEL_ACTIVATION_SIGMOID)
        rows(bias, y, r0, r1, cols, read_y, [](float v) { return cpu::sigmoid1(v); });
    else if (act == ACCEL_ACTIVATION_RELU)
        rows(bias, y, r0, r1, cols, read_y, [](float v) { return relu1(v); });
    else
        rows(bias, y, r0, r1, cols, read_y, [](float v) { return v; });
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
