#version 450
// a = b + s·c: BabelStream's triad (ops::triad); in acc, rounded once.
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer B { real b[]; };
layout(std430, set = 0, binding = 1) readonly buffer C { real c[]; };
layout(std430, set = 0, binding = 2) writeonly buffer A { real a[]; };
layout(push_constant) uniform Push { uint base, count; uint w[SCALAR_WORDS]; } pc;

void main() {
    const acc s = SCALAR(pc.w, 0);
    FOR_EACH(i, pc.base, pc.count) STORE(a, i, LOAD(b, i) + s * LOAD(c, i));
}
