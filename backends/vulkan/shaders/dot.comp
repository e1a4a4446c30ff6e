#version 450
// dot's partial sums (accel's DotArgs): invocation t of work-group j sums its
// grid-stride elements in order into one acc, and the group's values meet in
// a fixed tree (pairs 1 apart, then 2, 4, ...) into partials[j]. The host
// covers every element in one dispatch and keeps work-groups within the
// shared array (DOT_MAX_INVOCATIONS).
#include "common.glsl"
#define DOT_MAX_INVOCATIONS 1024
layout(std430, set = 0, binding = 0) readonly buffer A { real a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { real b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer P { acc partials[]; };
layout(push_constant) uniform Push { uint base, count; } pc;
shared acc sum[DOT_MAX_INVOCATIONS];

void main() {
    const uint t = gl_LocalInvocationIndex, items = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
    acc s = acc(0);
    FOR_EACH(i, pc.base, pc.count) s += LOAD(a, i) * LOAD(b, i);
    sum[t] = s;
    memoryBarrierShared();
    barrier();
    for (uint k = 1u; k < items; k *= 2u) {
        if (t % (2u * k) == 0u && t + k < items) sum[t] += sum[t + k];
        memoryBarrierShared();
        barrier();
    }
    if (t == 0u)
        partials[gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z)] =
            sum[0];
}
