// One register-blocked GEMM for CPUs, shared by the host backend and the
// Kokkos backend's host execution spaces (header-only, no dependencies).
//
// The algorithm is the layered blocking of K. Goto and R. van de Geijn,
// "Anatomy of High-Performance Matrix Multiplication" (ACM TOMS 34(3), 2008)
// and of BLIS (F. Van Zee and R. van de Geijn, "BLIS: A Framework for Rapidly
// Instantiating BLAS Functionality", ACM TOMS 41(3), 2015):
//
//   for jc in steps of NC over the columns of C       B block  KC×NC  (L3)
//     for pc in steps of KC over the depth              packed once per (jc, pc)
//       for ic in steps of MC over the rows of C       A block  MC×KC  (L2)
//         for jr in steps of NR                         B micro-panel KC×NR (L1)
//           for ir in steps of MR                       A micro-panel MR×KC
//             micro-kernel: MR×NR tile of C held in registers over KC products
//
// Packing copies op(A) and op(B) into contiguous micro-panels (k-major, MR or
// NR values per depth step), which is also where transposes disappear: both
// operands are described by a row and a column stride, so one code path
// serves all four transpose cases. Packing converts the storage type T to
// the compute type (compute::Compute<T>), so 16-bit storage (f16/bf16 →
// float) or double (double accumulation) need no other driver. Only float is
// instantiated today.
//
// Skinny shapes: a narrow NR (one vector) takes column remainders, so N = 10
// computes 16 columns rather than 32; A is read in place (no packing) when a
// packed A block would be used by fewer than kPackAMinPanels micro-panels of
// B, so small N or small K does not pay a packing pass per product.
//
// Parallelism belongs to the caller: gemm() computes one rectangle of C
// (rows [i0, i1) × columns [j0, j1)) with thread-local packing buffers, so
// callers split C across threads (host: OpenMP tiles) or run it whole
// (Kokkos Serial).
//
// Vectorization: the micro-kernel is written with GCC/Clang vector
// extensions, one value = one register of VB bytes (a template parameter of
// everything here: 64 for AVX-512, 32 for AVX2, 16 for SSE2/NEON), and the
// register tile is sized for 16 registers of that width. Every function here
// is force-inlined, so the caller compiles its entry point once per level
// (cpu_levels.hpp) with the matching VB; plain loops stand in on other
// compilers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include "compute_type.hpp"
#include "cpu_levels.hpp"

#if defined(__GNUC__)
#define ACCEL_CPU_GEMM_INLINE inline __attribute__((always_inline))
#define ACCEL_CPU_GEMM_VECTOR 1
#else
#define ACCEL_CPU_GEMM_INLINE inline
#define ACCEL_CPU_GEMM_VECTOR 0
#endif

namespace accel {
namespace cpu {

/// Storage type T → the type packing converts to and products accumulate in
/// (compute_type.hpp: float, or double for double).
template <class T>
using GemmCompute = compute::Compute<T>;
using compute::from_compute;
using compute::to_compute;

/// A read-only matrix of any layout: element (i, j) is data[i·rs + j·cs]
/// (row-major [rows, cols]: rs = cols, cs = 1; its transpose: rs = 1, cs = cols).
template <class T>
struct StridedMatrix {
    const T* data;
    std::ptrdiff_t rs, cs;
    ACCEL_CPU_GEMM_INLINE const T* at(std::ptrdiff_t i, std::ptrdiff_t j) const { return data + i * rs + j * cs; }
};

/// Register tile and cache blocking for compute type Acc and vectors of VB
/// bytes (counts of elements).
template <class Acc, int VB>
struct GemmBlocking {
    static constexpr int kLanes = static_cast<int>(VB / sizeof(Acc));  ///< values per vector
    /// Rows of the register tile. With 32 registers (AVX-512) 8×2 = 16
    /// accumulator vectors; with 16 (AVX2, SSE, NEON) 6×2 = 12, leaving two
    /// for B and one for the broadcast of A (BLIS' Haswell tile, 6×16
    /// floats). Either covers two FMA pipes of latency 4 or 5.
    static constexpr int kMR = VB >= 64 ? 8 : 6;
    static constexpr int kNV = 2;                     ///< vectors per row of the tile
    static constexpr int kNR = kNV * kLanes;          ///< columns of the tile (32 floats with AVX-512)
    /// KC: depth of one pass. A B micro-panel (KC×NR, up to 32 KiB for
    /// float) stays in L1 beside the A micro-panel streamed from L2.
    static constexpr std::ptrdiff_t kKC = 256;
    /// MC: rows per A block (MC×KC, 192 KiB for float; a multiple of both
    /// MRs): in L2, reused by every B micro-panel of the block.
    static constexpr std::ptrdiff_t kMC = 192;
    /// NC: columns per B block (KC×NC, 2 MiB for float): in L2/L3, reused by
    /// every A block of the rectangle.
    static constexpr std::ptrdiff_t kNC = 2048;
    /// A block is packed only if used by at least this many B micro-panels;
    /// otherwise read in place (packing would cost about as much as the products).
    static constexpr std::ptrdiff_t kPackAMinPanels = 3;
    /// B is read in place (when its layout allows) for rectangles of at most
    /// this many rows: a packed copy would serve too few micro-panels of A.
    static constexpr std::ptrdiff_t kDirectBMaxRows = 4 * kMR;
};

/// Per-thread packing buffers, grown on demand and kept for the thread's
/// life (64-byte aligned). Each thread has its own: thread-safe.
template <class Acc>
struct GemmBuffers {
    Acc* a = nullptr;
    Acc* b = nullptr;
    std::size_t a_size = 0, b_size = 0;
    GemmBuffers() = default;
    GemmBuffers(const GemmBuffers&) = delete;
    GemmBuffers& operator=(const GemmBuffers&) = delete;
    ~GemmBuffers() {
        std::free(a);
        std::free(b);
    }
    /// Pointer to at least `count` values of buf (old contents dropped).
    static Acc* reserve(Acc*& buf, std::size_t& size, std::size_t count) {
        if (count > size) {
            std::free(buf);
            const std::size_t bytes = (count * sizeof(Acc) + 63) / 64 * 64;
            buf = static_cast<Acc*>(std::aligned_alloc(64, bytes));
            if (!buf) {
                size = 0;
                throw std::bad_alloc();
            }
            size = count;
        }
        return buf;
    }
    static GemmBuffers& of_this_thread() {
        thread_local GemmBuffers buffers;
        return buffers;
    }
};

/// Packs rows [i0, i0 + rows) × depth [p0, p0 + kc) of A into micro-panels
/// of MR rows: panel r holds dst[r·MR·kc + p·MR + i] = A(i0 + r·MR + i, p0 + p),
/// rows past `rows` zero. dst holds ceil(rows / MR)·MR·kc values. Thread-safe
/// for distinct dst.
template <class T, class Acc, int VB>
ACCEL_CPU_GEMM_INLINE void pack_a(const StridedMatrix<T>& A, std::ptrdiff_t i0, std::ptrdiff_t rows, std::ptrdiff_t p0,
                                  std::ptrdiff_t kc, Acc* __restrict dst) {
    constexpr int MR = GemmBlocking<Acc, VB>::kMR;
    for (std::ptrdiff_t r = 0; r < rows; r += MR, dst += MR * kc) {
        const std::ptrdiff_t h = std::min<std::ptrdiff_t>(MR, rows - r);
        const T* src = A.at(i0 + r, p0);
        if (h == MR && A.rs == 1) {
            // Columns of A contiguous (op(A) = stored Aᵀ): MR values per depth step.
            for (std::ptrdiff_t p = 0; p < kc; ++p)
                for (int i = 0; i < MR; ++i) dst[p * MR + i] = to_compute<T>(src[p * A.cs + i]);
        } else if (h == MR) {
            // Rows of A: read each row along the depth, write with stride MR.
            for (int i = 0; i < MR; ++i) {
                const T* row = src + i * A.rs;
                for (std::ptrdiff_t p = 0; p < kc; ++p) dst[p * MR + i] = to_compute<T>(row[p * A.cs]);
            }
        } else {
            for (std::ptrdiff_t p = 0; p < kc; ++p)
                for (int i = 0; i < MR; ++i)
                    dst[p * MR + i] = i < h ? to_compute<T>(src[i * A.rs + p * A.cs]) : Acc(0);
        }
    }
}

/// Width of the B micro-panel starting `done` columns into a block of `cols`:
/// NR, or one vector (NR / kNV) for a remainder that fits in one.
template <class Acc, int VB>
ACCEL_CPU_GEMM_INLINE int panel_width(std::ptrdiff_t cols, std::ptrdiff_t done) {
    using B = GemmBlocking<Acc, VB>;
    const std::ptrdiff_t left = cols - done;
    return left <= B::kLanes && left < B::kNR ? B::kLanes : B::kNR;
}

/// Packs depth [p0, p0 + kc) × columns [j0, j0 + cols) of B into micro-panels
/// (widths from panel_width): panel starting at column q holds
/// dst[q·kc + p·w + j] = B(p0 + p, j0 + q + j), columns past `cols` zero.
/// Thread-safe for distinct dst.
template <class T, class Acc, int VB>
ACCEL_CPU_GEMM_INLINE void pack_b(const StridedMatrix<T>& B, std::ptrdiff_t p0, std::ptrdiff_t kc, std::ptrdiff_t j0,
                                  std::ptrdiff_t cols, Acc* __restrict dst) {
    for (std::ptrdiff_t q = 0; q < cols;) {
        const int w = panel_width<Acc, VB>(cols, q);
        const std::ptrdiff_t valid = std::min<std::ptrdiff_t>(w, cols - q);
        Acc* __restrict out = dst + q * kc;
        const T* src = B.at(p0, j0 + q);
        if (valid == w && B.cs == 1) {
            // Rows of op(B) contiguous: w values per depth step.
            for (std::ptrdiff_t p = 0; p < kc; ++p)
                for (int j = 0; j < w; ++j) out[p * w + j] = to_compute<T>(src[p * B.rs + j]);
        } else if (B.rs == 1) {
            // op(B) = stored Bᵀ: each column is contiguous along the depth.
            for (std::ptrdiff_t j = 0; j < valid; ++j) {
                const T* col = src + j * B.cs;
                for (std::ptrdiff_t p = 0; p < kc; ++p) out[p * w + j] = to_compute<T>(col[p]);
            }
            for (std::ptrdiff_t j = valid; j < w; ++j)
                for (std::ptrdiff_t p = 0; p < kc; ++p) out[p * w + j] = Acc(0);
        } else {
            for (std::ptrdiff_t p = 0; p < kc; ++p)
                for (int j = 0; j < w; ++j) out[p * w + j] = j < valid ? to_compute<T>(src[p * B.rs + j * B.cs]) : Acc(0);
        }
        q += w;
    }
}

/// The micro-kernel: the MR×(NV·lanes) tile C(i, j) = c[i·ldc + j], i < rows,
/// j < cols, gets (accumulate ? C : 0) + Σ_p Â(i, p)·B̂(p, j) over p < kc,
/// summed in increasing p. B̂(p, j) = b[p·ldb + j] (a packed panel, zero
/// padded, ldb = NV·lanes; or B in place when its rows are contiguous and of
/// the compute type); Â(i, p) = a[i·ars + p·acs] for all MR rows (packed: ars = 1,
/// acs = MR, type Acc; in place: A's strides and storage type TA). Edge tiles
/// (rows < MR or cols < width) go through a register-sized local tile.
/// Thread-safe for disjoint tiles of C.
template <class Acc, int VB, int NV, class TA, class TB, class TC>
ACCEL_CPU_GEMM_INLINE void micro_kernel(std::ptrdiff_t kc, const TA* __restrict a, std::ptrdiff_t ars,
                                        std::ptrdiff_t acs, const TB* __restrict b, std::ptrdiff_t ldb,
                                        TC* __restrict c, std::ptrdiff_t ldc, int rows, int cols, bool accumulate) {
    static_assert(sizeof(TB) == sizeof(Acc), "B is read as compute-type vectors");
    constexpr int MR = GemmBlocking<Acc, VB>::kMR;
    constexpr int L = GemmBlocking<Acc, VB>::kLanes;
    constexpr int W = NV * L;
#if ACCEL_CPU_GEMM_VECTOR
    typedef Acc V __attribute__((vector_size(L * sizeof(Acc))));
    V acc[MR][NV];
    for (int i = 0; i < MR; ++i)
        for (int v = 0; v < NV; ++v) acc[i][v] = V{};
    // The tile's rows of C are a row stride apart (often a multiple of 4 KiB,
    // one cache set): fetch them while the products run, not at the end.
    for (int i = 0; i < rows; ++i) {
        __builtin_prefetch(c + i * ldc, 1);
        __builtin_prefetch(c + i * ldc + W - 1, 1);
    }
#pragma GCC unroll 4
    for (std::ptrdiff_t p = 0; p < kc; ++p) {
        V bv[NV];
        // memcpy: unaligned loads, no vector passed by value (which would tie
        // the ABI to one instruction set).
        for (int v = 0; v < NV; ++v) std::memcpy(&bv[v], b + p * ldb + v * L, sizeof(V));
        const TA* ap = a + p * acs;
        for (int i = 0; i < MR; ++i) {
            const Acc ai = static_cast<Acc>(ap[i * ars]);
            for (int v = 0; v < NV; ++v) acc[i][v] += ai * bv[v];
        }
    }
    if (rows == MR && cols == W && sizeof(TC) == sizeof(Acc)) {
        for (int i = 0; i < MR; ++i)
            for (int v = 0; v < NV; ++v) {
                TC* out = c + i * ldc + v * L;
                if (accumulate) {
                    V old;
                    std::memcpy(&old, out, sizeof(V));
                    acc[i][v] += old;
                }
                std::memcpy(out, &acc[i][v], sizeof(V));
            }
        return;
    }
    Acc tile[MR][W];
    for (int i = 0; i < MR; ++i)
        for (int v = 0; v < NV; ++v) std::memcpy(&tile[i][v * L], &acc[i][v], sizeof(V));
#else
    Acc tile[MR][W] = {};
    for (std::ptrdiff_t p = 0; p < kc; ++p)
        for (int i = 0; i < MR; ++i) {
            const Acc ai = static_cast<Acc>(a[i * ars + p * acs]);
            for (int j = 0; j < W; ++j) tile[i][j] += ai * static_cast<Acc>(b[p * ldb + j]);
        }
#endif
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
            TC* out = c + i * ldc + j;
            const Acc old = accumulate ? static_cast<Acc>(*out) : Acc(0);
            *out = static_cast<TC>(old + tile[i][j]);
        }
}

/// One micro-kernel call with the variant for the panel width w (NR or one
/// vector) and for A packed (Acc, ars = 1, acs = MR) or in place (T, A's
/// strides). Arguments as micro_kernel.
template <class T, class Acc, int VB, class TB>
ACCEL_CPU_GEMM_INLINE void micro_dispatch(int w, bool packed_a, std::ptrdiff_t kc, const void* a, std::ptrdiff_t ars,
                                          std::ptrdiff_t acs, const TB* b, std::ptrdiff_t ldb, T* c,
                                          std::ptrdiff_t ldc, int rows, int cols, bool accumulate) {
    constexpr int NV = GemmBlocking<Acc, VB>::kNV;
    const bool wide = w == GemmBlocking<Acc, VB>::kNR;
    if (packed_a) {
        const Acc* ap = static_cast<const Acc*>(a);
        if (wide)
            micro_kernel<Acc, VB, NV>(kc, ap, ars, acs, b, ldb, c, ldc, rows, cols, accumulate);
        else
            micro_kernel<Acc, VB, 1>(kc, ap, ars, acs, b, ldb, c, ldc, rows, cols, accumulate);
    } else {
        const T* ap = static_cast<const T*>(a);
        if (wide)
            micro_kernel<Acc, VB, NV>(kc, ap, ars, acs, b, ldb, c, ldc, rows, cols, accumulate);
        else
            micro_kernel<Acc, VB, 1>(kc, ap, ars, acs, b, ldb, c, ldc, rows, cols, accumulate);
    }
}

/// C[i0:i1, j0:j1] = op(A)[i0:i1, :]·op(B)[:, j0:j1] (+ C when accumulate),
/// where op(A) is [M, k] with element (i, p) at A.at(i, p), op(B) is [k, N]
/// with element (p, j) at B.at(p, j), and C(i, j) = c[i·ldc + j] (row-major,
/// row stride ldc). Only the rectangle is read or written; k == 0 gives zeros
/// (or leaves C when accumulate). Each element is a sum in increasing p
/// within KC-deep passes, added pass by pass. VB: the vector bytes of the
/// instruction set the caller is compiled for (cpu_levels.hpp).
/// Thread-safe for disjoint rectangles (thread-local packing buffers); the
/// calling thread does all the work.
template <class T, int VB>
ACCEL_CPU_GEMM_INLINE void gemm(const StridedMatrix<T>& A, const StridedMatrix<T>& B, T* c, std::ptrdiff_t ldc,
                                std::ptrdiff_t k, std::ptrdiff_t i0, std::ptrdiff_t i1, std::ptrdiff_t j0,
                                std::ptrdiff_t j1, bool accumulate) {
    using Acc = GemmCompute<T>;
    using Blk = GemmBlocking<Acc, VB>;
    constexpr int MR = Blk::kMR;
    if (i1 <= i0 || j1 <= j0) return;
    if (k <= 0) {
        if (!accumulate)
            for (std::ptrdiff_t i = i0; i < i1; ++i)
                std::fill(c + i * ldc + j0, c + i * ldc + j1, from_compute<T>(Acc(0)));
        return;
    }
    auto& buf = GemmBuffers<Acc>::of_this_thread();
    const std::ptrdiff_t kc_max = std::min(k, Blk::kKC);
    const std::ptrdiff_t nc_max = std::min(j1 - j0, Blk::kNC);
    const std::ptrdiff_t mc_max = std::min(i1 - i0, Blk::kMC);
    Acc* const bp = GemmBuffers<Acc>::reserve(
        buf.b, buf.b_size, static_cast<std::size_t>(kc_max * ((nc_max + Blk::kNR - 1) / Blk::kNR * Blk::kNR)));
    Acc* const ap = GemmBuffers<Acc>::reserve(buf.a, buf.a_size,
                                              static_cast<std::size_t>(kc_max * ((mc_max + MR - 1) / MR * MR)));
    // B in place (rows contiguous, already the compute type): when few row
    // panels would reuse a packed copy, packing costs more than it saves.
    const bool direct_b =
        std::is_same<T, Acc>::value && B.cs == 1 && i1 - i0 <= Blk::kDirectBMaxRows;
    for (std::ptrdiff_t jc = j0; jc < j1; jc += Blk::kNC) {
        const std::ptrdiff_t nc = std::min(Blk::kNC, j1 - jc);
        const std::ptrdiff_t panels = (nc + Blk::kNR - 1) / Blk::kNR;
        // In place, A's micro-panel is read by every B panel: worth packing only for several.
        const bool packed_a = panels >= Blk::kPackAMinPanels;
        for (std::ptrdiff_t pc = 0; pc < k; pc += Blk::kKC) {
            const std::ptrdiff_t kc = std::min(Blk::kKC, k - pc);
            const bool acc_pass = accumulate || pc > 0;
            const std::ptrdiff_t full = nc / Blk::kNR * Blk::kNR;  // columns in full-width panels
            if (!direct_b)
                pack_b<T, Acc, VB>(B, pc, kc, jc, nc, bp);
            else if (full < nc)  // the partial panel is packed (zero padded) even in place
                pack_b<T, Acc, VB>(B, pc, kc, jc + full, nc - full, bp + full * kc);
            for (std::ptrdiff_t ic = i0; ic < i1; ic += Blk::kMC) {
                const std::ptrdiff_t mc = std::min(Blk::kMC, i1 - ic);
                if (packed_a) pack_a<T, Acc, VB>(A, ic, mc, pc, kc, ap);
                for (std::ptrdiff_t q = 0; q < nc;) {
                    const int w = panel_width<Acc, VB>(nc, q);
                    const int cols = static_cast<int>(std::min<std::ptrdiff_t>(w, nc - q));
                    const bool b_in_place = direct_b && q < full;
                    const T* b_src = B.at(pc, jc + q);
                    const Acc* b_packed = bp + q * kc;
                    for (std::ptrdiff_t ir = 0; ir < mc; ir += MR) {
                        const int rows = static_cast<int>(std::min<std::ptrdiff_t>(MR, mc - ir));
                        T* ct = c + (ic + ir) * ldc + jc + q;
                        const void* a_src = A.at(ic + ir, pc);
                        std::ptrdiff_t ars = A.rs, acs = A.cs;
                        bool a_packed = packed_a;
                        if (packed_a) {
                            a_src = ap + ir * kc;
                        } else if (rows < MR) {  // edge rows read in place would run past A: pack them (zero padded)
                            pack_a<T, Acc, VB>(A, ic + ir, rows, pc, kc, ap);
                            a_src = ap;
                            a_packed = true;
                        }
                        if (a_packed) ars = 1, acs = MR;
                        if (b_in_place)
                            micro_dispatch<T, Acc, VB, T>(w, a_packed, kc, a_src, ars, acs, b_src, B.rs, ct, ldc, rows,
                                                      cols, acc_pass);
                        else
                            micro_dispatch<T, Acc, VB, Acc>(w, a_packed, kc, a_src, ars, acs, b_packed, w, ct, ldc, rows,
                                                        cols, acc_pass);
                    }
                    q += w;
                }
            }
        }
    }
}

/// Columns that every level's register tile divides (NR is a power of two,
/// the AVX-512 one the widest): callers that split C into rectangles round
/// their widths to it so no rectangle ends in a partial tile.
template <class T>
constexpr std::ptrdiff_t kGemmColMultiple = GemmBlocking<GemmCompute<T>, 64>::kNR;

// gemm compiled once per x86 level with that level's tile (noinline: one
// copy per level, not one per caller).
#if ACCEL_CPU_LEVELS
template <class T>
ACCEL_CPU_TARGET_AVX512 __attribute__((noinline)) void gemm_avx512(const StridedMatrix<T>& A,
                                                                    const StridedMatrix<T>& B, T* c,
                                                                    std::ptrdiff_t ldc, std::ptrdiff_t k,
                                                                    std::ptrdiff_t i0, std::ptrdiff_t i1,
                                                                    std::ptrdiff_t j0, std::ptrdiff_t j1,
                                                                    bool accumulate) {
    gemm<T, 64>(A, B, c, ldc, k, i0, i1, j0, j1, accumulate);
}
template <class T>
ACCEL_CPU_TARGET_AVX2 __attribute__((noinline)) void gemm_avx2(const StridedMatrix<T>& A, const StridedMatrix<T>& B,
                                                                T* c, std::ptrdiff_t ldc, std::ptrdiff_t k,
                                                                std::ptrdiff_t i0, std::ptrdiff_t i1,
                                                                std::ptrdiff_t j0, std::ptrdiff_t j1,
                                                                bool accumulate) {
    gemm<T, 32>(A, B, c, ldc, k, i0, i1, j0, j1, accumulate);
}
#endif
template <class T>
__attribute__((noinline)) void gemm_build(const StridedMatrix<T>& A, const StridedMatrix<T>& B, T* c,
                                          std::ptrdiff_t ldc, std::ptrdiff_t k, std::ptrdiff_t i0, std::ptrdiff_t i1,
                                          std::ptrdiff_t j0, std::ptrdiff_t j1, bool accumulate) {
    gemm<T, kBuildVectorBytes>(A, B, c, ldc, k, i0, i1, j0, j1, accumulate);
}

/// Rows of the register tile gemm_for_cpu uses on this CPU (MR: 8 with
/// AVX-512, 6 otherwise): callers round the heights of their rectangles to it.
template <class T>
inline std::ptrdiff_t gemm_rows_for_cpu() {
    switch (cpu_level()) {
        case CpuLevel::avx512:
            return GemmBlocking<GemmCompute<T>, 64>::kMR;
        case CpuLevel::avx2:
            return GemmBlocking<GemmCompute<T>, 32>::kMR;
        case CpuLevel::build:
            break;
    }
    return GemmBlocking<GemmCompute<T>, kBuildVectorBytes>::kMR;
}

/// The rectangles a product C[m, n] of depth k is split into for `threads`
/// CPU threads, each computed whole by gemm_for_cpu: `rows` × `cols` of C
/// (the last ones in each direction shorter), heights a multiple of the
/// running level's MR, widths of kGemmColMultiple. One rectangle (all of C)
/// for one thread or a product under kSerialWork multiply-adds. M is split
/// first (each row rectangle repacks op(B); A is packed once per rectangle
/// either way), into at most kTilesPerThread per thread and none under
/// kMinTileRows rows; when M is too short for that, N too, where narrow column
/// rectangles read A in place and pack only their own B columns.
struct GemmThreadTiles {
    /// Below this many multiply-adds one thread does the whole product: waking
    /// the team costs more than it saves (and under CPU contention a
    /// descheduled peer can stall the op for a scheduler time slice).
    static constexpr std::size_t kSerialWork = std::size_t{1} << 20;
    /// Rectangles per thread: more than one, so that a thread the OS
    /// preempts leaves its remaining ones to the others.
    static constexpr std::size_t kTilesPerThread = 2;
    /// Smallest height worth splitting M into: thin rectangles repack op(B) too often.
    static constexpr std::size_t kMinTileRows = 64;

    std::size_t rows = 0;  ///< of C per rectangle, elements
    std::size_t cols = 0;  ///< of C per rectangle, elements
};

/// See GemmThreadTiles. m, n >= 1.
template <class T>
inline GemmThreadTiles gemm_thread_tiles(std::size_t m, std::size_t n, std::size_t k, std::size_t threads) {
    using G = GemmThreadTiles;
    if (threads <= 1 || m * n * std::max<std::size_t>(k, 1) < G::kSerialWork) return {m, n};
    const auto round_up = [](std::size_t v, std::size_t to) { return (v + to - 1) / to * to; };
    const std::size_t want = threads * G::kTilesPerThread;
    const std::size_t col_align = static_cast<std::size_t>(kGemmColMultiple<T>);
    const std::size_t row_tiles = std::clamp<std::size_t>(m / G::kMinTileRows, 1, want);
    const std::size_t col_tiles = std::min((want + row_tiles - 1) / row_tiles, (n + col_align - 1) / col_align);
    return {round_up((m + row_tiles - 1) / row_tiles, static_cast<std::size_t>(gemm_rows_for_cpu<T>())),
            round_up((n + col_tiles - 1) / col_tiles, col_align)};
}

/// gemm (arguments and guarantees as there) compiled for this CPU's level
/// (cpu_level()): the entry point for callers.
template <class T>
inline void gemm_for_cpu(const StridedMatrix<T>& A, const StridedMatrix<T>& B, T* c, std::ptrdiff_t ldc,
                         std::ptrdiff_t k, std::ptrdiff_t i0, std::ptrdiff_t i1, std::ptrdiff_t j0, std::ptrdiff_t j1,
                         bool accumulate) {
#if ACCEL_CPU_LEVELS
    switch (cpu_level()) {
        case CpuLevel::avx512:
            return gemm_avx512<T>(A, B, c, ldc, k, i0, i1, j0, j1, accumulate);
        case CpuLevel::avx2:
            return gemm_avx2<T>(A, B, c, ldc, k, i0, i1, j0, j1, accumulate);
        case CpuLevel::build:
            break;
    }
#endif
    gemm_build<T>(A, B, c, ldc, k, i0, i1, j0, j1, accumulate);
}

}  // namespace cpu
}  // namespace accel
