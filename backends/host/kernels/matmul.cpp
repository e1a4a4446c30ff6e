#include "matmul.hpp"

#include "parallel.hpp"
#include "simd.hpp"

#include <algorithm>
#include <vector>

namespace accel {
namespace host {

namespace {
constexpr std::size_t kTileK = 256;  // rows of op(B) kept hot in L2 per pass
constexpr std::size_t kTileN = 256;  // columns of C per pass (4 C rows of this fit L1)
constexpr std::size_t kRows = 4;     // C rows updated together: each B row is loaded once for 4 FMAs

// C[r0:r1, :] = op(A)[r0:r1, :]·B, with B already row-major [k, n].
ACCEL_HOST_MULTIVERSION
void matmul_rows(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                 std::size_t r0, std::size_t r1) {
    auto a_at = [&](std::size_t i, std::size_t p) { return ta ? a[p * m + i] : a[i * k + p]; };
    for (std::size_t i = r0; i < r1; ++i) std::fill(c + i * n, c + (i + 1) * n, 0.0f);
    for (std::size_t j0 = 0; j0 < n; j0 += kTileN) {
        const std::size_t j1 = std::min(n, j0 + kTileN);
        for (std::size_t p0 = 0; p0 < k; p0 += kTileK) {
            const std::size_t p1 = std::min(k, p0 + kTileK);
            std::size_t i = r0;
            for (; i + kRows <= r1; i += kRows) {
                float* __restrict c0 = c + i * n;
                float* __restrict c1 = c0 + n;
                float* __restrict c2 = c1 + n;
                float* __restrict c3 = c2 + n;
                for (std::size_t p = p0; p < p1; ++p) {
                    const float a0 = a_at(i, p), a1 = a_at(i + 1, p), a2 = a_at(i + 2, p), a3 = a_at(i + 3, p);
                    const float* __restrict br = b + p * n;
                    for (std::size_t j = j0; j < j1; ++j) {
                        const float bv = br[j];
                        c0[j] += a0 * bv;
                        c1[j] += a1 * bv;
                        c2[j] += a2 * bv;
                        c3[j] += a3 * bv;
                    }
                }
            }
            for (; i < r1; ++i) {
                float* __restrict cr = c + i * n;
                for (std::size_t p = p0; p < p1; ++p) {
                    const float av = a_at(i, p);
                    const float* __restrict br = b + p * n;
                    for (std::size_t j = j0; j < j1; ++j) cr[j] += av * br[j];
                }
            }
        }
    }
}
}  // namespace

void matmul_native(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                   bool tb) {
    // op(B) as row-major [k, n], packed once when transposed so the inner loop is unit-stride.
    std::vector<float> bt;
    const float* bp = b;
    if (tb) {
        bt.resize(k * n);
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t p = 0; p < k; ++p) bt[p * n + j] = b[j * k + p];
        bp = bt.data();
    }
    parallel_for(m, 16, [&](std::size_t r0, std::size_t r1) { matmul_rows(a, bp, c, m, n, k, ta, r0, r1); });
}

}  // namespace host
}  // namespace accel
