#version 450
// C[m,n] = act(op(A)·op(B) + bias): matmul (no bias, no activation) and
// dense (A = x[batch,in], B = w[out,in] transposed, bias[out] or none).
// op(A) is A[m,k], or A given as [k,m] (flag 1); op(B) is B[k,n], or B given
// as [n,k] (flag 2); flag 4: add bias[col]. Row-major; products accumulated
// in acc (float; double for f64), one rounding on store. Grid-stride over the
// flattened output elements [base, base + count): any geometry.
#include "common.glsl"
layout(std430, set = 0, binding = 0) readonly buffer A { real a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { real b[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { real bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer C { real c[]; };
layout(push_constant) uniform Push { uint base, count, m, n, k, flags, act; } pc;

void main() {
    const uint m = pc.m, n = pc.n, k = pc.k;
    const bool ta = (pc.flags & 1u) != 0u, tb = (pc.flags & 2u) != 0u, has_bias = (pc.flags & 4u) != 0u;
    FOR_EACH(e, pc.base, pc.count) {
        const uint row = e / n, col = e - row * n;
        acc s = acc(0);
        for (uint p = 0u; p < k; ++p) {
            const acc x = ta ? LOAD(a, p * m + row) : LOAD(a, row * k + p);
            const acc y = tb ? LOAD(b, col * k + p) : LOAD(b, p * n + col);
            s = fma(x, y, s);
        }
        if (has_bias) s += LOAD(bias, col);
        STORE(c, e, activate(s, pc.act));
    }
}
