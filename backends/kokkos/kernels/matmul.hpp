// Kokkos backend: tiled matmul / dense with a TeamPolicy and team scratch
// memory — the portable form of the CUDA shared-memory tiling algorithm.
//
// One team computes one tile of by × bx outputs of C at a time (the block of
// the launch geometry: one logical thread per output, as in CUDA). For each
// slice of kTileK along K, the team loads an A tile [by × kTileK] and a B
// tile [kTileK × bx] into scratch, then adds the kTileK products to the
// tile's accumulators (in scratch). Tiles are walked grid-stride by league
// rank, so any league size ≥ 1 is correct. The functor is instantiated for
// V = float (f32, and f16/bf16 widened to f32 by the caller) and V = double
// (f64). Each output is a sum in V over k in increasing order (host spaces: of KC-deep partial sums, see
// host_tile); K == 0 gives the epilogue of zero (bias,
// activation), i.e. zeros for matmul.
//
// Two bodies, chosen at compile time by the kind of the device's space:
//  - Device spaces (CUDA, HIP, SYCL): team threads take the tile's rows and
//    vector lanes its columns — Kokkos' own mapping of a CUDA block
//    (threadIdx.y → team rank, threadIdx.x → lane) — striding over them when
//    the space offers fewer; team barriers separate loading and use.
//  - Host spaces (Serial, OpenMP, Threads): a team is ONE thread, which
//    computes whole tiles alone with the shared CPU GEMM over raw pointers
//    (host_tile, compiled for AVX-512 / AVX2+FMA / baseline). A team
//    of several CPU threads would meet a barrier twice per K slice (about
//    130 per 32×32 tile at K = 1024) and, on OpenMP, one team would hold
//    every thread: one tile at a time, 4.5 GFLOP/s on 2 threads against
//    4.3 on 1. With one-thread teams the tiles are spread over all threads.
#pragma once

#include "views.hpp"
#include "elementwise.hpp"
#include "host_loops.hpp"

#include <cstddef>
#include <type_traits>

namespace accel {
namespace kokkos {

/// Depth of the K slice loaded per step (floats). 16 keeps the scratch of a
/// 32×32 block at 8 KiB, inside every space's level-0 scratch.
constexpr int kTileK = 16;


/// C[M,N] = act(op(A)·op(B) + bias) with row-major A, B, C of element type V
/// (float or double); op transposes when ta / tb (A stored [K,M], B stored
/// [N,K]). bias (may be empty) is indexed by the column of C. The operands
/// and sizes of both bodies (see the file comment).
template <class V>
struct TiledMatmulArgs {
    ConstTypedView<V> a, b, bias;
    TypedView<V> c;
    Index m, n, k;
    bool ta, tb;
    int act;
    int bx, by;          ///< tile (block) extents: columns, rows of C
    Index tiles_x;       ///< tiles along N
    Index tiles;         ///< tiles in all
    int scratch_level;   ///< 0 (fast, e.g. CUDA shared memory) or 1

    KOKKOS_INLINE_FUNCTION V load_a(Index row, Index kk) const {
        return ta ? a(kk * m + row) : a(row * k + kk);
    }
    KOKKOS_INLINE_FUNCTION V load_b(Index kk, Index col) const {
        return tb ? b(col * k + kk) : b(kk * n + col);
    }
};

/// Host spaces, one thread per team (launched with a team size of 1): whole
/// tiles on the shared CPU GEMM (host_tile), written in place in C, over the
/// whole depth at once, with op(A) and op(B) as they are stored (the GEMM
/// packs either layout). The epilogue (bias, activation) then runs over the
/// finished tile. Host code only: its operator() is never compiled for a
/// device.
template <class Space, class V>
struct HostTiledMatmul : TiledMatmulArgs<V> {
    /// Tiles handed out dynamically: a thread that the OS preempts (a loaded
    /// machine) does not hold the others back.
    using Policy = Kokkos::TeamPolicy<Space, Kokkos::Schedule<Kokkos::Dynamic>>;
    using Member = typename Policy::member_type;

    /// Scratch bytes one team needs: none (host_tile packs into its own
    /// thread-local buffers).
    static std::size_t scratch_bytes(int, int) { return 0; }

    void operator()(const Member& t) const {
        const TiledMatmulArgs<V>& p = *this;
        const Index m = p.m, n = p.n, k = p.k;
        const Index ars = p.ta ? 1 : k, aks = p.ta ? m : 1;  // A(row, kk) = a[row·ars + kk·aks]
        const Index brs = p.tb ? 1 : n, bcs = p.tb ? k : 1;  // B(kk, col) = b[kk·brs + col·bcs]
        for (Index tile = t.league_rank(); tile < p.tiles; tile += t.league_size()) {
            const Index row0 = (tile / p.tiles_x) * p.by, col0 = (tile % p.tiles_x) * p.bx;
            const int rows = static_cast<int>(m - row0 < p.by ? m - row0 : p.by);
            const int cols = static_cast<int>(n - col0 < p.bx ? n - col0 : p.bx);
            V* const ct = p.c.data() + row0 * n + col0;
            const int ldc = static_cast<int>(n);
            host_tile(ct, ldc, p.a.data() + row0 * ars, ars, aks, p.b.data() + col0 * bcs, brs, bcs, rows, cols, k);
            if (p.bias.data() || p.act != ACCEL_ACTIVATION_NONE) {
                if constexpr (std::is_same<V, float>::value) {
                    // One vector loop per row of the tile (the per-element form runs a scalar exp).
                    const float* bt = p.bias.data() ? p.bias.data() + col0 : nullptr;
                    for (int r = 0; r < rows; ++r) host_bias_activation_rows(bt, ct + r * n, 0, 1, cols, true, p.act);
                } else {
                    for (int r = 0; r < rows; ++r)
                        for (int cc = 0; cc < cols; ++cc) {
                            V& v = ct[r * n + cc];
                            v = activate(v + (p.bias.data() ? p.bias(col0 + cc) : V(0)), p.act);
                        }
                }
            }
        }
    }
};

/// Device spaces: the CUDA block mapping (rows → team threads, columns →
/// lanes) over team scratch tiles.
template <class Space, class V>
struct TeamTiledMatmul : TiledMatmulArgs<V> {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Member = typename Policy::member_type;
    using Scratch = Kokkos::View<V*, typename Space::scratch_memory_space, Unmanaged>;

    /// Scratch bytes one team needs for a by × bx tile.
    static std::size_t scratch_bytes(int bx, int by) {
        return Scratch::shmem_size(static_cast<std::size_t>(by) * kTileK) +
               Scratch::shmem_size(static_cast<std::size_t>(kTileK) * bx) +
               Scratch::shmem_size(static_cast<std::size_t>(by) * bx);
    }

    KOKKOS_INLINE_FUNCTION void operator()(const Member& t) const {
        const int bx = this->bx, by = this->by, level = this->scratch_level;
        const Index m = this->m, n = this->n, k = this->k;
        const int area = bx * by;
        Scratch sa(t.team_scratch(level), static_cast<std::size_t>(by) * kTileK);
        Scratch sb(t.team_scratch(level), static_cast<std::size_t>(kTileK) * bx);
        Scratch sc(t.team_scratch(level), static_cast<std::size_t>(area));
        for (Index tile = t.league_rank(); tile < this->tiles; tile += t.league_size()) {
            const Index row0 = (tile / this->tiles_x) * by, col0 = (tile % this->tiles_x) * bx;
            Kokkos::parallel_for(Kokkos::TeamVectorRange(t, area), [&](int i) { sc(i) = V(0); });
            for (Index k0 = 0; k0 < k; k0 += kTileK) {
                t.team_barrier();  // sc zeroed, previous slice's products done before it is overwritten
                Kokkos::parallel_for(Kokkos::TeamVectorRange(t, by * kTileK), [&](int i) {
                    const Index row = row0 + i / kTileK, kk = k0 + i % kTileK;
                    sa(i) = row < m && kk < k ? this->load_a(row, kk) : V(0);
                });
                Kokkos::parallel_for(Kokkos::TeamVectorRange(t, kTileK * bx), [&](int i) {
                    const Index kk = k0 + i / bx, col = col0 + i % bx;
                    sb(i) = kk < k && col < n ? this->load_b(kk, col) : V(0);
                });
                t.team_barrier();
                Kokkos::parallel_for(Kokkos::TeamThreadRange(t, by), [&](int r) {
                    for (int kk = 0; kk < kTileK; ++kk) {
                        const V av = sa(r * kTileK + kk);
                        Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, bx),
                                             [&](int cc) { sc(r * bx + cc) += av * sb(kk * bx + cc); });
                    }
                });
            }
            t.team_barrier();
            Kokkos::parallel_for(Kokkos::TeamVectorRange(t, area), [&](int i) {
                const Index row = row0 + i / bx, col = col0 + i % bx;
                if (row < m && col < n) {
                    const V v = sc(i) + (this->bias.data() ? this->bias(col) : V(0));
                    this->c(row * n + col) = activate(v, this->act);
                }
            });
            t.team_barrier();  // sc is reset for the next tile only after every thread read it
        }
    }
};

/// The tiled functor of execution space `Space`, in V.
template <class Space, class V>
using TiledMatmulFn = std::conditional_t<is_host_space<Space>, HostTiledMatmul<Space, V>, TeamTiledMatmul<Space, V>>;

}  // namespace kokkos
}  // namespace accel
