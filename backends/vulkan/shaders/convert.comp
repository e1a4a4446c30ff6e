#version 450
// y[i] = x[i] rounded to y's dtype (the module's dtype), x of dtype
// CONVERT_FROM_{F32,F64,F16,BF16}: widening is exact; narrowing rounds once
// to nearest, ties to even (from f64 to f16 or bf16 too: through float
// rounded to odd, then to nearest even, which is one correct rounding); NaN
// and ±Inf kept, values beyond the range become ±Inf. All on the bits, so
// neither the driver's conversion rounding nor its subnormal flushing matters.
#if defined(CONVERT_FROM_F64)
#extension GL_ARB_gpu_shader_int64 : require
#endif
#if defined(CONVERT_FROM_F16) || defined(CONVERT_FROM_BF16)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"

#if defined(CONVERT_FROM_F64)
layout(std430, set = 0, binding = 0) readonly buffer X { double x[]; };
#elif defined(CONVERT_FROM_F32)
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
#else
layout(std430, set = 0, binding = 0) readonly buffer X { uint16_t x[]; };
#endif
layout(std430, set = 0, binding = 1) writeonly buffer Y { real y[]; };
layout(push_constant) uniform Push { uint base, count; } pc;

#if defined(CONVERT_FROM_F64)
// The float bits of the double with bits b: to nearest even, or (odd) rounded
// to odd (truncated, with the last bit set when anything was cut off;
// overflow to the largest finite float).
uint double_to_float_bits(uint64_t b, bool odd) {
    const uint sign = uint(b >> 32) & 0x80000000u;
    const uint e = uint(b >> 52) & 0x7ffu;
    const uint64_t mant = b & 0xfffffffffffffUL;
    if (e == 0x7ffu) return sign | (mant != 0UL ? 0x7fc00000u | uint(mant >> 29) : 0x7f800000u);
    if (e == 0u) return sign | ((odd && mant != 0UL) ? 1u : 0u);  // below 2^-1022: 0 (odd: the smallest)
    const int fe = int(e) - 1023 + 127;
    if (fe >= 255) return sign | (odd ? 0x7f7fffffu : 0x7f800000u);
    const uint64_t m = mant | 0x10000000000000UL;
    const uint shift = fe >= 1 ? 29u : uint(29 + 1 - fe);
    uint q;
    uint64_t rem;
    if (shift > 63u) {
        q = 0u;
        rem = m;
    } else {
        q = uint(m >> shift);
        rem = m & ((uint64_t(1) << shift) - 1UL);
    }
    uint bits = fe >= 1 ? ((uint(fe) << 23) | (q & 0x7fffffu)) : q;
    if (odd) {
        if (rem != 0UL) bits |= 1u;
    } else if (shift <= 63u) {
        const uint64_t half_unit = uint64_t(1) << (shift - 1u);
        if (rem > half_unit || (rem == half_unit && (bits & 1u) != 0u)) bits += 1u;
    }
    return sign | bits;
}
#endif

#if defined(ACCEL_F64)
// double(v), exact also for float subnormals (which a driver may flush on
// conversion): scaled from the bits.
double float_to_double(float v) {
    const uint b = floatBitsToUint(v);
    if ((b & 0x7f800000u) != 0u || (b & 0x7fffffu) == 0u) return double(v);
    const double d = double(b & 0x7fffffu) * 1.4012984643248170709e-45LF;  // m * 2^-149
    return (b & 0x80000000u) != 0u ? -d : d;
}
#endif

void main() {
    FOR_EACH(i, pc.base, pc.count) {
#if defined(CONVERT_FROM_F64)
        const uint64_t b = doubleBitsToUint64(x[i]);
#if defined(ACCEL_F64)
        y[i] = x[i];
#elif defined(ACCEL_F32)
        y[i] = uintBitsToFloat(double_to_float_bits(b, false));
#elif defined(ACCEL_F16)
        y[i] = uint16_t(float_to_half(uintBitsToFloat(double_to_float_bits(b, true))));
#else
        y[i] = uint16_t(float_to_bf16(uintBitsToFloat(double_to_float_bits(b, true))));
#endif
#else
#if defined(CONVERT_FROM_F32)
        const float v = x[i];
#elif defined(CONVERT_FROM_F16)
        const float v = half_to_float(uint(x[i]));
#else
        const float v = bf16_to_float(uint(x[i]));
#endif
#if defined(ACCEL_F64)
        y[i] = float_to_double(v);
#elif defined(ACCEL_F32)
        y[i] = v;
#elif defined(ACCEL_F16)
        y[i] = uint16_t(float_to_half(v));
#else
        y[i] = uint16_t(float_to_bf16(v));
#endif
#endif
    }
}
