// Elementwise kernels: one grid-stride loop each (see FOR_EACH in common.cl).
// The math is exactly that of the k_* docstrings in accel/device.hpp.

// c[i] = a[i] + b[i]
__kernel void add(__global const float* a, __global const float* b, __global float* c, ulong n) {
    FOR_EACH(i, n) c[i] = a[i] + b[i];
}

// y[i] = 1 / (1 + exp(-x[i])), stable; x and y may be the same buffer.
__kernel void sigmoid(__global const float* x, __global float* y, ulong n) {
    FOR_EACH(i, n) y[i] = sigmoid1(x[i]);
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
    FOR_EACH(i, n) l[i] = fmax(z[i], 0.0f) - z[i] * t[i] + log1p(exp(-fabs(z[i])));
}

// dz[i] = scale * (sigmoid(z[i]) - t[i])
__kernel void bce_with_logits_backward(__global const float* z, __global const float* t, __global float* dz, ulong n,
                                       float scale) {
    FOR_EACH(i, n) dz[i] = scale * (sigmoid1(z[i]) - t[i]);
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
