#include "matmul.hpp"

#include "../../common/cpu_gemm.hpp"
#include "parallel.hpp"

#include <algorithm>

namespace accel {
namespace host {

namespace {

/// Below this many multiply-adds one thread does the whole product: waking
/// the team costs more than it saves (and under CPU contention a descheduled
/// peer can stall the op for a scheduler time slice).
constexpr std::size_t kSerialWork = std::size_t{1} << 20;
/// Tiles handed out per thread: more than one, so that a thread the OS
/// preempts leaves its remaining tiles to the others.
constexpr std::size_t kTilesPerThread = 2;
/// Smallest tile height worth splitting M into: each row tile packs its own
/// copy of op(B), so thin tiles would repack B too often.
constexpr std::size_t kMinTileRows = 64;

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

std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

template <class T>
void matmul_tiles(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb) {
    if (m == 0 || n == 0) return;
    const std::size_t threads = thread_count();
    if (threads <= 1 || m * n * std::max<std::size_t>(k, 1) < kSerialWork) {
        gemm_tile(a, b, c, m, n, k, ta, tb, 0, m, 0, n);
        return;
    }
    // Tiles of C: split M first (each row tile repacks op(B), A is packed
    // once per tile either way); when M is too short for that, split N too,
    // where narrow column tiles read A in place and pack only their own B columns.
    const std::size_t want = threads * kTilesPerThread;
    const std::size_t col_align = cpu::kGemmColMultiple<T>;
    const std::size_t row_tiles = std::clamp<std::size_t>(m / kMinTileRows, 1, want);
    const std::size_t col_tiles =
        std::min((want + row_tiles - 1) / row_tiles, (n + col_align - 1) / col_align);
    const std::size_t tile_m = round_up((m + row_tiles - 1) / row_tiles, cpu::gemm_rows_for_cpu<T>());
    const std::size_t tile_n = round_up((n + col_tiles - 1) / col_tiles, col_align);
    const std::size_t tiles_m = (m + tile_m - 1) / tile_m, tiles_n = (n + tile_n - 1) / tile_n;
    parallel_items(tiles_m * tiles_n, [&](std::size_t t) {
        const std::size_t i0 = (t / tiles_n) * tile_m, j0 = (t % tiles_n) * tile_n;
        gemm_tile(a, b, c, m, n, k, ta, tb, i0, std::min(m, i0 + tile_m), j0, std::min(n, j0 + tile_n));
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
