// Shared by every shader: the element type of the module's dtype (one of
// ACCEL_F32, ACCEL_F64, ACCEL_F16, ACCEL_BF16, given by glslc -D), `real`
// (as stored), `acc` (as computed), their 2- and 4-element vectors (realv2,
// realv4, accv4), TO_ACC (a stored value widened to acc), LOAD and STORE, the flattened grid-stride loop, and the math of the elementwise ops.
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
#define realv2 dvec2
#define realv4 dvec4
#define accv4 dvec4
#define TO_ACC(x) (x)
#define LOAD(buf, i) (buf[i])
#define STORE(buf, i, v) buf[i] = (v)
#elif defined(ACCEL_F16) || defined(ACCEL_BF16)
#extension GL_EXT_shader_16bit_storage : require
#define real uint16_t
#define acc float
#define realv2 u16vec2
#define realv4 u16vec4
#define accv4 vec4
#elif defined(ACCEL_F32)
#define real float
#define acc float
#define realv2 vec2
#define realv4 vec4
#define accv4 vec4
#define TO_ACC(x) (x)
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
#define TO_ACC(x) half_to_float(uint(x))
#define LOAD(buf, i) half_to_float(uint(buf[i]))
#define STORE(buf, i, v) buf[i] = uint16_t(float_to_half(v))
#elif defined(ACCEL_BF16)
#define TO_ACC(x) bf16_to_float(uint(x))
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

// ---- erfc and GELU ----------------------------------------------------------
// GLSL has no erf. erfc(t) = m·2^k, |t| < 0.5: 1 ∓ erf(|t|) by erf's Taylor
// series (Abramowitz & Stegun 7.1.5; 14 terms: below 1e-17 at 0.5). |t| >=
// 0.5: erfc(a) = exp(-a²)·erfcx(a), a = |t|, with a² = p + lo exactly (fma),
// exp(-a²) = exp(-p)·(1 - lo), and erfcx (the scaled erfc) from its ODE
// erfcx' = 2a·erfcx - 2/√π: Taylor at the nearest of a0 = 0.75, 1.25, ...,
// 4.75 (|h| <= 0.25; coefficients by (n+1)c[n+1] = 2a0·c[n] + 2c[n-1], c[0] =
// erfcx(a0), c[1] also less 2/√π; 16 terms: 1.4e-15 relative), beyond 5 its
// continued fraction (A&S 7.1.14; 16 levels: 2e-16). t <= -0.5: 2 - erfc(a).
// The erfcx(a0) values were computed to 40 digits (series and continued
// fraction in decimal arithmetic).
// x/2 in the float type T (U: the unsigned integer of its width, TO_U and
// FROM_U its bit casts, ONE: exponent 1's bit, SIGN: the sign bit), rounded
// once to nearest even from the bits, subnormal results too: below exponent
// 2 the value is the bits' integer times the smallest subnormal. is_tiny(x):
// |x| < 2^-100, where x·Φ(x) and x·σ(2u) are x/2 to 2^-99.
#define DEFINE_HALF(NAME, T, U, TO_U, FROM_U, ONE, SIGN)                 \
    T NAME(T x) {                                                       \
        const U b = TO_U(x), mag = b & ~(SIGN);                         \
        if (mag >= U(2) * (ONE)) return FROM_U(b - (ONE));              \
        U q = mag >> 1;                                                 \
        if ((mag & U(1)) != U(0) && (q & U(1)) != U(0)) q += U(1);      \
        return FROM_U((b & (SIGN)) | q);                                \
    }
#if defined(ACCEL_F64)
const double ERFCX_AT[9] = double[9](0.5069376502931449LF, 0.3678229164523611LF, 0.2849722347374364LF, 0.23108725873039188LF, 0.1936620962790687LF, 0.16633534842682188LF, 0.14558972127503855LF, 0.12934527478598792LF, 0.11630270721024731LF);
const double INV_SQRT_PI = 0.56418958354775628695LF, INV_SQRT2 = 0.70710678118654752440LF;
const double INV_SQRT_2PI = 0.39894228040143267794LF, SQRT_2_OVER_PI = 0.79788456080286535588LF;
const double GELU_K = 0.044715LF, EXP_FLOOR = -760.0LF;
const int MIN_NORMAL_EXP = -1022;
DEFINE_HALF(half_d, double, uint64_t, doubleBitsToUint64, uint64BitsToDouble, 0x0010000000000000UL,
            0x8000000000000000UL)
bool is_tiny(double x) { return (doubleBitsToUint64(x) & 0x7fffffffffffffffUL) < 0x39b0000000000000UL; }
#define half_acc half_d
#define exp_parts_acc exp_parts_d
#define scale_down_acc scale_down_d
#define exp_nonpositive_acc exp_nonpositive_d
#define pow2_acc pow2_d
#else
const float ERFCX_AT[9] = float[9](0.5069376502931449, 0.3678229164523611, 0.2849722347374364, 0.23108725873039188, 0.1936620962790687, 0.16633534842682188, 0.14558972127503855, 0.12934527478598792, 0.11630270721024731);
const float INV_SQRT_PI = 0.56418958354775628695, INV_SQRT2 = 0.70710678118654752440;
const float INV_SQRT_2PI = 0.39894228040143267794, SQRT_2_OVER_PI = 0.79788456080286535588;
const float GELU_K = 0.044715, EXP_FLOOR = -130.0;
const int MIN_NORMAL_EXP = -126;
DEFINE_HALF(half_f, float, uint, floatBitsToUint, uintBitsToFloat, 0x00800000u, 0x80000000u)
bool is_tiny(float x) { return (floatBitsToUint(x) & 0x7fffffffu) < 0x0d800000u; }
#define half_acc half_f
#define exp_parts_acc exp_parts_f
#define scale_down_acc scale_down_f
#define exp_nonpositive_acc exp_nonpositive_f
#define pow2_acc pow2_f
#endif

// erfcx(a) for a >= 0.5 (see above).
acc erfcx_from_half(acc a) {
    if (a >= acc(5)) {
        acc f = a;
        [[unroll]] for (int j = 16; j >= 1; --j) f = a + acc(0.5) * acc(j) / f;
        return INV_SQRT_PI / f;
    }
    const int i = min(int((a - acc(0.5)) * acc(2)), 8);
    const acc a0 = acc(0.75) + acc(0.5) * acc(i), h = a - a0;
    acc prev = acc(0), c = ERFCX_AT[i], sum = c, hn = acc(1);
    [[unroll]] for (int n = 0; n < 16; ++n) {
        acc next = (acc(2) * a0 * c + acc(2) * prev) / acc(n + 1);
        if (n == 0) next -= acc(2) * INV_SQRT_PI;
        hn *= h;
        sum = fma(next, hn, sum);
        prev = c;
        c = next;
    }
    return sum;
}

// erfc(t) = m·2^k (m positive and normal, or 0 where erfc is far below the
// smallest subnormal; k <= 0); NaN gives NaN.
acc erfc_parts(acc t, out int k) {
    k = 0;
    const acc a = abs(t);
    if (!(a >= acc(0.5))) {  // NaN too
        const acc a2 = a * a;
        acc term = a, s = a;
        [[unroll]] for (int n = 1; n <= 14; ++n) {
            term *= -a2 / acc(n);
            s += term / acc(2 * n + 1);
        }
        const acc e = acc(2) * INV_SQRT_PI * s;
        return t < acc(0) ? acc(1) + e : acc(1) - e;
    }
    const acc p = a * a, lo = a < acc(30) ? fma(a, a, -p) : acc(0);  // erfc(30) is 0 in double; Inf·Inf - Inf is NaN
    int ke;
    const acc m = exp_parts_acc(max(-p, EXP_FLOOR), ke) * (acc(1) - lo) * erfcx_from_half(a);
    if (t > acc(0)) {
        k = ke;
        return m;
    }
    return acc(2) - scale_down_acc(m, ke);
}

// erfc(t), subnormal results built from the bits.
acc erfc1(acc t) {
    int k;
    const acc m = erfc_parts(t, k);
    return m == acc(0) ? m : scale_down_acc(m, k);
}

bool is_inf_acc(acc x) { return !is_nan_acc(x) && is_nan_acc(x - x); }

// w·2^k for k <= 0, rounded once, subnormal results built from the bits
// (a driver that flushes subnormals would lose GELU's negative tail);
// 0 and NaN pass.
acc times_pow2(acc w, int k) {
    if (w == acc(0) || is_nan_acc(w)) return w;
    const acc r = scale_down_acc(abs(w), k);
    return w < acc(0) ? -r : r;
}

// σ(v) = m·2^k for v <= -20 (EXP_FLOOR < v): m = exp's mantissa · q, q =
// 1/(1 + e^v) = σ(-v).
acc logistic_tail_parts(acc v, out int k, out acc q) {
    const acc mant = exp_parts_acc(v, k);
    q = acc(1) / (acc(1) + (k < MIN_NORMAL_EXP ? acc(0) : mant * pow2_acc(k)));
    return mant * q;
}

// GELU x·Φ(x), Φ(x) = erfc(-x/√2)/2 (accel/elementwise_math.hpp): full
// relative accuracy in the negative tail, subnormal results included;
// gelu(+Inf) = +Inf, gelu(-Inf) = -0 (the limit, not -Inf·0); ±0 kept.
acc gelu1(acc x) {
    if (is_nan_acc(x)) return x;
    if (is_tiny(x)) return half_acc(x);  // ±0 and the subnormals too, from the bits
    if (is_inf_acc(x)) return x > acc(0) ? x : -acc(0);
    int k;
    const acc m = erfc_parts(-x * INV_SQRT2, k);
    return times_pow2(acc(0.5) * x * m, k);
}

// 2u = 2√(2/π)·x·(1 + 0.044715·x²), ±Inf once x³ overflows (σ saturates).
acc gelu_tanh_arg2(acc x) { return acc(2) * SQRT_2_OVER_PI * x * (acc(1) + GELU_K * x * x); }

// The tanh form x·(1 + tanh u)/2 as x·σ(2u), the same value; 2u <= -20:
// x·σ(2u) from exp's parts (subnormal results too); -0 at -Inf.
acc gelu_tanh1(acc x) {
    if (is_tiny(x)) return half_acc(x);  // ±0 and the subnormals too, from the bits
    const acc u2 = gelu_tanh_arg2(x);
    if (!(u2 < acc(-20))) return x * sigmoid1(u2);  // NaN too
    if (!(u2 > EXP_FLOOR)) return -acc(0);          // below the smallest subnormal; x = -Inf
    int k;
    acc q;
    const acc m = logistic_tail_parts(u2, k, q);
    return times_pow2(x * m, k);
}

// dy·(Φ(x) + x·φ(x)), φ(x) = exp(-x²/2)/√(2π). x < -1: both terms are
// tiny, with nearly the same exponent (erfc(t) ~ exp(-t²)/(t√π), t² =
// x²/2), so the sum is taken from their parts and scaled once.
acc gelu_backward1(acc dy, acc x) {
    if (!(x < acc(-1))) {  // NaN too
        const acc phi = INV_SQRT_2PI * exp_nonpositive_acc(max(acc(-0.5) * x * x, EXP_FLOOR));
        const acc cdf = acc(0.5) * erfc1(-x * INV_SQRT2);
        return dy * (cdf + (phi == acc(0) ? acc(0) : x * phi));
    }
    if (is_inf_acc(x)) return dy * acc(0);
    int ke, kp;
    const acc me = erfc_parts(-x * INV_SQRT2, ke);
    const acc mp = exp_parts_acc(max(acc(-0.5) * x * x, EXP_FLOOR), kp);
    return times_pow2(dy * (acc(0.5) * me * pow2_acc(ke - kp) + x * INV_SQRT_2PI * mp), kp);
}

// dy·(s + 2x·s·σ(-2u)·u'), s = σ(2u), u' = √(2/π)(1 + 3·0.044715x²): the
// tanh form's derivative; the second term is 0 where s·σ(-2u) underflows.
// 2u <= -20: s = m·2^k, σ(-2u) = 1/(1 + e^(2u)) = q, the sum scaled once.
acc gelu_tanh_backward1(acc dy, acc x) {
    const acc u2 = gelu_tanh_arg2(x);
    const acc du = SQRT_2_OVER_PI * (acc(1) + acc(3) * GELU_K * x * x);
    if (!(u2 < acc(-20))) {  // NaN too
        const acc s = sigmoid1(u2), ss = s * sigmoid1(-u2);
        return dy * (s + (ss == acc(0) ? acc(0) : acc(2) * ss * x * du));
    }
    if (!(u2 > EXP_FLOOR)) return dy * acc(0);  // below the smallest subnormal; x = -Inf
    int k;
    acc q;
    const acc m = logistic_tail_parts(u2, k, q);
    return times_pow2(dy * m * (acc(1) + acc(2) * x * du * q), k);
}

acc activate(acc v, uint act) {
    if (act == uint(ACCEL_ACTIVATION_SIGMOID)) return sigmoid1(v);
    if (act == uint(ACCEL_ACTIVATION_RELU)) return relu1(v);
    if (act == uint(ACCEL_ACTIVATION_GELU)) return gelu1(v);
    if (act == uint(ACCEL_ACTIVATION_GELU_TANH)) return gelu_tanh1(v);
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
