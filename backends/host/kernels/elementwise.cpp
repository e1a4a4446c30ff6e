#include "elementwise.hpp"

#include "simd.hpp"

namespace accel {
namespace host {

ACCEL_HOST_MULTIVERSION
void sigmoid_range(const float* x, float* y, std::size_t b, std::size_t e) {
    cpu::sigmoid_range(x, y, b, e);
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
