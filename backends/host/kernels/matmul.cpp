#include "matmul.hpp"

#include "../../common/cpu_gemm.hpp"
#include "parallel.hpp"

#include <algorithm>

namespace accel {
namespace host {

namespace {

/// C[i0:i1, j0:j1] = op(A)·op(B) over that rectangle (row-major C [m, n];
/// A stored [m, k], or [k, m] when ta; B stored [k, n], or [n, k] when tb),
/// with the GEMM compiled for this CPU's level. Thread-safe for disjoint
/// rectangles.
template <class T>
void gemm_tile(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb,
               std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1) {
    using D = std::ptrdiff_t;
    const cpu::StridedMatrix<T> A{a, ta ? D{1} : D(k), ta ? D(m) : D{1}};
    const cpu::StridedMatrix<T> B{b, tb ? D{1} : D(n), tb ? D(k) : D{1}};
    cpu::gemm_for_cpu<T>(A, B, c, D(n), D(k), D(i0), D(i1), D(j0), D(j1), false);
}

// C = op(A)·op(B) in the rectangles of cpu::gemm_thread_tiles, spread over the threads.
template <class T>
void matmul_tiles(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb) {
    if (m == 0 || n == 0) return;
    const cpu::GemmThreadTiles tile = cpu::gemm_thread_tiles<T>(m, n, k, thread_count());
    if (tile.rows >= m && tile.cols >= n) {
        gemm_tile(a, b, c, m, n, k, ta, tb, 0, m, 0, n);
        return;
    }
    const std::size_t tiles_m = (m + tile.rows - 1) / tile.rows, tiles_n = (n + tile.cols - 1) / tile.cols;
    parallel_items(tiles_m * tiles_n, [&](std::size_t t) {
        const std::size_t i0 = (t / tiles_n) * tile.rows, j0 = (t % tiles_n) * tile.cols;
        gemm_tile(a, b, c, m, n, k, ta, tb, i0, std::min(m, i0 + tile.rows), j0, std::min(n, j0 + tile.cols));
    });
}
}  // namespace

void matmul_native(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                   bool tb) {
    matmul_tiles(a, b, c, m, n, k, ta, tb);
}

void matmul_native(const double* a, const double* b, double* c, std::size_t m, std::size_t n, std::size_t k, bool ta,
                   bool tb) {
    matmul_tiles(a, b, c, m, n, k, ta, tb);
}

}  // namespace host
}  // namespace accel
