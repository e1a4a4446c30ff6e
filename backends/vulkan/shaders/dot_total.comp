#version 450
// dot's total: one work-group; invocation t takes partials t, t + items, ...
// (count = the partials) in order, then dot.comp's tree; y[0] rounded once.
#include "common.glsl"
#define DOT_MAX_INVOCATIONS 1024
layout(std430, set = 0, binding = 0) readonly buffer P { acc partials[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { real y[]; };
layout(push_constant) uniform Push { uint base, count; } pc;
shared acc sum[DOT_MAX_INVOCATIONS];

void main() {
    const uint t = gl_LocalInvocationIndex, items = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
    acc s = acc(0);
    for (uint j = t; j < pc.count; j += items) s += partials[j];
    sum[t] = s;
    memoryBarrierShared();
    barrier();
    for (uint k = 1u; k < items; k *= 2u) {
        if (t % (2u * k) == 0u && t + k < items) sum[t] += sum[t + k];
        memoryBarrierShared();
        barrier();
    }
    if (t == 0u) STORE(y, 0u, sum[0]);
}
