#version 450
// One Adam step (PyTorch's single-tensor form; accel::AdamScalarArgs):
// m ← β1·m + (1−β1)·g, v ← β2·v + (1−β2)·g², p ← p − step·m / (√v / bc2 + eps),
// in acc, each stored once. Bindings p, g, m, v; scalars β1, β2, eps, step, bc2.
#include "common.glsl"
layout(std430, set = 0, binding = 0) buffer P { real p[]; };
layout(std430, set = 0, binding = 1) readonly buffer G { real g[]; };
layout(std430, set = 0, binding = 2) buffer M { real m[]; };
layout(std430, set = 0, binding = 3) buffer V { real v[]; };
layout(push_constant) uniform Push { uint base, count; uint w[5 * SCALAR_WORDS]; } pc;

void main() {
    const acc beta1 = SCALAR(pc.w, 0), beta2 = SCALAR(pc.w, 1), eps = SCALAR(pc.w, 2), step_size = SCALAR(pc.w, 3),
              bc2 = SCALAR(pc.w, 4);
    FOR_EACH(i, pc.base, pc.count) {
        const acc gi = LOAD(g, i);
        const acc mi = beta1 * LOAD(m, i) + (acc(1) - beta1) * gi;
        const acc vi = beta2 * LOAD(v, i) + (acc(1) - beta2) * gi * gi;
        STORE(m, i, mi);
        STORE(v, i, vi);
        STORE(p, i, LOAD(p, i) - step_size * mi / (sqrt(vi) / bc2 + eps));
    }
}
