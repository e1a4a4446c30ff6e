// Helpers shared by every kernel of the OpenCL backend. The program is built
// from common.cl, elementwise.cl, reduce.cl and matmul.cl concatenated in that
// order, so the later files may use what is defined here.

// ---- element types ----------------------------------------------------------
// One program per accel dtype is built from these sources; the build option
// that names the dtype selects the element macros below (none: f32):
//   real          storage type of tensor elements (kernel pointer arguments)
//   acc           compute type: elements are loaded into it, all arithmetic
//                 and accumulation runs in it, op scalars are passed in it
//   LOAD(p, i)    element p[i] widened exactly to acc
//   LOAD4(p, i)   the 4 elements p[i..i+3] as an acc4 (element alignment only)
//   STORE(p, i, v) p[i] = v rounded once to real, to nearest, ties to even
// ACCEL_REAL_F64   real = acc = double (needs cl_khr_fp64).
// ACCEL_REAL_F16   real = half (IEEE binary16), acc = float: half is used only
//                  as a pointer type, through vload_half / vstore_half_rte,
//                  which are core OpenCL C (no cl_khr_fp16 needed).
// ACCEL_REAL_BF16  real = ushort holding the upper 16 bits of a binary32,
//                  acc = float.
#if defined(ACCEL_REAL_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define real double
#define acc double
#define LOAD(p, i) ((p)[i])
#define LOAD4(p, i) vload4(0, (p) + (i))
#define STORE(p, i, v) ((p)[i] = (v))
#elif defined(ACCEL_REAL_F16)
#define real half
#define acc float
#define LOAD(p, i) vload_half((i), (p))
#define LOAD4(p, i) vload_half4(0, (p) + (i))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#elif defined(ACCEL_REAL_BF16)
#define real ushort
#define acc float
#define LOAD(p, i) as_float((uint)(p)[i] << 16)
#define LOAD4(p, i) as_float4(convert_uint4(vload4(0, (p) + (i))) << 16)
#define STORE(p, i, v) ((p)[i] = bf16_round(v))
// v rounded to the nearest bfloat16, ties to even: adding 0x7FFF plus the
// lowest kept bit carries into bit 16 exactly when the dropped half is above
// the halfway point, or at it with the kept part odd; a carry out of the
// fraction raises the exponent (the largest finite values round to Inf, Inf
// stays Inf). NaN gives the quiet NaN 0x7FC0 with v's sign: the carry could
// otherwise turn a NaN whose payload lies in the dropped bits into Inf.
ushort bf16_round(float v) {
    const uint u = as_uint(v);
    if (isnan(v)) return (ushort)(((u >> 16) & 0x8000u) | 0x7FC0u);
    return (ushort)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
#else
#define real float
#define acc float
#define LOAD(p, i) ((p)[i])
#define LOAD4(p, i) vload4(0, (p) + (i))
#define STORE(p, i, v) ((p)[i] = (v))
#endif

// Elementwise kernels use grid-stride loops over a flattened 1-, 2- or 3-D
// NDRange, so every launch geometry (any grid, any block) is correct. Indices
// are ulong: sizes may exceed 2^32 elements.
ulong flat_id(void) {
    return get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * (ulong)get_global_id(2));
}

ulong flat_size(void) { return (ulong)get_global_size(0) * get_global_size(1) * get_global_size(2); }

#define FOR_EACH(i, n) for (ulong i = flat_id(), stride_ = flat_size(); i < (n); i += stride_)

// exp(y)·2^64 for every lane y <= 0 (or NaN) of F (float or a float vector;
// U the unsigned type of its width, AS_U / AS_F its bit casts), as the
// product *MANT · return value of two normal floats, branch-free: y = k·ln2
// + r with k = round(y·log2(e)) and |r| <= ln2/2 (ln2 in two parts, so r is
// exact up to the last fma); exp(r) by the degree-5 polynomial 1 + r +
// r²·q(r), q the cubic of least largest relative error on the interval
// (1.06e-7); times 2^(k+64), built in the exponent field. k comes from
// adding 1.5·2^23, which rounds y·log2(e) to an integer in the low mantissa
// bits. Lanes below -130 are taken at -130 (k >= -188, so 2^(k+64) stays
// normal; exp is far below the smallest subnormal there); NaN passes. The
// CPU backends' cpu::exp_nonpositive_2p64 and cpu::sigmoid1
// (backends/common/cpu_elementwise.hpp) are the same algorithm, where the
// choices are explained. Cheaper than the library's vector exp on CPUs
// (fewer operations, no special cases), for sigmoid the difference between
// compute-bound and memory-bound; and not the library's exp, whose
// subnormal results a device may flush.
//
// The logistic from it, stable: with E = exp(-|x|)·2^64 (never overflows),
// 2^64 / (2^64 + E) for x >= 0 and E / (2^64 + E) below: one division, which
// rounds once, subnormal results included; at most 2.7e-7 relative error
// or half a subnormal; NaN passes (every step keeps it). Only correctly
// rounded operations (fma, +, *, /, selects, bit operations; the
// denominator an explicit fma, so nothing is left to contract), so a scalar
// and every lane of a vector give the same bits: an element's result does
// not depend on its position or the tensor's length (vector body or tail).
#define DEFINE_SIGMOID_F32(EXP, SIGMOID, F, U, AS_U, AS_F)                                       \
    F EXP(F y, F* mant) {                                                                        \
        y = select(y, (F)-130.0f, isless(y, (F)-130.0f));                                        \
        const F kf = fma(y, (F)1.44269504088896341f, (F)12582912.0f); /* 1.5·2^23 + k */         \
        const F k = kf - (F)12582912.0f;                                                         \
        F r = fma(k, (F)-0.693145751953125f, y);  /* ln2, high part: k·it is exact */            \
        r = fma(k, (F)-1.428606765330187045e-06f, r); /* ln2, low part */                        \
        F p = (F)0x1.106284p-7f; /* q's coefficients, r^3 down to r^0 */                         \
        p = fma(p, r, (F)0x1.5729fp-5f);                                                         \
        p = fma(p, r, (F)0x1.5557aep-3f);                                                        \
        p = fma(p, r, (F)0x1.fffdfcp-2f);                                                        \
        p = fma(p, r, (F)1.0f);                                                                  \
        p = fma(p, r, (F)1.0f);                                                                  \
        *mant = p;                                                                               \
        /* 2^(k+64), k+64 in [-124, 64]: normal; unsigned: a NaN lane wraps */                  \
        return AS_F((AS_U(kf) - (U)0x4B400000u + (U)(127u + 64u)) << 23);                        \
    }                                                                                            \
    F SIGMOID(F x) {                                                                             \
        F mant;                                                                                  \
        const F scale = EXP(AS_F(AS_U(x) | (U)0x80000000u), &mant); /* -|x| */                   \
        const F big = (F)0x1p64f;                                                                \
        return select(mant * scale, big, isgreaterequal(x, (F)0.0f)) / fma(mant, scale, big);    \
    }

DEFINE_SIGMOID_F32(exp_nonpositive1, sigmoid_f32, float, uint, as_uint, as_float)

// activate() on the lanes of the float vector type F: relu as a select
// (NaN kept, as relu1), sigmoid as SIGMOID (DEFINE_SIGMOID_F32 on F), lane
// for lane the same bits as the scalar ones; gelu and gelu_tanh as gelu1 and
// gelu_tanh1 below, on the vector (the library's erfc on F).
#define DEFINE_ACTIVATE_F32(NAME, F, SIGMOID)                                                      \
    F NAME##_gelu(F v) {                                                                           \
        const F p = 0.5f * erfc(-v * 0.70710678118654752440f);                                     \
        return select(v * p, copysign((F)0.0f, v), p == (F)0.0f);                                  \
    }                                                                                              \
    F NAME##_gelu_tanh(F v) {                                                                      \
        const F s = SIGMOID((2 * 0.79788456080286535588f) * v * (1.0f + 0.044715f * v * v));       \
        return select(v * s, copysign((F)0.0f, v), s == (F)0.0f);                                  \
    }                                                                                              \
    F NAME(F v, int act) {                                                                         \
        if (act == ACCEL_ACTIVATION_SIGMOID) return SIGMOID(v);                                    \
        if (act == ACCEL_ACTIVATION_RELU) return select(v, (F)0.0f, v <= (F)0.0f);                 \
        if (act == ACCEL_ACTIVATION_GELU) return NAME##_gelu(v);                                   \
        if (act == ACCEL_ACTIVATION_GELU_TANH) return NAME##_gelu_tanh(v);                         \
        return v;                                                                                  \
    }

// Stable logistic of acc: the float one above; f64 with the library's exp
// of -|x| (never overflows; its subnormal range starts at -708).
acc sigmoid1(acc x) {
#if defined(ACCEL_REAL_F64)
    const acc e = exp(-fabs(x));
    const acc r = (acc)1 / ((acc)1 + e);
    return x >= (acc)0 ? r : e * r;
#else
    return sigmoid_f32(x);
#endif
}

// max(x, 0) that keeps NaN (as PyTorch): NaN <= 0 is false, so NaN passes.
acc relu1(acc x) { return x <= (acc)0 ? (acc)0 : x; }

// GELU x·Φ(x), Φ(x) = erfc(-x/√2)/2 (accel/elementwise_math.hpp: full
// relative accuracy in the negative tail; -0 at -Inf, not -Inf·0). OpenCL's
// erfc: 16 ulp in float and double.
acc gelu1(acc x) {
    const acc p = (acc)0.5 * erfc(-x * (acc)0.70710678118654752440);
    return p == (acc)0 ? copysign((acc)0, x) : x * p;
}

// 2u = 2√(2/π)·x·(1 + 0.044715·x²), ±Inf once x³ overflows (σ saturates).
acc gelu_tanh_arg2(acc x) { return (acc)(2 * 0.79788456080286535588) * x * ((acc)1 + (acc)0.044715 * x * x); }

// The tanh form x·(1 + tanh u)/2 as x·σ(2u), the same value; -0 at -Inf.
acc gelu_tanh1(acc x) {
    const acc s = sigmoid1(gelu_tanh_arg2(x));
    return s == (acc)0 ? copysign((acc)0, x) : x * s;
}

// dy·(Φ(x) + x·φ(x)); x·φ(x) is 0 where φ underflows (x = ±Inf included).
acc gelu_backward1(acc dy, acc x) {
    const acc phi = (acc)0.39894228040143267794 * exp((acc)-0.5 * x * x);
    const acc p = (acc)0.5 * erfc(-x * (acc)0.70710678118654752440);
    return dy * (p + (phi == (acc)0 ? (acc)0 : x * phi));
}

// dy·(s + 2x·s·σ(-2u)·u'), s = σ(2u), u' = √(2/π)(1 + 3·0.044715x²): the
// tanh form's derivative; the second term is 0 where s·σ(-2u) underflows.
acc gelu_tanh_backward1(acc dy, acc x) {
    const acc u2 = gelu_tanh_arg2(x);
    const acc s = sigmoid1(u2), ss = s * sigmoid1(-u2);
    const acc du = (acc)0.79788456080286535588 * ((acc)1 + (acc)(3 * 0.044715) * x * x);
    return dy * (s + (ss == (acc)0 ? (acc)0 : (acc)2 * ss * x * du));
}

// Activation codes of `dense`: accel::Activation's (ACCEL_ACTIVATION_*,
// accel/activation_codes.h, the first source of every program).
acc activate(acc v, int act) {
    if (act == ACCEL_ACTIVATION_SIGMOID) return sigmoid1(v);
    if (act == ACCEL_ACTIVATION_RELU) return relu1(v);
    if (act == ACCEL_ACTIVATION_GELU) return gelu1(v);
    if (act == ACCEL_ACTIVATION_GELU_TANH) return gelu_tanh1(v);
    return v;
}
