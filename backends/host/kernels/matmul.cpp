#include "matmul.hpp"

#include "parallel.hpp"

#include <algorithm>
#include <vector>

namespace accel {
namespace host {

namespace {
constexpr std::size_t kTileK = 256;  // rows of op(B) kept hot in L1/L2 per pass
constexpr std::size_t kTileN = 512;  // columns of C per pass
}  // namespace

void matmul_native(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                   bool tb) {
    // op(B) row-major [k, n], packed once when transposed so the inner loop is unit-stride.
    std::vector<float> bt;
    const float* bp = b;
    if (tb) {
        bt.resize(k * n);
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t p = 0; p < k; ++p) bt[p * n + j] = b[j * k + p];
        bp = bt.data();
    }
    parallel_for(m, 16, [&](std::size_t r0, std::size_t r1) {
        for (std::size_t i = r0; i < r1; ++i) std::fill(c + i * n, c + (i + 1) * n, 0.0f);
        for (std::size_t j0 = 0; j0 < n; j0 += kTileN) {
            const std::size_t j1 = std::min(n, j0 + kTileN);
            for (std::size_t p0 = 0; p0 < k; p0 += kTileK) {
                const std::size_t p1 = std::min(k, p0 + kTileK);
                for (std::size_t i = r0; i < r1; ++i) {
                    float* crow = c + i * n;
                    for (std::size_t p = p0; p < p1; ++p) {
                        const float av = ta ? a[p * m + i] : a[i * k + p];
                        const float* brow = bp + p * n;
                        for (std::size_t j = j0; j < j1; ++j) crow[j] += av * brow[j];
                    }
                }
            }
        }
    });
}

}  // namespace host
}  // namespace accel
