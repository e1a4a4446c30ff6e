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
    constexpr std::size_t kLanes = 16;
    for (std::size_t base = i0; base < i1; base += kLanes) {
        float a[8][kLanes];
        for (int j = 0; j < 8; ++j)
            for (std::size_t l = 0; l < kLanes; ++l)
                a[j][l] = static_cast<float>(base + l) * 1e-9f + static_cast<float>(j);
        for (std::size_t it = 0; it < iterations; ++it)
            for (int j = 0; j < 8; ++j)
                for (std::size_t l = 0; l < kLanes; ++l) a[j][l] = a[j][l] * 0.9999f + 1e-4f;
        for (std::size_t l = 0; l < kLanes && base + l < i1; ++l) {
            float s = 0;
            for (int j = 0; j < 8; ++j) s += a[j][l];
            y[base + l] = s;
        }
    }
}

}  // namespace host
}  // namespace accel
