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
// callers split C across threads (Kokkos' host spaces: rectangles) or run it
// whole (Kokkos Serial); GemmSharedBSteps are the same loops cut where a
// team shares each packed B block (the host backend's threads).
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
    /// KC: depth of one pass; C is read and written once per pass. With
    /// 16 registers (AVX2, SSE, NEON) 256: the B micro-panel (KC×NR, 16 KiB
    /// for float) stays in L1 beside the A micro-panel streamed from L2. With
    /// AVX-512 768: its 16 accumulators take 6144 cycles of FMAs per pass,
    /// which hides the C tile's loads and stores (8 rows a power-of-two
    /// stride apart share one L1 set); its B micro-panel (96 KiB) streams
    /// from L2, two vector loads per 16 FMAs. Measured against OpenBLAS at
    /// 2048³ on one AVX-512 core: 0.84-0.86 of it with 256, 0.93-0.98 with 768.
    static constexpr std::ptrdiff_t kKC = VB >= 64 ? 768 : 256;
    /// MC: rows per A block (MC×KC: 192 KiB for float with KC 256, 576 KiB
    /// with 768; a multiple of both MRs): in L2, reused by every B
    /// micro-panel of the block.
    static constexpr std::ptrdiff_t kMC = 192;
    /// NC: columns per B block (KC×NC: 2 MiB for float with 16 registers,
    /// 3 MiB with AVX-512): in L2/L3, reused by every A block of the
    /// rectangle; each thread keeps one such buffer.
    static constexpr std::ptrdiff_t kNC = VB >= 64 ? 1024 : 2048;
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

/// Packs 8 rows of A (row i at src + i·rs, depth step cs) over depth
/// [0, kc) as one micro-panel: dst[p·8 + i] = A(i, p). For float rows with
/// unit depth stride, 8×8 blocks are loaded as 8 row vectors and transposed
/// in registers (three rounds of two-input shuffles), so each depth step's
/// 8 values leave in one store instead of 8 scalar ones. Thread-safe for
/// distinct dst.
template <class T, class Acc>
ACCEL_CPU_GEMM_INLINE void pack_rows8(const T* src, std::ptrdiff_t rs, std::ptrdiff_t cs, std::ptrdiff_t kc,
                                      Acc* __restrict dst) {
    std::ptrdiff_t p = 0;
#if ACCEL_CPU_GEMM_VECTOR && (defined(__clang__) || __GNUC__ >= 12)  // __builtin_shufflevector
    if constexpr (std::is_same<T, float>::value && std::is_same<Acc, float>::value) {
        if (cs == 1) {
            typedef float V8 __attribute__((vector_size(32)));
            // Interleave pairs of elements, then pairs of pairs, then halves.
#define ACCEL_LO1 0, 8, 1, 9, 4, 12, 5, 13
#define ACCEL_HI1 2, 10, 3, 11, 6, 14, 7, 15
#define ACCEL_LO2 0, 1, 8, 9, 4, 5, 12, 13
#define ACCEL_HI2 2, 3, 10, 11, 6, 7, 14, 15
#define ACCEL_LO4 0, 1, 2, 3, 8, 9, 10, 11
#define ACCEL_HI4 4, 5, 6, 7, 12, 13, 14, 15
            for (; p + 8 <= kc; p += 8) {
                V8 r[8], t[8], u[8];
                for (int i = 0; i < 8; ++i) std::memcpy(&r[i], src + i * rs + p, sizeof(V8));
                for (int i = 0; i < 8; i += 2) {  // t[i]: rows i, i+1 at columns 0,1,4,5; t[i+1] at 2,3,6,7
                    t[i] = __builtin_shufflevector(r[i], r[i + 1], ACCEL_LO1);
                    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], ACCEL_HI1);
                }
                for (int h = 0; h < 8; h += 4) {  // u[h + j]: rows h..h+3 at columns j and j + 4
                    u[h] = __builtin_shufflevector(t[h], t[h + 2], ACCEL_LO2);
                    u[h + 1] = __builtin_shufflevector(t[h], t[h + 2], ACCEL_HI2);
                    u[h + 2] = __builtin_shufflevector(t[h + 1], t[h + 3], ACCEL_LO2);
                    u[h + 3] = __builtin_shufflevector(t[h + 1], t[h + 3], ACCEL_HI2);
                }
                for (int j = 0; j < 4; ++j) {  // column j, then column j + 4, all 8 rows
                    const V8 col = __builtin_shufflevector(u[j], u[4 + j], ACCEL_LO4);
                    const V8 col4 = __builtin_shufflevector(u[j], u[4 + j], ACCEL_HI4);
                    std::memcpy(dst + (p + j) * 8, &col, sizeof(V8));
                    std::memcpy(dst + (p + j + 4) * 8, &col4, sizeof(V8));
                }
            }
#undef ACCEL_LO1
#undef ACCEL_HI1
#undef ACCEL_LO2
#undef ACCEL_HI2
#undef ACCEL_LO4
#undef ACCEL_HI4
        }
    }
#endif
    for (int i = 0; i < 8; ++i) {
        const T* row = src + i * rs;
        for (std::ptrdiff_t q = p; q < kc; ++q) dst[q * 8 + i] = to_compute<T>(row[q * cs]);
    }
}

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
        } else if (h == MR && MR == 8) {
            pack_rows8<T, Acc>(src, A.rs, A.cs, kc, dst);
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
            // Not 0 + sum when starting: that would turn a −0 sum into +0 here but not in a full tile.
            *out = static_cast<TC>(accumulate ? static_cast<Acc>(*out) + tile[i][j] : tile[i][j]);
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

/// Depth of each pass over k: the depth split into passes of equal length
/// (a multiple of 8, at most KC; k = 1024 with KC = 768 runs 512 + 512, not
/// 768 + 256). k >= 1.
template <class Acc, int VB>
ACCEL_CPU_GEMM_INLINE std::ptrdiff_t pass_depth(std::ptrdiff_t k) {
    constexpr std::ptrdiff_t KC = GemmBlocking<Acc, VB>::kKC;
    const std::ptrdiff_t passes = (k + KC - 1) / KC;
    return std::min(k, ((k + passes - 1) / passes + 7) / 8 * 8);
}

/// One depth pass of one B block: C[i0:i1, jc:jc+nc] (+)= op(A)[i0:i1,
/// pc:pc+kc]·op(B)[pc:pc+kc, jc:jc+nc], adding to C when acc_pass. B̂ is read
/// from bp (pack_b's layout, the whole block) except where direct_b: then
/// full-width panels are read in place from B and only the partial last
/// panel from bp. A is packed MC rows at a time into ap (room for
/// MC·kc values) when packed_a, else read in place (edge rows packed).
/// Thread-safe for disjoint rows of C and distinct ap.
template <class T, int VB>
ACCEL_CPU_GEMM_INLINE void block_product(const StridedMatrix<T>& A, const StridedMatrix<T>& B,
                                         const GemmCompute<T>* bp, bool direct_b, bool packed_a,
                                         GemmCompute<T>* ap, T* c, std::ptrdiff_t ldc, std::ptrdiff_t pc,
                                         std::ptrdiff_t kc, std::ptrdiff_t i0, std::ptrdiff_t i1, std::ptrdiff_t jc,
                                         std::ptrdiff_t nc, bool acc_pass) {
    using Acc = GemmCompute<T>;
    using Blk = GemmBlocking<Acc, VB>;
    constexpr int MR = Blk::kMR;
    const std::ptrdiff_t full = nc / Blk::kNR * Blk::kNR;  // columns in full-width panels
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
                    micro_dispatch<T, Acc, VB, T>(w, a_packed, kc, a_src, ars, acs, b_src, B.rs, ct, ldc, rows, cols,
                                                  acc_pass);
                else
                    micro_dispatch<T, Acc, VB, Acc>(w, a_packed, kc, a_src, ars, acs, b_packed, w, ct, ldc, rows, cols,
                                                    acc_pass);
            }
            q += w;
        }
    }
}

/// The A buffer of this thread with room for an MC-row block of depth kc.
template <class Acc, int VB>
ACCEL_CPU_GEMM_INLINE Acc* a_buffer(std::ptrdiff_t rows, std::ptrdiff_t kc) {
    constexpr int MR = GemmBlocking<Acc, VB>::kMR;
    const std::ptrdiff_t mc = std::min(rows, GemmBlocking<Acc, VB>::kMC);
    auto& buf = GemmBuffers<Acc>::of_this_thread();
    return GemmBuffers<Acc>::reserve(buf.a, buf.a_size, static_cast<std::size_t>(kc * ((mc + MR - 1) / MR * MR)));
}

/// C[i0:i1, j0:j1] = op(A)[i0:i1, :]·op(B)[:, j0:j1] (+ C when accumulate),
/// where op(A) is [M, k] with element (i, p) at A.at(i, p), op(B) is [k, N]
/// with element (p, j) at B.at(p, j), and C(i, j) = c[i·ldc + j] (row-major,
/// row stride ldc). Only the rectangle is read or written; k == 0 gives zeros
/// (or leaves C when accumulate). Each element is a sum in increasing p
/// within passes of equal depth (pass_depth), added pass by pass. VB: the
/// vector bytes of the instruction set the caller is compiled for
/// (cpu_levels.hpp).
/// Thread-safe for disjoint rectangles (thread-local packing buffers); the
/// calling thread does all the work.
template <class T, int VB>
ACCEL_CPU_GEMM_INLINE void gemm(const StridedMatrix<T>& A, const StridedMatrix<T>& B, T* c, std::ptrdiff_t ldc,
                                std::ptrdiff_t k, std::ptrdiff_t i0, std::ptrdiff_t i1, std::ptrdiff_t j0,
                                std::ptrdiff_t j1, bool accumulate) {
    using Acc = GemmCompute<T>;
    using Blk = GemmBlocking<Acc, VB>;
    if (i1 <= i0 || j1 <= j0) return;
    if (k <= 0) {
        if (!accumulate)
            for (std::ptrdiff_t i = i0; i < i1; ++i)
                std::fill(c + i * ldc + j0, c + i * ldc + j1, from_compute<T>(Acc(0)));
        return;
    }
    auto& buf = GemmBuffers<Acc>::of_this_thread();
    const std::ptrdiff_t kc_max = pass_depth<Acc, VB>(k);
    const std::ptrdiff_t nc_max = std::min(j1 - j0, Blk::kNC);
    Acc* const bp = GemmBuffers<Acc>::reserve(
        buf.b, buf.b_size, static_cast<std::size_t>(kc_max * ((nc_max + Blk::kNR - 1) / Blk::kNR * Blk::kNR)));
    Acc* const ap = a_buffer<Acc, VB>(i1 - i0, kc_max);
    // B in place (rows contiguous, already the compute type): when few row
    // panels would reuse a packed copy, packing costs more than it saves.
    const bool direct_b =
        std::is_same<T, Acc>::value && B.cs == 1 && i1 - i0 <= Blk::kDirectBMaxRows;
    for (std::ptrdiff_t jc = j0; jc < j1; jc += Blk::kNC) {
        const std::ptrdiff_t nc = std::min(Blk::kNC, j1 - jc);
        const std::ptrdiff_t panels = (nc + Blk::kNR - 1) / Blk::kNR;
        // In place, A's micro-panel is read by every B panel: worth packing only for several.
        const bool packed_a = panels >= Blk::kPackAMinPanels;
        for (std::ptrdiff_t pc = 0; pc < k; pc += kc_max) {
            const std::ptrdiff_t kc = std::min(kc_max, k - pc);
            const std::ptrdiff_t full = nc / Blk::kNR * Blk::kNR;
            if (!direct_b)
                pack_b<T, Acc, VB>(B, pc, kc, jc, nc, bp);
            else if (full < nc)  // the partial panel is packed (zero padded) even in place
                pack_b<T, Acc, VB>(B, pc, kc, jc + full, nc - full, bp + full * kc);
            block_product<T, VB>(A, B, bp, direct_b, packed_a, ap, c, ldc, pc, kc, i0, i1, jc, nc,
                                 accumulate || pc > 0);
        }
    }
}

/// Blocking facts of one level's GEMM that a caller sharing one packed B
/// block among threads needs (counts of elements).
struct GemmTileShape {
    std::ptrdiff_t mr;  ///< rows of the register tile
    std::ptrdiff_t nr;  ///< columns of a full B micro-panel
    std::ptrdiff_t nc;  ///< columns per B block
};

/// The steps of gemm with one packed B block shared by several threads (the
/// caller orders them: every panel of a block packed before any thread
/// multiplies by it, every product done before the block is repacked):
/// - pack_b(B, pc, kc, jc, q0, q1, bp): columns [q0, q1) of the block
///   op(B)[pc:pc+kc, jc:jc+nc] into bp + q0·kc in pack_b's layout (q0 a
///   multiple of nr; q1 a multiple of nr or nc). Thread-safe for disjoint
///   column ranges.
/// - multiply(A, bp, c, ldc, pc, kc, i0, i1, jc, nc, acc_pass): that pass
///   of block_product for rows [i0, i1), A packed into this thread's buffer.
///   Thread-safe for disjoint rows; throws std::bad_alloc if the buffer
///   cannot grow.
/// - depth(k): pass_depth.
template <class T>
struct GemmSharedBSteps {
    void (*pack_b)(const StridedMatrix<T>& B, std::ptrdiff_t pc, std::ptrdiff_t kc, std::ptrdiff_t jc,
                   std::ptrdiff_t q0, std::ptrdiff_t q1, GemmCompute<T>* bp);
    void (*multiply)(const StridedMatrix<T>& A, const GemmCompute<T>* bp, T* c, std::ptrdiff_t ldc, std::ptrdiff_t pc,
                     std::ptrdiff_t kc, std::ptrdiff_t i0, std::ptrdiff_t i1, std::ptrdiff_t jc, std::ptrdiff_t nc,
                     bool acc_pass);
    std::ptrdiff_t (*depth)(std::ptrdiff_t k);
    GemmTileShape shape;
};

template <class T, int VB>
ACCEL_CPU_GEMM_INLINE void shared_pack_b(const StridedMatrix<T>& B, std::ptrdiff_t pc, std::ptrdiff_t kc,
                                         std::ptrdiff_t jc, std::ptrdiff_t q0, std::ptrdiff_t q1, GemmCompute<T>* bp) {
    if (q1 > q0) pack_b<T, GemmCompute<T>, VB>(B, pc, kc, jc + q0, q1 - q0, bp + q0 * kc);
}

template <class T, int VB>
ACCEL_CPU_GEMM_INLINE void shared_multiply(const StridedMatrix<T>& A, const GemmCompute<T>* bp, T* c,
                                           std::ptrdiff_t ldc, std::ptrdiff_t pc, std::ptrdiff_t kc,
                                           std::ptrdiff_t i0, std::ptrdiff_t i1, std::ptrdiff_t jc, std::ptrdiff_t nc,
                                           bool acc_pass) {
    using Blk = GemmBlocking<GemmCompute<T>, VB>;
    if (i1 <= i0) return;
    const bool packed_a = (nc + Blk::kNR - 1) / Blk::kNR >= Blk::kPackAMinPanels;
    block_product<T, VB>(A, StridedMatrix<T>{nullptr, 0, 0}, bp, false, packed_a,
                         a_buffer<GemmCompute<T>, VB>(i1 - i0, kc), c, ldc, pc, kc, i0, i1, jc, nc, acc_pass);
}

/// Columns that every level's register tile divides (NR is a power of two,
/// the AVX-512 one the widest): callers that split C into rectangles round
/// their widths to it so no rectangle ends in a partial tile.
template <class T>
constexpr std::ptrdiff_t kGemmColMultiple = GemmBlocking<GemmCompute<T>, 64>::kNR;

// gemm and the shared-B steps compiled once per x86 level with that
// level's tile (noinline: one copy per level, not one per caller).
#define ACCEL_CPU_GEMM_LEVEL(SUFFIX, TARGET, VB)                                                                    \
    template <class T>                                                                                             \
    TARGET __attribute__((noinline)) void gemm_##SUFFIX(const StridedMatrix<T>& A, const StridedMatrix<T>& B, T* c, \
                                                        std::ptrdiff_t ldc, std::ptrdiff_t k, std::ptrdiff_t i0,   \
                                                        std::ptrdiff_t i1, std::ptrdiff_t j0, std::ptrdiff_t j1,   \
                                                        bool accumulate) {                                         \
        gemm<T, VB>(A, B, c, ldc, k, i0, i1, j0, j1, accumulate);                                                  \
    }                                                                                                              \
    template <class T>                                                                                             \
    TARGET __attribute__((noinline)) void pack_b_##SUFFIX(const StridedMatrix<T>& B, std::ptrdiff_t pc,            \
                                                          std::ptrdiff_t kc, std::ptrdiff_t jc, std::ptrdiff_t q0, \
                                                          std::ptrdiff_t q1, GemmCompute<T>* bp) {                 \
        shared_pack_b<T, VB>(B, pc, kc, jc, q0, q1, bp);                                                           \
    }                                                                                                              \
    template <class T>                                                                                             \
    TARGET __attribute__((noinline)) void multiply_##SUFFIX(                                                       \
        const StridedMatrix<T>& A, const GemmCompute<T>* bp, T* c, std::ptrdiff_t ldc, std::ptrdiff_t pc,          \
        std::ptrdiff_t kc, std::ptrdiff_t i0, std::ptrdiff_t i1, std::ptrdiff_t jc, std::ptrdiff_t nc,             \
        bool acc_pass) {                                                                                           \
        shared_multiply<T, VB>(A, bp, c, ldc, pc, kc, i0, i1, jc, nc, acc_pass);                                   \
    }                                                                                                              \
    template <class T>                                                                                             \
    TARGET __attribute__((noinline)) std::ptrdiff_t depth_##SUFFIX(std::ptrdiff_t k) {                             \
        return pass_depth<GemmCompute<T>, VB>(k);                                                                  \
    }                                                                                                              \
    template <class T>                                                                                             \
    GemmSharedBSteps<T> shared_b_steps_##SUFFIX() {                                                                \
        using Blk = GemmBlocking<GemmCompute<T>, VB>;                                                              \
        return {&pack_b_##SUFFIX<T>, &multiply_##SUFFIX<T>, &depth_##SUFFIX<T>, {Blk::kMR, Blk::kNR, Blk::kNC}};   \
    }
#if ACCEL_CPU_LEVELS
ACCEL_CPU_GEMM_LEVEL(avx512, ACCEL_CPU_TARGET_AVX512, 64)
ACCEL_CPU_GEMM_LEVEL(avx2, ACCEL_CPU_TARGET_AVX2, 32)
#endif
ACCEL_CPU_GEMM_LEVEL(build, , kBuildVectorBytes)
#undef ACCEL_CPU_GEMM_LEVEL

/// GemmSharedBSteps compiled for this CPU's level (cpu_level()).
template <class T>
inline GemmSharedBSteps<T> gemm_shared_b_steps_for_cpu() {
#if ACCEL_CPU_LEVELS
    switch (cpu_level()) {
        case CpuLevel::avx512:
            return shared_b_steps_avx512<T>();
        case CpuLevel::avx2:
            return shared_b_steps_avx2<T>();
        case CpuLevel::build:
            break;
    }
#endif
    return shared_b_steps_build<T>();
}

/// Rows of the register tile gemm_for_cpu uses on this CPU (MR: 8 with
/// AVX-512, 6 otherwise): callers round the heights of their rectangles to it.
template <class T>
inline std::ptrdiff_t gemm_rows_for_cpu() {
    return gemm_shared_b_steps_for_cpu<T>().shape.mr;
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
