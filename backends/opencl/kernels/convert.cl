// convert: y[i] = x[i] rounded to y's dtype, for i < n (grid-stride, any
// launch geometry). The program of dtype T (the output, `real` of common.cl)
// holds one kernel per source dtype S: convert_f32, convert_f16, convert_bf16
// and, where the device has double precision (ACCEL_HAS_FP64), convert_f64.
//
// Rounding (the op table's: to nearest, ties to even; widening is exact; NaN
// and ±Inf are kept; values beyond T's range become ±Inf), once per value:
//  - S = f32, f16, bf16: x is exact in float, so STORE rounds it once.
//  - S = f64, T = f64: a copy; T = f32: the conversion to float, which rounds
//    to nearest even.
//  - S = f64, T = f16 or bf16: rounding to float first and then to 16 bits
//    would round twice (a value just above a 16-bit halfway point can land on
//    it in float, and then go to even, downwards). to_float_odd() instead
//    truncates to float and sets the lowest bit when anything was dropped
//    (round to odd): float keeps at least 2 more bits than f16 or bf16 at
//    every magnitude of their ranges (normal and subnormal), so the one
//    rounding of that float to 16 bits is the rounding of the double.

// x[i] of each source dtype, widened exactly to float.
#define LOAD_F32(p, i) ((p)[i])
#define LOAD_F16(p, i) vload_half((i), (p))
#define LOAD_BF16(p, i) as_float((uint)(p)[i] << 16)

// f32, f16, bf16 sources: exact in acc (float or double), rounded once by STORE.
__kernel void convert_f32(__global const float* x, __global real* y, ulong n) {
    FOR_EACH(i, n) STORE(y, i, (acc)LOAD_F32(x, i));
}

__kernel void convert_f16(__global const half* x, __global real* y, ulong n) {
    FOR_EACH(i, n) STORE(y, i, (acc)LOAD_F16(x, i));
}

__kernel void convert_bf16(__global const ushort* x, __global real* y, ulong n) {
    FOR_EACH(i, n) STORE(y, i, (acc)LOAD_BF16(x, i));
}

#if defined(ACCEL_HAS_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// d rounded to float toward zero, with the lowest bit set when that dropped
// anything (round to odd). NaN and ±Inf pass; a finite d beyond FLT_MAX
// gives FLT_MAX with the odd bit set, which f16 and bf16 round to ±Inf, as
// they round d.
float to_float_odd(double d) {
    const float t = convert_float_rtz(d);
    return (double)t == d || isnan(d) ? t : as_float(as_uint(t) | 1u);
}

__kernel void convert_f64(__global const double* x, __global real* y, ulong n) {
#if defined(ACCEL_REAL_F64)
    FOR_EACH(i, n) y[i] = x[i];
#elif defined(ACCEL_REAL_F16) || defined(ACCEL_REAL_BF16)
    FOR_EACH(i, n) STORE(y, i, to_float_odd(x[i]));
#else
    FOR_EACH(i, n) y[i] = convert_float_rte(x[i]);
#endif
}
#endif
