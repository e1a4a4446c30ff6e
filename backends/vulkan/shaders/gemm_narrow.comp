#version 450
// gemm.comp's C[m,n] = act(op(A)·op(B) + bias) for outputs too narrow or too
// short for gemm_tiled.comp (e.g. the [batch, 1] output layer of an MLP, or a
// matrix-vector product) and a long k: each subgroup computes one output
// element, its invocations taking every subgroup-size-th step of the k loop,
// and subgroupAdd sums their partial sums. Outputs (flattened, row-major) are
// taken grid-stride by subgroup over [base, base + count), so any geometry is
// correct. Needs subgroup arithmetic in compute shaders (Vulkan 1.1,
// VK_SUBGROUP_FEATURE_ARITHMETIC_BIT); the host uses gemm.comp elsewhere.
#include "common.glsl"
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(std430, set = 0, binding = 0) readonly buffer A { real a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { real b[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { real bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer C { real c[]; };
layout(push_constant) uniform Push { uint base, count, m, n, k, flags, act; } pc;

void main() {
    const uint m = pc.m, n = pc.n, k = pc.k;
    const bool ta = (pc.flags & 1u) != 0u, tb = (pc.flags & 2u) != 0u, has_bias = (pc.flags & 4u) != 0u;
    const uvec3 g = gl_NumWorkGroups;
    const uint groups = g.x * g.y * g.z;
    const uint group = gl_WorkGroupID.x + g.x * (gl_WorkGroupID.y + g.y * gl_WorkGroupID.z);
    const uint subgroups = groups * gl_NumSubgroups, subgroup = group * gl_NumSubgroups + gl_SubgroupID;
    const uint lanes = gl_SubgroupSize, lane = gl_SubgroupInvocationID;
    const uint end = pc.base + pc.count;
    for (uint e = pc.base + subgroup; e < end; e = (end - e <= subgroups) ? end : e + subgroups) {
        const uint row = e / n, col = e - row * n;
        acc s = acc(0);
        for (uint p = lane; p < k; p += lanes) {
            const acc x = ta ? LOAD(a, p * m + row) : LOAD(a, row * k + p);
            const acc y = tb ? LOAD(b, col * k + p) : LOAD(b, p * n + col);
            s = fma(x, y, s);
        }
        s = subgroupAdd(s);
        if (subgroupElect()) {
            if (has_bias) s += LOAD(bias, col);
            STORE(c, e, activate(s, pc.act));
        }
    }
}
