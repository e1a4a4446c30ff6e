#version 450
// y = s·x: BabelStream's mul (ops::scale); s in acc, the product rounded once.
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer X { real x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { real y[]; };
layout(push_constant) uniform Push { uint base, count; uint w[SCALAR_WORDS]; } pc;

void main() {
    const acc s = SCALAR(pc.w, 0);
    FOR_EACH(i, pc.base, pc.count) STORE(y, i, s * LOAD(x, i));
}
