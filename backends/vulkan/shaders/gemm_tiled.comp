#version 450
// gemm.comp's C[m,n] = act(op(A)·op(B) + bias) with shared-memory tiles: a
// work-group of 16 × 16 invocations (the host launches it only with that
// block) computes 16 × 16 output tiles, staging 16 × 16 slices of op(A) and
// op(B) through shared memory (zero outside the matrices). Tiles are
// numbered row-major over the output (tiles_n per row) and taken
// grid-stride by work-group over [base, base + count), so any grid is
// correct; every loop is uniform across the work-group (barriers).
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer A { real a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { real b[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { real bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer C { real c[]; };
layout(push_constant) uniform Push { uint base, count, m, n, k, flags, act; } pc;

#define TILE 16u
shared acc as[TILE][TILE];  // as[r][p] = op(A)[row0 + r, k0 + p]
shared acc bs[TILE][TILE];  // bs[p][col] = op(B)[k0 + p, col0 + col]

void main() {
    const uint m = pc.m, n = pc.n, k = pc.k;
    const bool ta = (pc.flags & 1u) != 0u, tb = (pc.flags & 2u) != 0u, has_bias = (pc.flags & 4u) != 0u;
    const uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
    const uint tiles_n = (n + TILE - 1u) / TILE;
    const uvec3 g = gl_NumWorkGroups;
    const uint groups = g.x * g.y * g.z;
    const uint group = gl_WorkGroupID.x + g.x * (gl_WorkGroupID.y + g.y * gl_WorkGroupID.z);
    const uint end = pc.base + pc.count;
    for (uint tile = pc.base + group; tile < end; tile = (end - tile <= groups) ? end : tile + groups) {
        const uint row0 = (tile / tiles_n) * TILE, col0 = (tile % tiles_n) * TILE;
        const uint row = row0 + ly, col = col0 + lx;
        acc s = acc(0);
        for (uint k0 = 0u; k0 < k; k0 += TILE) {
            // This invocation stages op(A)[row, k0 + lx] and op(B)[k0 + ly, col].
            const uint pa = k0 + lx, pb = k0 + ly;
            as[ly][lx] = (row < m && pa < k) ? (ta ? LOAD(a, pa * m + row) : LOAD(a, row * k + pa)) : acc(0);
            bs[ly][lx] = (pb < k && col < n) ? (tb ? LOAD(b, col * k + pb) : LOAD(b, pb * n + col)) : acc(0);
            barrier();
            [[unroll]] for (uint p = 0u; p < TILE; ++p) s = fma(as[ly][p], bs[p][lx], s);
            barrier();
        }
        if (row < m && col < n) {
            if (has_bias) s += LOAD(bias, col);
            STORE(c, row * n + col, activate(s, pc.act));
        }
    }
}
