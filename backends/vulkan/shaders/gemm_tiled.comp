#version 450
// gemm.comp's C[m,n] = act(op(A)·op(B) + bias), register-blocked over output
// tiles, with the blocking as specialization constants (VulkanDevice's
// GemmParams picks them per device and shape; one SPIR-V module serves every
// set, the driver compiles each with its loops unrolled):
//  - 0, 1: the work-group, WG_X × WG_Y invocations (the launch's block);
//  - 3, 4: TM × TN outputs per invocation, so that a work-group computes a
//    BM × BN tile, BM = WG_Y·TM and BN = WG_X·TN; invocation (x, y) keeps in
//    registers the outputs at rows y + i·WG_Y and columns x + j·WG_X of the
//    tile (strided, so neighbouring invocations read and write neighbouring
//    columns);
//  - 5: BK, the depth of a k slice staged (LOCAL), its steps unrolled;
//  - 6: VW, elements per global load (1, 2 or 4) where staging reads an
//    operand along its contiguous dimension and that dimension is a multiple
//    of VW (else single loads);
//  - 7: LOCAL: 1 stages each slice of op(A) (BM × BK) and op(B) (BK × BN) in
//    shared memory (zero outside the matrices) behind a barrier; 0 reads the
//    operands straight from the buffers (no shared memory, no barrier: CPU
//    drivers, whose "shared" memory is ordinary memory, gain nothing from it);
//  - 8: STAGES: 2 double-buffers the shared slices (the next slice is staged
//    while the current one is multiplied: one barrier per slice, not two).
//
// Every output element is one accumulator that takes op(A)[r, p]·op(B)[p, c]
// for p = 0, 1, ..., k-1 in that order, one fma each (precise: never split or
// merged), and nothing else: no padding product is ever added, so every
// parameter set (and gemm.comp) gives the same bits.
//
// Tiles are numbered row-major over the output (tiles_n per row) and taken
// grid-stride by work-group over [base, base + count), so any grid is
// correct; every loop is uniform across the work-group (barriers).
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer A { real a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { real b[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { real bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer C { real c[]; };
// The same operands seen as 2- and 4-element vectors (VW).
layout(std430, set = 0, binding = 0) readonly buffer A2 { realv2 a2[]; };
layout(std430, set = 0, binding = 0) readonly buffer A4 { realv4 a4[]; };
layout(std430, set = 0, binding = 1) readonly buffer B2 { realv2 b2[]; };
layout(std430, set = 0, binding = 1) readonly buffer B4 { realv4 b4[]; };
layout(push_constant) uniform Push { uint base, count, m, n, k, flags, act; } pc;

layout(constant_id = 3) const uint TM = 4;
layout(constant_id = 4) const uint TN = 4;
layout(constant_id = 5) const uint BK = 16;
layout(constant_id = 6) const uint VW = 1;
layout(constant_id = 7) const uint LOCAL = 1;
layout(constant_id = 8) const uint STAGES = 1;
const uint WG_X = gl_WorkGroupSize.x, WG_Y = gl_WorkGroupSize.y;
const uint BM = WG_Y * TM, BN = WG_X * TN;
const uint INVOCATIONS = WG_X * WG_Y;
// as[stage][p * BM + r] = op(A)[row0 + r, k0 + p]; bs[stage][p * BN + col] = op(B)[k0 + p, col0 + col].
// One element where LOCAL is 0 (the arrays are then unused).
const uint A_SLICE = BK * BM * LOCAL + (1u - LOCAL), B_SLICE = BK * BN * LOCAL + (1u - LOCAL);
shared acc as[STAGES * A_SLICE];
shared acc bs[STAGES * B_SLICE];

// Element i of an operand's vector view, widened to acc (VW = 2 or 4).
// (Element by element: 16-bit values cannot be held in a variable.)
#define DEFINE_VLOAD(NAME, V2, V4)                                                                     \
    accv4 NAME(uint i) {                                                                               \
        if (VW == 4u) return accv4(TO_ACC(V4[i].x), TO_ACC(V4[i].y), TO_ACC(V4[i].z), TO_ACC(V4[i].w)); \
        return accv4(TO_ACC(V2[i].x), TO_ACC(V2[i].y), acc(0), acc(0));                                 \
    }
DEFINE_VLOAD(load_a_vector, a2, a4)
DEFINE_VLOAD(load_b_vector, b2, b4)

uint m, n, k, row0, col0, id;
bool ta, tb;

acc load_a(uint row, uint q) { return ta ? LOAD(a, q * m + row) : LOAD(a, row * k + q); }
acc load_b(uint q, uint col) { return tb ? LOAD(b, col * k + q) : LOAD(b, q * n + col); }

// Stages op(A)[row0.., k0..k0+BK) into as[stage] and op(B)[k0.., col0..) into bs[stage].
void stage_slice(uint stage, uint k0) {
    const uint ao = stage * A_SLICE, bo = stage * B_SLICE;
    // op(A): contiguous along k (A as [m,k]) or along m (A given as [k,m]).
    if (VW > 1u && !ta && k % VW == 0u) {
        [[unroll]] for (uint e = id; e < BM * BK / VW; e += INVOCATIONS) {
            const uint pv = e % (BK / VW), r = e / (BK / VW), row = row0 + r, q = k0 + pv * VW;
            const accv4 x = (row < m && q < k) ? load_a_vector((row * k + q) / VW) : accv4(0);
            [[unroll]] for (uint v = 0u; v < VW; ++v) as[ao + (pv * VW + v) * BM + r] = x[v];
        }
    } else if (VW > 1u && ta && m % VW == 0u) {
        [[unroll]] for (uint e = id; e < BM * BK / VW; e += INVOCATIONS) {
            const uint rv = e % (BM / VW), p = e / (BM / VW), row = row0 + rv * VW, q = k0 + p;
            const accv4 x = (row < m && q < k) ? load_a_vector((q * m + row) / VW) : accv4(0);
            [[unroll]] for (uint v = 0u; v < VW; ++v) as[ao + p * BM + rv * VW + v] = x[v];
        }
    } else {
        [[unroll]] for (uint e = id; e < BM * BK; e += INVOCATIONS) {
            const uint r = e % BM, p = e / BM, row = row0 + r, q = k0 + p;
            as[ao + e] = (row < m && q < k) ? load_a(row, q) : acc(0);
        }
    }
    // op(B): contiguous along n (B as [k,n]) or along k (B given as [n,k]).
    if (VW > 1u && !tb && n % VW == 0u) {
        [[unroll]] for (uint e = id; e < BN * BK / VW; e += INVOCATIONS) {
            const uint cv = e % (BN / VW), p = e / (BN / VW), col = col0 + cv * VW, q = k0 + p;
            const accv4 x = (q < k && col < n) ? load_b_vector((q * n + col) / VW) : accv4(0);
            [[unroll]] for (uint v = 0u; v < VW; ++v) bs[bo + p * BN + cv * VW + v] = x[v];
        }
    } else if (VW > 1u && tb && k % VW == 0u) {
        [[unroll]] for (uint e = id; e < BN * BK / VW; e += INVOCATIONS) {
            const uint pv = e % (BK / VW), cl = e / (BK / VW), col = col0 + cl, q = k0 + pv * VW;
            const accv4 x = (q < k && col < n) ? load_b_vector((col * k + q) / VW) : accv4(0);
            [[unroll]] for (uint v = 0u; v < VW; ++v) bs[bo + (pv * VW + v) * BN + cl] = x[v];
        }
    } else {
        [[unroll]] for (uint e = id; e < BN * BK; e += INVOCATIONS) {
            const uint cl = e % BN, p = e / BN, col = col0 + cl, q = k0 + p;
            bs[bo + e] = (q < k && col < n) ? load_b(q, col) : acc(0);
        }
    }
}

// One step p of the sum: s[i·TN + j] += av[i]·bv[j], av and bv read by the
// statements before. `precise`: each fma stays one rounding, in every variant.
#define MULTIPLY_ADD()                                                                                 \
    [[unroll]] for (uint i = 0u; i < TM; ++i)                                                          \
        [[unroll]] for (uint j = 0u; j < TN; ++j) s[i * TN + j] = fma(av[i], bv[j], s[i * TN + j]);

void main() {
    m = pc.m;
    n = pc.n;
    k = pc.k;
    ta = (pc.flags & 1u) != 0u;
    tb = (pc.flags & 2u) != 0u;
    const bool has_bias = (pc.flags & 4u) != 0u;
    // A one-row work-group's y is a constant 0: its rows (and A's loads) are
    // then uniform across the work-group, which CPU drivers load once.
    const uint lx = gl_LocalInvocationID.x, ly = WG_Y == 1u ? 0u : gl_LocalInvocationID.y;
    id = ly * WG_X + lx;
    const uint tiles_n = (n + BN - 1u) / BN;
    const uvec3 g = gl_NumWorkGroups;
    const uint groups = g.x * g.y * g.z;
    const uint group = gl_WorkGroupID.x + g.x * (gl_WorkGroupID.y + g.y * gl_WorkGroupID.z);
    const uint end = pc.base + pc.count;
    const uint slices = (k + BK - 1u) / BK;
    for (uint tile = pc.base + group; tile < end; tile = (end - tile <= groups) ? end : tile + groups) {
        row0 = (tile / tiles_n) * BM;
        col0 = (tile % tiles_n) * BN;
        precise acc s[TM * TN];  // s[i * TN + j]: output (row0 + ly + i·WG_Y, col0 + lx + j·WG_X)
        [[unroll]] for (uint e = 0u; e < TM * TN; ++e) s[e] = acc(0);
        if (LOCAL == 0u) {
            // Rows and columns past the matrix read row m-1 / column n-1 (never stored).
            uint rows[TM], cols[TN];
            [[unroll]] for (uint i = 0u; i < TM; ++i) rows[i] = min(row0 + ly + i * WG_Y, m - 1u);
            [[unroll]] for (uint j = 0u; j < TN; ++j) cols[j] = min(col0 + lx + j * WG_X, n - 1u);
            // Not unrolled: a step is TM·TN fmas already, and CPU drivers
            // compile a fully unrolled slice for seconds.
            for (uint p = 0u; p < k; ++p) {
                acc av[TM], bv[TN];
                [[unroll]] for (uint i = 0u; i < TM; ++i) av[i] = load_a(rows[i], p);
                [[unroll]] for (uint j = 0u; j < TN; ++j) bv[j] = load_b(p, cols[j]);
                MULTIPLY_ADD()
            }
        } else {
            uint stage = 0u;
            if (STAGES == 2u && slices > 0u) {
                stage_slice(0u, 0u);
                barrier();
            }
            for (uint sl = 0u; sl < slices; ++sl) {
                const uint k0 = sl * BK;
                if (STAGES == 2u) {
                    // The other buffer was last read before the barrier that ended the previous slice.
                    if (sl + 1u < slices) stage_slice(stage ^ 1u, k0 + BK);
                } else {
                    stage_slice(0u, k0);
                    barrier();
                }
                const uint ao = stage * A_SLICE, bo = stage * B_SLICE;
                acc av[TM], bv[TN];
                if (k0 + BK <= k) {
                    [[unroll]] for (uint p = 0u; p < BK; ++p) {
                        [[unroll]] for (uint i = 0u; i < TM; ++i) av[i] = as[ao + p * BM + ly + i * WG_Y];
                        [[unroll]] for (uint j = 0u; j < TN; ++j) bv[j] = bs[bo + p * BN + lx + j * WG_X];
                        MULTIPLY_ADD()
                    }
                } else {  // the last, partial slice: only its k - k0 steps
                    for (uint p = 0u; p < k - k0; ++p) {
                        [[unroll]] for (uint i = 0u; i < TM; ++i) av[i] = as[ao + p * BM + ly + i * WG_Y];
                        [[unroll]] for (uint j = 0u; j < TN; ++j) bv[j] = bs[bo + p * BN + lx + j * WG_X];
                        MULTIPLY_ADD()
                    }
                }
                barrier();
                if (STAGES == 2u) stage ^= 1u;
            }
        }
        if (!has_bias && pc.act == uint(ACCEL_ACTIVATION_NONE)) {  // matmul: plain stores
            [[unroll]] for (uint i = 0u; i < TM; ++i) {
                const uint row = row0 + ly + i * WG_Y;
                [[unroll]] for (uint j = 0u; j < TN; ++j) {
                    const uint col = col0 + lx + j * WG_X;
                    if (row < m && col < n) STORE(c, row * n + col, s[i * TN + j]);
                }
            }
        } else {
            // One copy of the activation in a loop (inlined TM·TN times, its
            // code took CPU drivers' compilers seconds per blocking): the
            // sums copied out first, so that only the copy is indexed.
            acc sums[TM * TN];
            [[unroll]] for (uint e = 0u; e < TM * TN; ++e) sums[e] = s[e];
            for (uint e = 0u; e < TM * TN; ++e) {
                const uint row = row0 + ly + (e / TN) * WG_Y, col = col0 + lx + (e % TN) * WG_X;
                if (row < m && col < n) {
                    acc v = sums[e];
                    if (has_bias) v += LOAD(bias, col);
                    STORE(c, row * n + col, activate(v, pc.act));
                }
            }
        }
    }
}
