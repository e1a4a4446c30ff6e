#include "matmul.hpp"

#include "../../common/cpu_gemm.hpp"
#include "parallel.hpp"

#include <accel/geometry.hpp>

#include <algorithm>
#include <atomic>
#include <new>

namespace accel {
namespace host {

namespace {

/// op(A) [m, k] and op(B) [k, n] as strided views of row-major storage
/// (A stored [m, k], or [k, m] when ta; B stored [k, n], or [n, k] when tb).
template <class T>
struct Operands {
    cpu::StridedMatrix<T> a, b;
    Operands(const T* a_data, const T* b_data, std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb)
        : a{a_data, ta ? D{1} : D(k), ta ? D(m) : D{1}}, b{b_data, tb ? D{1} : D(n), tb ? D(k) : D{1}} {}

private:
    using D = std::ptrdiff_t;
};

// C = op(A)·op(B) split by rows over `workers` threads that share each
// packed B block (cpu::GemmSharedBSteps): the team packs a block's panels
// (a share each), then takes row blocks one at a time as threads come free,
// then moves to the next block. Row rectangles that each pack their own copy
// of B (the Kokkos backend's way) pack it once per rectangle, 4 times for 2
// threads. Throws std::bad_alloc when a packing buffer cannot grow (after the
// team has finished; C is then partly written).
template <class T>
void matmul_shared_b(const Operands<T>& op, T* c, std::size_t m, std::size_t n, std::size_t k, std::size_t workers) {
    using D = std::ptrdiff_t;
    using Acc = cpu::GemmCompute<T>;
    const cpu::GemmSharedBSteps<T> steps = cpu::gemm_shared_b_steps_for_cpu<T>();
    const D nr = steps.shape.nr, kc_max = steps.depth(D(k)), nc_max = std::min<D>(D(n), steps.shape.nc);
    // The shared block lives in the calling thread's B buffer: its own gemm calls do not run meanwhile.
    auto& own = cpu::GemmBuffers<Acc>::of_this_thread();
    Acc* const bp = cpu::GemmBuffers<Acc>::reserve(
        own.b, own.b_size, static_cast<std::size_t>(kc_max) * ceil_div(std::size_t(nc_max), std::size_t(nr)) * nr);
    // Row blocks of about kRowsPerBlock, a multiple of the team in number,
    // starting at multiples of MR and within MR rows of each other in height
    // (each block pass ends at a barrier: one short block idles a thread).
    constexpr std::size_t kRowsPerBlock = 192;
    const D mr = steps.shape.mr;
    const D blocks = D(ceil_div(std::max(ceil_div(m, kRowsPerBlock), workers), workers) * workers);
    const auto row_start = [&](D r) { return r >= blocks ? D(m) : D(m) * r / blocks / mr * mr; };
    std::atomic<bool> failed{false};
#pragma omp parallel num_threads(static_cast<int>(workers))
    for (D jc = 0; jc < D(n); jc += nc_max) {
        const D nc = std::min(nc_max, D(n) - jc);
        // The columns each thread packs: whole panels, an equal number each.
        const D share = D(ceil_div(ceil_div(std::size_t(nc), std::size_t(nr)), workers)) * nr;
        for (D pc = 0; pc < D(k); pc += kc_max) {
            const D kc = std::min(kc_max, D(k) - pc);
#pragma omp for schedule(static)
            for (long long t = 0; t < static_cast<long long>(workers); ++t)
                steps.pack_b(op.b, pc, kc, jc, std::min(nc, D(t) * share), std::min(nc, D(t + 1) * share), bp);
            // (the loop's closing barrier: every panel is packed before any product reads it)
#pragma omp for schedule(dynamic, 1)
            for (long long r = 0; r < static_cast<long long>(blocks); ++r) {
                if (failed.load(std::memory_order_relaxed)) continue;
                try {
                    steps.multiply(op.a, bp, c, D(n), pc, kc, row_start(D(r)), row_start(D(r) + 1), jc, nc, pc > 0);
                } catch (...) {  // only std::bad_alloc; no exception may leave the team
                    failed.store(true, std::memory_order_relaxed);
                }
            }
            // (and its closing barrier: every product is done before the block is repacked)
        }
    }
    if (failed.load()) throw std::bad_alloc();
}

// C = op(A)·op(B): one gemm call for one thread or a small product; with B
// shared (matmul_shared_b) where cpu::gemm_thread_tiles splits M alone;
// else its rectangles spread over the threads.
template <class T>
void matmul_tiles(const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb) {
    using D = std::ptrdiff_t;
    if (m == 0 || n == 0) return;
    const Operands<T> op(a, b, m, n, k, ta, tb);
    const std::size_t threads = thread_count();
    const cpu::GemmThreadTiles tile = cpu::gemm_thread_tiles<T>(m, n, k, threads);
    const std::size_t tiles_m = (m + tile.rows - 1) / tile.rows, tiles_n = (n + tile.cols - 1) / tile.cols;
    if (tiles_m * tiles_n == 1) {
        cpu::gemm_for_cpu<T>(op.a, op.b, c, D(n), D(k), 0, D(m), 0, D(n), false);
    } else if (tiles_n == 1 && k > 0) {
        matmul_shared_b(op, c, m, n, k, std::min(threads, tiles_m));
    } else {
        parallel_items(tiles_m * tiles_n, [&](std::size_t t) {
            const std::size_t i0 = (t / tiles_n) * tile.rows, j0 = (t % tiles_n) * tile.cols;
            cpu::gemm_for_cpu<T>(op.a, op.b, c, D(n), D(k), D(i0), D(std::min(m, i0 + tile.rows)), D(j0),
                                 D(std::min(n, j0 + tile.cols)), false);
        });
    }
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
