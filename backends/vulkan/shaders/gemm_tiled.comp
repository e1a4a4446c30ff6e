#version 450
// gemm.comp's C[m,n] = act(op(A)·op(B) + bias), register-blocked over
// shared-memory tiles. A work-group of WG_X × WG_Y invocations (the launch's
// block, specialization constants 0 and 1; the host launches it only with
// 16 × 16) computes a BM × BN output tile, BM = WG_Y·TM and BN = WG_X·TN:
// invocation (x, y) keeps in registers the TM × TN outputs at rows
// y + i·WG_Y and columns x + j·WG_X of the tile (strided, so neighbouring
// invocations read and write neighbouring columns). k goes in slices of BK:
// the work-group stages op(A)'s BM × BK and op(B)'s BK × BN slice in shared
// memory (zero outside the matrices), then each invocation multiplies its TM
// values of A by its TN values of B at each step of the slice.
//
// TM, TN and BK are specialization constants 3, 4 and 5, chosen per call at
// pipeline creation (VulkanDevice::gemm_tiles): one SPIR-V module serves
// every tile shape, and the driver compiles each with its loops unrolled.
//
// Tiles are numbered row-major over the output (tiles_n per row) and taken
// grid-stride by work-group over [base, base + count), so any grid is
// correct; every loop is uniform across the work-group (barriers).
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer A { real a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { real b[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { real bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer C { real c[]; };
layout(push_constant) uniform Push { uint base, count, m, n, k, flags, act; } pc;

layout(constant_id = 3) const uint TM = 4;
layout(constant_id = 4) const uint TN = 4;
layout(constant_id = 5) const uint BK = 16;
const uint WG_X = gl_WorkGroupSize.x, WG_Y = gl_WorkGroupSize.y;
const uint BM = WG_Y * TM, BN = WG_X * TN;
shared acc as[BK * BM];  // as[p * BM + r] = op(A)[row0 + r, k0 + p]
shared acc bs[BK * BN];  // bs[p * BN + col] = op(B)[k0 + p, col0 + col]

void main() {
    const uint m = pc.m, n = pc.n, k = pc.k;
    const bool ta = (pc.flags & 1u) != 0u, tb = (pc.flags & 2u) != 0u, has_bias = (pc.flags & 4u) != 0u;
    const uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
    const uint id = ly * WG_X + lx, invocations = WG_X * WG_Y;
    const uint tiles_n = (n + BN - 1u) / BN;
    const uvec3 g = gl_NumWorkGroups;
    const uint groups = g.x * g.y * g.z;
    const uint group = gl_WorkGroupID.x + g.x * (gl_WorkGroupID.y + g.y * gl_WorkGroupID.z);
    const uint end = pc.base + pc.count;
    for (uint tile = pc.base + group; tile < end; tile = (end - tile <= groups) ? end : tile + groups) {
        const uint row0 = (tile / tiles_n) * BM, col0 = (tile % tiles_n) * BN;
        acc s[TM * TN];  // s[i * TN + j]: output (row0 + ly + i·WG_Y, col0 + lx + j·WG_X)
        [[unroll]] for (uint e = 0u; e < TM * TN; ++e) s[e] = acc(0);
        for (uint k0 = 0u; k0 < k; k0 += BK) {
            // The slices, each element staged by one invocation: consecutive
            // invocations take consecutive rows of op(A) and columns of op(B).
            [[unroll]] for (uint e = id; e < BM * BK; e += invocations) {
                const uint r = e % BM, p = e / BM, row = row0 + r, q = k0 + p;
                as[e] = (row < m && q < k) ? (ta ? LOAD(a, q * m + row) : LOAD(a, row * k + q)) : acc(0);
            }
            [[unroll]] for (uint e = id; e < BN * BK; e += invocations) {
                const uint cl = e % BN, p = e / BN, col = col0 + cl, q = k0 + p;
                bs[e] = (q < k && col < n) ? (tb ? LOAD(b, col * k + q) : LOAD(b, q * n + col)) : acc(0);
            }
            barrier();
            [[unroll]] for (uint p = 0u; p < BK; ++p) {
                acc av[TM], bv[TN];
                [[unroll]] for (uint i = 0u; i < TM; ++i) av[i] = as[p * BM + ly + i * WG_Y];
                [[unroll]] for (uint j = 0u; j < TN; ++j) bv[j] = bs[p * BN + lx + j * WG_X];
                [[unroll]] for (uint i = 0u; i < TM; ++i)
                    [[unroll]] for (uint j = 0u; j < TN; ++j) s[i * TN + j] = fma(av[i], bv[j], s[i * TN + j]);
            }
            barrier();
        }
        [[unroll]] for (uint i = 0u; i < TM; ++i) {
            const uint row = row0 + ly + i * WG_Y;
            [[unroll]] for (uint j = 0u; j < TN; ++j) {
                const uint col = col0 + lx + j * WG_X;
                if (row < m && col < n) {
                    acc v = s[i * TN + j];
                    if (has_bias) v += LOAD(bias, col);
                    STORE(c, row * n + col, activate(v, pc.act));
                }
            }
        }
    }
}
