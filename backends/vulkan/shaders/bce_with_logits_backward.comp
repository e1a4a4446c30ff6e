#version 450
// dz = scale·(σ(z) − t), σ the stable logistic of common.glsl.
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer Z { real z[]; };
layout(std430, set = 0, binding = 1) readonly buffer T { real t[]; };
layout(std430, set = 0, binding = 2) writeonly buffer DZ { real dz[]; };
layout(push_constant) uniform Push { uint base, count; uint w[SCALAR_WORDS]; } pc;

void main() {
    const acc scale = SCALAR(pc.w, 0);
    FOR_EACH(i, pc.base, pc.count) STORE(dz, i, scale * (sigmoid1(LOAD(z, i)) - LOAD(t, i)));
}
