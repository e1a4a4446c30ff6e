#version 450
// y[r,c] = act(alpha·y[r,c] + bias[c]) over the flattened elements [base,
// base + count) of y[rows, cols]: flag 1 = a bias is given, flag 2 = alpha is
// 1 (with alpha 0, y is not read: this also fills).
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer Bias { real bias[]; };
layout(std430, set = 0, binding = 1) buffer Y { real y[]; };
layout(push_constant) uniform Push { uint base, count, cols, flags, act; } pc;

void main() {
    const bool has_bias = (pc.flags & 1u) != 0u, read_y = (pc.flags & 2u) != 0u;
    FOR_EACH(i, pc.base, pc.count) {
        acc v = read_y ? LOAD(y, i) : acc(0);
        if (has_bias) v += LOAD(bias, i % pc.cols);
        STORE(y, i, activate(v, pc.act));
    }
}
