// Shared by every shader: the element type of the module's dtype (one of
// ACCEL_F32, ACCEL_F64, ACCEL_F16, ACCEL_BF16, given by glslc -D), LOAD and
// STORE, the flattened grid-stride loop, and the math of the elementwise ops.
//
// Storage and computation (accel/dtype.hpp):
//  - f32: `float` elements, computed in float.
//  - f64: `double` elements, computed in double (shaderFloat64; the exp and
//    the subnormal results below use 64-bit integers, shaderInt64).
//  - f16 and bf16: 16-bit words (storageBuffer16BitAccess), widened to float
//    exactly and rounded back once, to nearest with ties to even, by integer
//    code here, so neither the driver's conversion rounding mode nor shaderFloat16
//    matters.
// Nothing here relies on the device keeping float subnormals (CPU drivers
// flush them): exp and the logistic build subnormal results from integer bits.
#extension GL_EXT_control_flow_attributes : enable

// Work-group size from specialization constants 0, 1, 2: the launch's block.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

#if defined(ACCEL_F64)
#extension GL_ARB_gpu_shader_int64 : require
#define real double
#define acc double
#define LOAD(buf, i) (buf[i])
#define STORE(buf, i, v) buf[i] = (v)
#elif defined(ACCEL_F16) || defined(ACCEL_BF16)
#extension GL_EXT_shader_16bit_storage : require
#define real uint16_t
#define acc float
#elif defined(ACCEL_F32)
#define real float
#define acc float
#define LOAD(buf, i) (buf[i])
#define STORE(buf, i, v) buf[i] = (v)
#else
#error "build with one of -DACCEL_F32, -DACCEL_F64, -DACCEL_F16, -DACCEL_BF16"
#endif

// ---- 16-bit formats -------------------------------------------------------

// binary16 bits -> float, exact (subnormals become normal floats).
float half_to_float(uint h) {
    const uint sign = (h & 0x8000u) << 16;
    const uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0u) {
        const float v = float(m) * 5.9604644775390625e-8;  // m * 2^-24, exact
        return sign != 0u ? -v : v;
    }
    if (e == 31u) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
    return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}

// float -> binary16 bits, to nearest, ties to even; overflow gives Inf, NaN
// stays a (quiet) NaN. Works on the bits, so float subnormal inputs (all
// below half of f16's smallest subnormal) give a signed zero.
uint float_to_half(float f) {
    const uint x = floatBitsToUint(f);
    const uint sign = (x >> 16) & 0x8000u;
    const uint ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return sign | 0x7e00u | ((ax >> 13) & 0x1ffu);  // NaN
    if (ax >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520: rounds to Inf
    if (ax >= 0x38800000u) {  // >= 2^-14: a normal half
        const uint r = ax - 0x38000000u;  // exponent rebiased from 127 to 15
        return sign | ((r + 0x0fffu + ((r >> 13) & 1u)) >> 13);
    }
    const uint e = ax >> 23;
    if (e < 102u) return sign;  // below 2^-25: rounds to zero
    // A half subnormal: the value in units of 2^-24 is m * 2^(e - 126).
    const uint m = (ax & 0x7fffffu) | 0x800000u;
    const uint shift = 126u - e;  // 14 .. 24
    uint q = m >> shift;
    const uint rem = m & ((1u << shift) - 1u), half_unit = 1u << (shift - 1u);
    if (rem > half_unit || (rem == half_unit && (q & 1u) != 0u)) q += 1u;
    return sign | q;
}

// bfloat16 bits -> float, exact.
float bf16_to_float(uint b) { return uintBitsToFloat(b << 16); }

// float -> bfloat16 bits, to nearest, ties to even; NaN stays a quiet NaN.
uint float_to_bf16(float f) {
    const uint x = floatBitsToUint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
    return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

#if defined(ACCEL_F16)
#define LOAD(buf, i) half_to_float(uint(buf[i]))
#define STORE(buf, i, v) buf[i] = uint16_t(float_to_half(v))
#elif defined(ACCEL_BF16)
#define LOAD(buf, i) bf16_to_float(uint(buf[i]))
#define STORE(buf, i, v) buf[i] = uint16_t(float_to_bf16(v))
#endif

// ---- the grid-stride loop ---------------------------------------------------

// The invocation's index in the flattened grid (x fastest), and the grid's
// size. The host keeps the grid's invocations below 2^32.
uint flat_size() {
    const uvec3 s = gl_NumWorkGroups * gl_WorkGroupSize;
    return s.x * s.y * s.z;
}
uint flat_id() {
    const uvec3 s = gl_NumWorkGroups * gl_WorkGroupSize;
    const uvec3 g = gl_GlobalInvocationID;
    return g.x + s.x * (g.y + s.y * g.z);
}
// for (i = flat_id(); i < n; i += flat_size()) over the elements [base, base +
// count) of the dispatch, without the wrap of i + stride past 2^32 (which
// would revisit elements). The host splits a launch into dispatches of at
// most 32768 elements per invocation (llvmpipe ends any invocation after
// 65535 loop iterations), each given its base and count.
#define FOR_EACH(i, base, count)                                                         \
    for (uint i = (base) + flat_id(), stride_ = flat_size(), end_ = (base) + (count);     \
         i < end_; i = (end_ - i <= stride_) ? end_ : i + stride_)

// ---- exp, log1p and the logistic --------------------------------------------
// exp(y) for y <= 0 as mant * 2^k: k = round(y / ln2), r = y - k ln2hi
// (exact: ln2hi, ln2's high part, has few bits), mant = exp(r) by its Taylor
// polynomial (|r| <= ln2 / 2; degree 9 in float, 14 in double: truncation
// below a tenth of an ulp) times exp(-k ln2lo) as a separate factor. Not the
// textbook r = (y - k ln2hi) - k ln2lo: a driver may reassociate that into
// y - k (ln2hi + ln2lo) even where it is `precise` (lavapipe did: 2e-6
// relative error at y = -88); a product of two factors it cannot merge. Only +, *, fma and integer operations: no driver exp,
// whose error bound is loose and whose subnormal results may be flushed.

bool is_nan_f(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }

// y in [-130, 0] (callers clamp): mant in [0.7, 1.42], k in [-188, 0].
float exp_parts_f(float y, out int k) {
    const float kf = floor(y * 1.44269504088896341 + 0.5);
    const float r = fma(kf, -0.693145751953125, y);  // exact: k * (ln2's high part) has 24 bits
    float p = 2.75573192239858883e-06;
    p = fma(p, r, 2.48015873015873016e-05);
    p = fma(p, r, 1.98412698412698413e-04);
    p = fma(p, r, 1.38888888888888894e-03);
    p = fma(p, r, 8.33333333333333322e-03);
    p = fma(p, r, 4.16666666666666644e-02);
    p = fma(p, r, 1.66666666666666657e-01);
    p = fma(p, r, 0.5);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    // exp(-k * (ln2's low part)) = 1 + t + t^2/2 (|t| < 3e-4), as a factor.
    const float t = kf * -1.428606765330187045e-06;
    k = int(kf);
    return p * fma(t, fma(t, 0.5, 1.0), 1.0);
}

// 2^k for k in [-126, 127].
float pow2_f(int k) { return uintBitsToFloat(uint(k + 127) << 23); }

// v * 2^k for a positive normal v and k <= 0, rounded once to nearest even,
// subnormal results built from the bits.
float scale_down_f(float v, int k) {
    const uint b = floatBitsToUint(v);
    const int be = int(b >> 23) + k;
    if (be >= 1) return uintBitsToFloat(b - (uint(-k) << 23));
    const uint shift = uint(1 - be);
    if (shift > 24u) return 0.0;
    const uint m = (b & 0x7fffffu) | 0x800000u;
    uint q = m >> shift;
    const uint rem = m & ((1u << shift) - 1u), half_unit = 1u << (shift - 1u);
    if (rem > half_unit || (rem == half_unit && (q & 1u) != 0u)) q += 1u;
    return uintBitsToFloat(q);
}

// exp(y) for y <= 0 where only normal results matter (0 below 2^-126).
float exp_nonpositive_f(float y) {
    int k;
    const float mant = exp_parts_f(max(y, -130.0), k);
    return k < -126 ? 0.0 : mant * pow2_f(k);
}

// log(1 + u) for u in [0, 1]: 2 atanh(s), s = u / (2 + u) <= 1/3, by its series.
float log1p_unit_f(float u) {
    const float s = u / (2.0 + u), s2 = s * s;
    float sum = 1.0 / 17.0;
    [[unroll]] for (int j = 7; j >= 0; --j) sum = fma(sum, s2, 1.0 / float(2 * j + 1));
    return 2.0 * s * sum;
}

// The logistic 1 / (1 + exp(-x)), stable: exp of -|x| only; for x < 0
// E / (1 + E), which is E itself (built from the bits, subnormal or not) once
// E < 2^-100. NaN passes.
float sigmoid_f(float x) {
    if (is_nan_f(x)) return x;
    int k;
    const float mant = exp_parts_f(max(-abs(x), -130.0), k);
    if (x >= 0.0) return 1.0 / (1.0 + (k < -126 ? 0.0 : mant * pow2_f(k)));
    if (k >= -100) {
        const float e = mant * pow2_f(k);
        return e / (1.0 + e);
    }
    return scale_down_f(mant, k);
}

// max(z, 0) - z t + log(1 + exp(-|z|)): binary cross-entropy on logits, stable.
float bce_f(float z, float t) { return max(z, 0.0) - z * t + log1p_unit_f(exp_nonpositive_f(-abs(z))); }

#if defined(ACCEL_F64)
bool is_nan_d(double x) { return (doubleBitsToUint64(x) & 0x7fffffffffffffffUL) > 0x7ff0000000000000UL; }

// y in [-760, 0]: mant in [0.7, 1.42], k in [-1097, 0].
double exp_parts_d(double y, out int k) {
    const double kf = floor(y * 1.44269504088896338700LF + 0.5LF);
    const double r = fma(kf, -6.93147180369123816490e-01LF, y);  // exact: the high part ends in 21 zero bits
    double p = 1.14707455977297245e-11LF;
    p = fma(p, r, 1.60590438368216133e-10LF);
    p = fma(p, r, 2.08767569878681002e-09LF);
    p = fma(p, r, 2.50521083854417202e-08LF);
    p = fma(p, r, 2.75573192239858883e-07LF);
    p = fma(p, r, 2.75573192239858925e-06LF);
    p = fma(p, r, 2.48015873015873016e-05LF);
    p = fma(p, r, 1.98412698412698413e-04LF);
    p = fma(p, r, 1.38888888888888894e-03LF);
    p = fma(p, r, 8.33333333333333322e-03LF);
    p = fma(p, r, 4.16666666666666644e-02LF);
    p = fma(p, r, 1.66666666666666657e-01LF);
    p = fma(p, r, 0.5LF);
    p = fma(p, r, 1.0LF);
    p = fma(p, r, 1.0LF);
    const double t = kf * -1.90821492927058770002e-10LF;  // |t| < 3e-7: 1 + t + t^2/2 suffices
    k = int(kf);
    return p * fma(t, fma(t, 0.5LF, 1.0LF), 1.0LF);
}

// 2^k for k in [-1022, 1023].
double pow2_d(int k) { return uint64BitsToDouble(uint64_t(k + 1023) << 52); }

// As scale_down_f, in double.
double scale_down_d(double v, int k) {
    const uint64_t b = doubleBitsToUint64(v);
    const int be = int(b >> 52) + k;
    if (be >= 1) return uint64BitsToDouble(b - (uint64_t(-k) << 52));
    const uint shift = uint(1 - be);
    if (shift > 53u) return 0.0LF;
    const uint64_t m = (b & 0xfffffffffffffUL) | 0x10000000000000UL;
    uint64_t q = m >> shift;
    const uint64_t rem = m & ((uint64_t(1) << shift) - 1UL), half_unit = uint64_t(1) << (shift - 1u);
    if (rem > half_unit || (rem == half_unit && (q & 1UL) != 0UL)) q += 1UL;
    return uint64BitsToDouble(q);
}

double exp_nonpositive_d(double y) {
    int k;
    const double mant = exp_parts_d(max(y, -760.0LF), k);
    return k < -1022 ? 0.0LF : mant * pow2_d(k);
}

double log1p_unit_d(double u) {
    const double s = u / (2.0LF + u), s2 = s * s;
    double sum = 1.0LF / 35.0LF;
    [[unroll]] for (int j = 16; j >= 0; --j) sum = fma(sum, s2, 1.0LF / double(2 * j + 1));
    return 2.0LF * s * sum;
}

double sigmoid_d(double x) {
    if (is_nan_d(x)) return x;
    int k;
    const double mant = exp_parts_d(max(-abs(x), -760.0LF), k);
    if (x >= 0.0LF) return 1.0LF / (1.0LF + (k < -1022 ? 0.0LF : mant * pow2_d(k)));
    if (k >= -1000) {
        const double e = mant * pow2_d(k);
        return e / (1.0LF + e);
    }
    return scale_down_d(mant, k);
}

double bce_d(double z, double t) {
    return max(z, 0.0LF) - z * t + log1p_unit_d(exp_nonpositive_d(-abs(z)));
}
#define sigmoid1 sigmoid_d
#define bce1 bce_d
#else
#define sigmoid1 sigmoid_f
#define bce1 bce_f
#endif

// ---- activations and op scalars ---------------------------------------------

// accel::Activation's codes, as every backend's kernels take them.
#include "accel/activation_codes.h"

// NaN kept, tested on the bits: without SignedZeroInfNanPreserve a compiler
// may fold a comparison's select into max(x, 0), which drops NaN.
#if defined(ACCEL_F64)
#define is_nan_acc is_nan_d
#else
#define is_nan_acc is_nan_f
#endif
acc relu1(acc x) { return (is_nan_acc(x) || x > acc(0)) ? x : acc(0); }

acc activate(acc v, uint act) {
    if (act == uint(ACCEL_ACTIVATION_SIGMOID)) return sigmoid1(v);
    if (act == uint(ACCEL_ACTIVATION_RELU)) return relu1(v);
    return v;
}

// An op scalar as the host pushes it: a double as two words (lo, hi) in the
// f64 modules, a float's bits in one word in the others (SCALAR_WORDS each).
#if defined(ACCEL_F64)
#define SCALAR_WORDS 2
#define SCALAR(w, j) packDouble2x32(uvec2(w[2 * (j)], w[2 * (j) + 1]))
#else
#define SCALAR_WORDS 1
#define SCALAR(w, j) uintBitsToFloat(w[(j)])
#endif
