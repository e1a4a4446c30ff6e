#version 450
// The peak-FMA probe (Probes::fma_throughput): invocation i keeps 8
// independent accumulators a_j = i * 1e-9 + j (computed in float), runs
// `iterations` rounds of a_j = a_j * 0.9999 + 1e-4 (float constants) on each
// in acc, and writes y[i] = sum of a_j. Built in f32 and f64.
#include "common.glsl"
layout(std430, set = 0, binding = 0) writeonly buffer Y { real y[]; };
layout(push_constant) uniform Push { uint base, count, iterations; } pc;

// The float32 constants 0.9999f and 1e-4f, from their bits: a constructor
// acc(0.9999) may be folded from the literal's exact decimal value in double.
void main() {
    const acc mul_c = acc(uintBitsToFloat(0x3F7FF972u)), add_c = acc(uintBitsToFloat(0x38D1B717u));
    FOR_EACH(i, pc.base, pc.count) {
        acc a[8];
        [[unroll]] for (int j = 0; j < 8; ++j) a[j] = acc(float(i) * 1e-9 + float(j));
        for (uint it = 0u; it < pc.iterations; ++it)
            [[unroll]] for (int j = 0; j < 8; ++j) a[j] = fma(a[j], mul_c, add_c);
        acc s = acc(0);
        [[unroll]] for (int j = 0; j < 8; ++j) s += a[j];
        STORE(y, i, s);
    }
}
