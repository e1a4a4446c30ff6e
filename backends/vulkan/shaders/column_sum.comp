#version 450
// y[c] = sum over r of x[r, c] for x[rows, cols] (row-major), accumulated in
// acc, for the columns [base, base + count).
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer X { real x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { real y[]; };
layout(push_constant) uniform Push { uint base, count, rows, cols; } pc;

void main() {
    FOR_EACH(c, pc.base, pc.count) {
        acc s = acc(0);
        for (uint r = 0u; r < pc.rows; ++r) s += LOAD(x, r * pc.cols + c);
        STORE(y, c, s);
    }
}
