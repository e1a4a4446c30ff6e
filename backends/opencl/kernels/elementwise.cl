// Elementwise kernels: grid-stride loops (see FOR_EACH in common.cl), so any
// launch geometry is correct. The math is exactly that of the k_* docstrings
// in accel/device.hpp.
//
// add, sigmoid, bce_with_logits and bce_with_logits_backward work on vectors
// of EW_VW elements (a build option chosen per device: the native float width
// on CPUs, 4 elsewhere): work-item i takes the vectors i, i + S, i + 2S, ...
// (S = flat_size()) of the first floor(n / EW_VW)·EW_VW elements, loaded with
// vloadn (element alignment is all vloadn needs), then the < EW_VW remaining
// elements are shared out one per work-item. Explicit vectors are what lets a
// CPU compiler vectorize exp/log1p (one work-item per element leaves them
// scalar on PoCL), and the math is branch-free (selects), so no lane diverges.
#ifndef EW_VW
#define EW_VW 4
#endif
#define EW_CAT_(a, b) a##b
#define EW_CAT(a, b) EW_CAT_(a, b)
#define floatv EW_CAT(float, EW_VW)
#define EW_LOAD(p, i) EW_CAT(vload, EW_VW)((i), (p))
#define EW_STORE(v, p, i) EW_CAT(vstore, EW_VW)((v), (i), (p))

// Vector i of n elements runs over the full vectors; then j over the tail.
#define FOR_EACH_VECTOR(i, n) for (ulong i = flat_id(), stride_ = flat_size(); i < (n) / EW_VW; i += stride_)
#define FOR_EACH_TAIL(j, n) for (ulong j = (n) / EW_VW * EW_VW + flat_id(), stride_ = flat_size(); j < (n); j += stride_)

// The logistic on a vector, branch-free: 1 / (1 + exp(-x)) with the division
// as a fast reciprocal refined by one Newton step (about 1 ulp; a division
// costs several times more on CPUs). exp's argument is capped at 87 so that
// d stays finite (the step would make inf·0 = NaN); below x = -87 the result
// is then 1.6e-38 instead of less, an absolute error under 2e-38. NaN passes
// (the comparison is false for NaN).
floatv sigmoidv(floatv x) {
    const floatv t = -x;
    const floatv d = (floatv)1.0f + exp(select(t, (floatv)87.0f, isgreater(t, (floatv)87.0f)));
    const floatv r = native_recip(d);
    return r * ((floatv)2.0f - d * r);
}

// The stable binary cross-entropy on logits, per lane (see bce_with_logits).
floatv bcev(floatv z, floatv t) { return fmax(z, (floatv)0.0f) - z * t + log1p(exp(-fabs(z))); }

// c[i] = a[i] + b[i] for i < n, EW_VW elements at a time.
__kernel void add(__global const float* a, __global const float* b, __global float* c, ulong n) {
    FOR_EACH_VECTOR(i, n) EW_STORE(EW_LOAD(a, i) + EW_LOAD(b, i), c, i);
    FOR_EACH_TAIL(j, n) c[j] = a[j] + b[j];
}

// y[i] = 1 / (1 + exp(-x[i])), stable, for i < n; x and y may be the same buffer.
__kernel void sigmoid(__global const float* x, __global float* y, ulong n) {
    FOR_EACH_VECTOR(i, n) EW_STORE(sigmoidv(EW_LOAD(x, i)), y, i);
    FOR_EACH_TAIL(j, n) y[j] = sigmoid1(x[j]);
}

// y[i] = max(x[i], 0), NaN kept; x and y may be the same buffer.
__kernel void relu(__global const float* x, __global float* y, ulong n) {
    FOR_EACH(i, n) y[i] = relu1(x[i]);
}

// dx[i] = x[i] > 0 ? dy[i] : 0 (0 where x is NaN)
__kernel void relu_backward(__global const float* dy, __global const float* x, __global float* dx, ulong n) {
    FOR_EACH(i, n) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}

// dx[i] = dy[i] * y[i] * (1 - y[i])
__kernel void sigmoid_backward(__global const float* dy, __global const float* y, __global float* dx, ulong n) {
    FOR_EACH(i, n) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
}

// l[i] = max(z,0) - z*t + log1p(exp(-|z|)), the stable form of binary cross-entropy on logits.
__kernel void bce_with_logits(__global const float* z, __global const float* t, __global float* l, ulong n) {
    FOR_EACH_VECTOR(i, n) EW_STORE(bcev(EW_LOAD(z, i), EW_LOAD(t, i)), l, i);
    FOR_EACH_TAIL(j, n) l[j] = fmax(z[j], 0.0f) - z[j] * t[j] + log1p(exp(-fabs(z[j])));
}

// dz[i] = scale * (sigmoid(z[i]) - t[i])
__kernel void bce_with_logits_backward(__global const float* z, __global const float* t, __global float* dz, ulong n,
                                       float scale) {
    FOR_EACH_VECTOR(i, n) EW_STORE(scale * (sigmoidv(EW_LOAD(z, i)) - EW_LOAD(t, i)), dz, i);
    FOR_EACH_TAIL(j, n) dz[j] = scale * (sigmoid1(z[j]) - t[j]);
}

// PyTorch's Adam (torch.optim.Adam, single-tensor form), see Device::k_adam_step.
__kernel void adam_step(__global float* p, __global const float* grad, __global float* m, __global float* v, ulong n,
                        float beta1, float beta2, float eps, float step_size, float bc2_sqrt) {
    FOR_EACH(i, n) {
        const float g = grad[i];
        const float mi = beta1 * m[i] + (1.0f - beta1) * g;
        const float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        p[i] -= step_size * mi / (sqrt(vi) / bc2_sqrt + eps);
    }
}

// Peak-FMA probe (clpeak-style): 8 independent accumulators per work-item,
// `iterations` rounds of a = a*0.9999 + 1e-4 each; 16*iterations FLOPs per element.
__kernel void fma_throughput(__global float* y, ulong n, ulong iterations) {
    FOR_EACH(i, n) {
        float a[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) a[j] = (float)i * 1e-9f + (float)j;
        for (ulong it = 0; it < iterations; ++it) {
#pragma unroll
            for (int j = 0; j < 8; ++j) a[j] = a[j] * 0.9999f + 1e-4f;
        }
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < 8; ++j) s += a[j];
        y[i] = s;
    }
}

// y[r, c] = act(y[r, c] + bias[c]) for y[rows, cols] (read_y 0: y is not read,
// so act(bias[c]) or act(0)): the vendor path's epilogue after the GEMM, and
// its K = 0 result. bias is ignored when has_bias is 0.
__kernel void bias_activation(__global const float* bias, __global float* y, int has_bias, int read_y, int act,
                              ulong rows, ulong cols) {
    FOR_EACH(i, rows * cols) {
        const float v = (read_y ? y[i] : 0.0f) + (has_bias ? bias[i % cols] : 0.0f);
        y[i] = activate(v, act);
    }
}

// Does nothing: accel-bench times it as the bare cost of one launch.
__kernel void empty(void) {}
