// Elementwise kernels: grid-stride loops (see FOR_EACH in common.cl), so any
// launch geometry is correct. The math is the op table's (each op's formula
// in accel/elementwise_math.hpp; adam_step and the backward ops as
// accel/ops.hpp documents them). Elements are read with LOAD, computed in acc and
// written with STORE (common.cl), so every dtype runs these same kernels.
//
// add: ADD_VW elements per work-item and loop step (a build option of every
// dtype's program: 1 on CPU devices, EW_VW in the float32 program elsewhere,
// 1 in the other dtypes' programs). With ADD_VW = 1 and an NDRange of at
// least n work-items (the default geometry), each work-item adds one element
// with no loop: a CPU compiler then vectorizes across the work-items of a
// group, which streams at the bandwidth of a plain loop (PoCL: about 15 %
// faster than one explicit vector per work-item); a smaller NDRange takes
// the grid-stride loop.
#ifndef ADD_VW
#define ADD_VW 1
#endif
#if ADD_VW > 1 && ADD_VW != EW_VW
#error "ADD_VW is 1 or EW_VW"
#endif

// In the float32 program, sigmoid, relu, relu_backward, sigmoid_backward,
// bce_with_logits and bce_with_logits_backward (add where ADD_VW > 1, and
// bias_activation and column_sum along rows) work on vectors of EW_VW elements (a build option
// chosen per device: the native float width on CPUs, 4 elsewhere): work-item
// i takes the vectors i, i + S, i + 2S, ... (S = flat_size(); sigmoid: pairs
// of vectors, see there) of the first floor(n / EW_VW)·EW_VW elements, loaded with vloadn (element alignment is
// all vloadn needs), then the < EW_VW remaining elements are shared out one
// per work-item. Explicit vectors are what lets a CPU compiler vectorize
// exp/log1p (one work-item per element leaves them scalar on PoCL), and the
// math is branch-free (selects), so no lane diverges. The other dtypes'
// programs are built with EW_VW = 1: one element per work-item and loop step,
// the scalar math of the float32 tails in their acc.
#ifndef EW_VW
#define EW_VW 4
#endif
#if EW_VW > 1 && (defined(ACCEL_REAL_F64) || defined(ACCEL_REAL_F16) || defined(ACCEL_REAL_BF16))
#error "the vector elementwise kernels (EW_VW > 1) are float32 only; build other dtypes with -DEW_VW=1"
#endif

#if EW_VW > 1
#define EW_CAT_(a, b) a##b
#define EW_CAT(a, b) EW_CAT_(a, b)
#define floatv EW_CAT(float, EW_VW)
#define uintv EW_CAT(uint, EW_VW)
#define EW_LOAD(p, i) EW_CAT(vload, EW_VW)((i), (p))
#define EW_STORE(v, p, i) EW_CAT(vstore, EW_VW)((v), (i), (p))

// Vector i of n elements runs over the full vectors; then j over the tail.
#define FOR_EACH_VECTOR(i, n) for (ulong i = flat_id(), stride_ = flat_size(); i < (n) / EW_VW; i += stride_)
#define FOR_EACH_TAIL(j, n) for (ulong j = (n) / EW_VW * EW_VW + flat_id(), stride_ = flat_size(); j < (n); j += stride_)

// exp_nonpositive and sigmoidv: common.cl's float ones on EW_VW lanes.
DEFINE_SIGMOID_F32(exp_nonpositive, sigmoidv, floatv, uintv, EW_CAT(as_uint, EW_VW), EW_CAT(as_float, EW_VW))

// activate() per lane.
DEFINE_ACTIVATE_F32(activatev, floatv, sigmoidv)

// The stable binary cross-entropy on logits, per lane (see bce_with_logits).
floatv bcev(floatv z, floatv t) { return fmax(z, (floatv)0.0f) - z * t + log1p(exp(-fabs(z))); }
#endif

// The stable binary cross-entropy on logits of one element.
acc bce1(acc z, acc t) { return fmax(z, (acc)0) - z * t + log1p(exp(-fabs(z))); }

// c = a * b (the op `mul`): one rounding of the product, computed in acc.
__kernel void mul(__global const real* a, __global const real* b, __global real* c, ulong n) {
    FOR_EACH(i, n) STORE(c, i, LOAD(a, i) * LOAD(b, i));
}

// y = x: the op copy (BabelStream's copy as a kernel).
__kernel void copy(__global const real* x, __global real* y, ulong n) { FOR_EACH(i, n) STORE(y, i, LOAD(x, i)); }

// y[i] = gelu(x[i]) = x·Φ(x) (gelu1, common.cl); x and y may be the same buffer.
__kernel void gelu(__global const real* x, __global real* y, ulong n) { FOR_EACH(i, n) STORE(y, i, gelu1(LOAD(x, i))); }

// y[i] = x·(1 + tanh(√(2/π)(x + 0.044715x³)))/2 (gelu_tanh1, common.cl).
__kernel void gelu_tanh(__global const real* x, __global real* y, ulong n) {
    FOR_EACH(i, n) STORE(y, i, gelu_tanh1(LOAD(x, i)));
}

// dx[i] = dy·(Φ(x) + x·φ(x)) (gelu_backward1, common.cl)
__kernel void gelu_backward(__global const real* dy, __global const real* x, __global real* dx, ulong n) {
    FOR_EACH(i, n) STORE(dx, i, gelu_backward1(LOAD(dy, i), LOAD(x, i)));
}

// dx[i] = dy·gelu_tanh'(x) (gelu_tanh_backward1, common.cl)
__kernel void gelu_tanh_backward(__global const real* dy, __global const real* x, __global real* dx, ulong n) {
    FOR_EACH(i, n) STORE(dx, i, gelu_tanh_backward1(LOAD(dy, i), LOAD(x, i)));
}

// c[i] = a[i] + b[i] for i < n, ADD_VW elements at a time.
__kernel void add(__global const real* a, __global const real* b, __global real* c, ulong n) {
#if ADD_VW > 1
    FOR_EACH_VECTOR(i, n) EW_STORE(EW_LOAD(a, i) + EW_LOAD(b, i), c, i);
    FOR_EACH_TAIL(j, n) c[j] = a[j] + b[j];
#else
    if (flat_size() >= n) {  // one element per work-item (uniform across the NDRange)
        const ulong i = flat_id();
        if (i < n) STORE(c, i, LOAD(a, i) + LOAD(b, i));
    } else {
        FOR_EACH(i, n) STORE(c, i, LOAD(a, i) + LOAD(b, i));
    }
#endif
}

// y[i] = 1 / (1 + exp(-x[i])), stable, for i < n; x and y may be the same buffer.
// Vector form: the full vectors are taken as two halves of h vectors, and
// work-item i does vector i of both (then i + S, ...): two streams far apart
// keep more cache-line fills in flight than one (PoCL and Intel's runtime:
// +0.1 to +0.2 of add's GB/s at 1e7); the default NDRange is h work-items.
__kernel void sigmoid(__global const real* x, __global real* y, ulong n) {
#if EW_VW > 1
    const ulong h = n / EW_VW / 2;
    for (ulong i = flat_id(), stride_ = flat_size(); i < h; i += stride_) {
        EW_STORE(sigmoidv(EW_LOAD(x, i)), y, i);
        EW_STORE(sigmoidv(EW_LOAD(x, i + h)), y, i + h);
    }
    for (ulong j = 2 * h * EW_VW + flat_id(), stride_ = flat_size(); j < n; j += stride_) y[j] = sigmoid1(x[j]);
#else
    FOR_EACH(i, n) STORE(y, i, sigmoid1(LOAD(x, i)));
#endif
}

// y[i] = max(x[i], 0), NaN kept; x and y may be the same buffer.
__kernel void relu(__global const real* x, __global real* y, ulong n) {
#if EW_VW > 1
    FOR_EACH_VECTOR(i, n) EW_STORE(activatev(EW_LOAD(x, i), ACCEL_ACTIVATION_RELU), y, i);
    FOR_EACH_TAIL(j, n) y[j] = relu1(x[j]);
#else
    FOR_EACH(i, n) STORE(y, i, relu1(LOAD(x, i)));
#endif
}

// dx[i] = x[i] > 0 ? dy[i] : 0 (0 where x is NaN)
__kernel void relu_backward(__global const real* dy, __global const real* x, __global real* dx, ulong n) {
#if EW_VW > 1
    FOR_EACH_VECTOR(i, n) EW_STORE(select((floatv)0.0f, EW_LOAD(dy, i), EW_LOAD(x, i) > (floatv)0.0f), dx, i);
    FOR_EACH_TAIL(j, n) dx[j] = x[j] > 0.0f ? dy[j] : 0.0f;
#else
    FOR_EACH(i, n) STORE(dx, i, LOAD(x, i) > (acc)0 ? LOAD(dy, i) : (acc)0);
#endif
}

// dx[i] = dy[i] * y[i] * (1 - y[i])
__kernel void sigmoid_backward(__global const real* dy, __global const real* y, __global real* dx, ulong n) {
#if EW_VW > 1
    FOR_EACH_VECTOR(i, n) {
        const floatv yi = EW_LOAD(y, i);
        EW_STORE(EW_LOAD(dy, i) * yi * ((floatv)1.0f - yi), dx, i);
    }
    FOR_EACH_TAIL(j, n) dx[j] = dy[j] * y[j] * (1.0f - y[j]);
#else
    FOR_EACH(i, n) {
        const acc yi = LOAD(y, i);
        STORE(dx, i, LOAD(dy, i) * yi * ((acc)1 - yi));
    }
#endif
}

// l[i] = max(z,0) - z*t + log1p(exp(-|z|)), the stable form of binary cross-entropy on logits.
__kernel void bce_with_logits(__global const real* z, __global const real* t, __global real* l, ulong n) {
#if EW_VW > 1
    FOR_EACH_VECTOR(i, n) EW_STORE(bcev(EW_LOAD(z, i), EW_LOAD(t, i)), l, i);
    FOR_EACH_TAIL(j, n) l[j] = bce1(z[j], t[j]);
#else
    FOR_EACH(i, n) STORE(l, i, bce1(LOAD(z, i), LOAD(t, i)));
#endif
}

// dz[i] = scale * (sigmoid(z[i]) - t[i])
__kernel void bce_with_logits_backward(__global const real* z, __global const real* t, __global real* dz, ulong n,
                                       acc scale) {
#if EW_VW > 1
    FOR_EACH_VECTOR(i, n) EW_STORE(scale * (sigmoidv(EW_LOAD(z, i)) - EW_LOAD(t, i)), dz, i);
    FOR_EACH_TAIL(j, n) dz[j] = scale * (sigmoid1(z[j]) - t[j]);
#else
    FOR_EACH(i, n) STORE(dz, i, scale * (sigmoid1(LOAD(z, i)) - LOAD(t, i)));
#endif
}

// y = s·x and a = b + s·c: BabelStream's mul and triad, one element per
// work-item and loop step in every dtype (s in acc, the result rounded once).
__kernel void scale(__global const real* x, __global real* y, ulong n, acc s) {
    FOR_EACH(i, n) STORE(y, i, s * LOAD(x, i));
}

__kernel void triad(__global const real* b, __global const real* c, __global real* a, ulong n, acc s) {
    FOR_EACH(i, n) STORE(a, i, LOAD(b, i) + s * LOAD(c, i));
}

// PyTorch's Adam (torch.optim.Adam, single-tensor form), see Device::k_adam_step.
// m and v are stored rounded to real and p once, from acc.
__kernel void adam_step(__global real* p, __global const real* grad, __global real* m, __global real* v, ulong n,
                        acc beta1, acc beta2, acc eps, acc step_size, acc bc2_sqrt) {
    FOR_EACH(i, n) {
        const acc g = LOAD(grad, i);
        const acc mi = beta1 * LOAD(m, i) + ((acc)1 - beta1) * g;
        const acc vi = beta2 * LOAD(v, i) + ((acc)1 - beta2) * g * g;
        STORE(m, i, mi);
        STORE(v, i, vi);
        STORE(p, i, LOAD(p, i) - step_size * mi / (sqrt(vi) / bc2_sqrt + eps));
    }
}

// Peak-FMA probe (clpeak-style): 8 independent accumulators per work-item,
// `iterations` rounds of a = a*0.9999 + 1e-4 each; 16*iterations FLOPs per element. In the
// program's compute type `acc`: float (f32, f16, bf16 programs) or double (f64).
__kernel void fma_throughput(__global acc* y, ulong n, ulong iterations) {
    FOR_EACH(i, n) {
        acc a[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) a[j] = (acc)((float)i * 1e-9f + (float)j);
        for (ulong it = 0; it < iterations; ++it) {
#pragma unroll
            for (int j = 0; j < 8; ++j) a[j] = a[j] * (acc)0.9999f + (acc)1e-4f;
        }
        acc s = 0;
#pragma unroll
        for (int j = 0; j < 8; ++j) s += a[j];
        y[i] = s;
    }
}

// y[r, c] = act(y[r, c] + bias[c]) for y[rows, cols] (read_y 0: y is not read,
// so act(bias[c]) or act(0)): the vendor path's epilogue after the GEMM, and
// its K = 0 result. bias is ignored when has_bias is 0.
// In the float32 program (EW_VW > 1): vectors of EW_VW columns of a row, one
// division per vector to find its row, then the cols % EW_VW last columns of
// every row one element at a time.
__kernel void bias_activation(__global const real* bias, __global real* y, int has_bias, int read_y, int act,
                              ulong rows, ulong cols) {
#if EW_VW > 1
    const ulong nv = cols / EW_VW, tail = cols - nv * EW_VW;  // full vectors and leftover columns per row
    FOR_EACH(i, rows * nv) {
        const ulong r = i / nv, v = i - r * nv;
        __global float* row = y + r * cols;
        floatv x = read_y ? EW_LOAD(row, v) : (floatv)0.0f;
        if (has_bias) x += EW_LOAD(bias, v);
        EW_STORE(activatev(x, act), row, v);
    }
    FOR_EACH(i, rows * tail) {
        const ulong r = i / tail, c = nv * EW_VW + (i - r * tail);
        const float x = (read_y ? y[r * cols + c] : 0.0f) + (has_bias ? bias[c] : 0.0f);
        y[r * cols + c] = activate(x, act);
    }
#else
    FOR_EACH(i, rows * cols) {
        const acc v = (read_y ? LOAD(y, i) : (acc)0) + (has_bias ? LOAD(bias, i % cols) : (acc)0);
        STORE(y, i, activate(v, act));
    }
#endif
}

// Does nothing: accel-bench times it as the bare cost of one launch.
__kernel void empty(void) {}
