// CUDA backend: the warp-level tensor-core layer — fragments of the PTX
// instruction mma.sync.aligned.m16n8k16 (f16 or bf16 operands, f32
// accumulators), their loads from shared memory with ldmatrix, and the
// position of each accumulator in the output tile.
//
// The fragment layouts are the PTX ISA's ("Matrix Fragments for
// mma.m16n8k16 with floating point type" and "Warp-level matrix load
// instruction: ldmatrix", PTX ISA 8.x, section 9.7.14). With lane the
// thread's index in its warp, g = lane / 4 (its group) and c = lane % 4:
//   A (16×16, row-major m × k): 4 registers of 2 values; value v (0..7) is
//     A[g + 8·((v / 2) % 2)][2c + v % 2 + 8·(v / 4)].
//   B (16×8, k × n):             2 registers of 2 values; value v (0..3) is
//     B[2c + v % 2 + 8·(v / 2)][g].
//   C, D (16×8 f32):              4 values; value v is C[g + 8·(v / 2)][2c + v % 2].
// A register holds its lower-numbered value in its low 16 bits.
//
// On a GPU each function is one or two PTX instructions (sm_80 and newer;
// the kernels that call them are only launched there). In the CUDA
// emulation (ACCEL_CUDA_EMULATION) the same functions are the emulation's
// own implementation of those instructions (emulation/warp_mma.cpp), written
// from the same layouts, so the kernels above this layer run unchanged in
// the tests. Every lane of the warp must call each function together
// (".sync.aligned"), with the same arguments where the ISA says so.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace accel {
namespace cuda {

#ifdef ACCEL_CUDA_EMULATION
namespace emulation {
/// ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16 (count 2 or 4),
/// as the PTX ISA defines it: lane l gives `row`, the address of row l % 8
/// of matrix l / 8 (8 consecutive 16-bit values; lanes ≥ 8·count give none
/// that is read); r[j] receives the values of matrix j at row lane / 4,
/// columns 2(lane % 4) and 2(lane % 4) + 1 — of the transposed matrix when
/// `trans`.
void ldmatrix(std::uint32_t* r, unsigned count, const void* row, bool trans);
/// mma.sync.aligned.m16n8k16.row.col.f32.{f16|bf16}.{f16|bf16}.f32:
/// d = a·b + c over the warp's fragments (layouts above). The 16 products of
/// each element, exact in f32, are added to c one after another in k order
/// (the hardware's internal order and rounding of that sum are its own; both
/// are within accel's f16 contract of f32 accumulation).
void mma_m16n8k16(float* d, const std::uint32_t* a, const std::uint32_t* b, const float* c, bool bf16);
}  // namespace emulation
#endif

namespace warp {

/// The 32 lanes of a warp.
constexpr unsigned kLanes = 32;

/// A 16×16 tile of A (m × k) spread over the warp: 8 values per lane.
struct FragmentA {
    std::uint32_t r[4];
};
/// A 16×8 tile of B (k × n): 4 values per lane.
struct FragmentB {
    std::uint32_t r[2];
};
/// A 16×8 tile of f32 accumulators: 4 values per lane.
struct FragmentC {
    float r[4];
};

/// Row (0..15) of the output tile that value v (0..3) of a FragmentC holds
/// in lane `lane`.
__device__ __forceinline__ unsigned c_row(unsigned lane, unsigned v) { return lane / 4 + 8 * (v / 2); }
/// Column (0..7) of the output tile that value v of a FragmentC holds.
__device__ __forceinline__ unsigned c_col(unsigned lane, unsigned v) { return 2 * (lane % 4) + v % 2; }

/// ldmatrix .x4 (count 4) or .x2 (count 2) into r[0..count): lane l passes
/// the shared-memory address of row l % 8 of matrix l / 8, 16-byte aligned.
template <unsigned Count, bool Trans>
__device__ __forceinline__ void load_matrices(std::uint32_t (&r)[Count], const void* row) {
    static_assert(Count == 2 || Count == 4, "ldmatrix loads 2 or 4 matrices here");
#ifdef ACCEL_CUDA_EMULATION
    emulation::ldmatrix(r, Count, row, Trans);
#else
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(row));
    if constexpr (Count == 4 && Trans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(address));
    else if constexpr (Count == 4)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(address));
    else if constexpr (Trans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                     : "=r"(r[0]), "=r"(r[1]) : "r"(address));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                     : "=r"(r[0]), "=r"(r[1]) : "r"(address));
#endif
}

/// Loads the 16×16 tile of A whose element (0, 0) is at `tile` in shared
/// memory (16-bit values, rows `ld` elements apart, ld·2 bytes a multiple of
/// 16 and `tile` 16-byte aligned). KMajor false: the tile is stored as A,
/// tile[i·ld + p] = A[i][p]; true: stored transposed, tile[p·ld + i] = A[i][p].
template <bool KMajor, class T>
__device__ __forceinline__ void load_a(FragmentA& f, const T* tile, unsigned ld, unsigned lane) {
    // Matrix j = lane / 8 of the four is (rows 8·(j % 2).., columns 8·(j / 2)..) of A.
    const unsigned j = lane / 8, i = lane % 8;
    const T* row = KMajor ? tile + (8 * (j / 2) + i) * ld + 8 * (j % 2)   // row p of the stored Aᵀ
                          : tile + (8 * (j % 2) + i) * ld + 8 * (j / 2);  // row i of A
    load_matrices<4, KMajor>(f.r, row);
}

/// Loads the 16×8 tile of B (k × n) whose element (0, 0) is at `tile`.
/// KMajor true: stored as B, tile[p·ld + n] = B[p][n]; false: stored
/// transposed, tile[n·ld + p] = B[p][n]. Alignment as load_a.
template <bool KMajor, class T>
__device__ __forceinline__ void load_b(FragmentB& f, const T* tile, unsigned ld, unsigned lane) {
    // Matrix j = (lane / 8) % 2 is rows 8·j.. (k) of B; lanes 16..31 repeat 0..15.
    const unsigned j = (lane / 8) % 2, i = lane % 8;
    const T* row = KMajor ? tile + (8 * j + i) * ld   // row p of B
                          : tile + i * ld + 8 * j;    // row n of the stored Bᵀ
    load_matrices<2, KMajor>(f.r, row);
}

/// d = a·b + d for T = __half or __nv_bfloat16 operands, f32 accumulators.
template <class T>
__device__ __forceinline__ void mma(FragmentC& d, const FragmentA& a, const FragmentB& b) {
    static_assert(std::is_same<T, __half>::value || std::is_same<T, __nv_bfloat16>::value,
                  "mma.m16n8k16 takes f16 or bf16 operands");
#ifdef ACCEL_CUDA_EMULATION
    emulation::mma_m16n8k16(d.r, a.r, b.r, d.r, std::is_same<T, __nv_bfloat16>::value);
#else
    if constexpr (std::is_same<T, __half>::value)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d.r[0]), "+f"(d.r[1]), "+f"(d.r[2]), "+f"(d.r[3])
                     : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[0]), "r"(b.r[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d.r[0]), "+f"(d.r[1]), "+f"(d.r[2]), "+f"(d.r[3])
                     : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[0]), "r"(b.r[1]));
#endif
}

}  // namespace warp
}  // namespace cuda
}  // namespace accel
