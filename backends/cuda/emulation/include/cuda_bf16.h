// CUDA's bfloat16 type and its float conversions (cuda_bf16.h), as far as the
// CUDA backend's kernels use them, for compiling those kernels as host C++ in
// accel's CUDA emulation (test infrastructure; see cuda_runtime_api.h).
//
// The bit conversions are Eigen's (Eigen::bfloat16: round to nearest, ties to
// even), the same routine libaccel's own bf16 conversions (accel/dtype.hpp) use.
#pragma once

#include <Eigen/Core>

#include <accel/round_to_odd.hpp>

/// A bfloat16 value as stored (the upper 16 bits of a binary32: 1 sign, 8
/// exponent, 7 fraction bits): 16 bits, 2-byte aligned, as CUDA's
/// __nv_bfloat16. Convert with __bfloat162float and __float2bfloat16_rn; no
/// arithmetic is defined on it.
struct alignas(2) __nv_bfloat16 {
    unsigned short __x;  ///< the bits
};
static_assert(sizeof(__nv_bfloat16) == 2, "__nv_bfloat16 is 16 bits");

/// The exact float32 value of `b` (its bits followed by 16 zero bits). As
/// CUDA's __bfloat162float.
inline float __bfloat162float(__nv_bfloat16 b) {
    return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(b.__x));
}

/// `f` rounded to the nearest bfloat16 value, ties to even: beyond the
/// largest finite value (about 3.39e38) it gives ±Inf, NaN stays NaN (quiet).
/// As CUDA's __float2bfloat16_rn.
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
    return __nv_bfloat16{Eigen::numext::bit_cast<unsigned short>(Eigen::bfloat16(f))};
}

/// `d` rounded once to the nearest bfloat16 value, ties to even (not through
/// a rounded float: see accel/round_to_odd.hpp); beyond the largest finite value
/// it gives ±Inf, NaN stays NaN. As CUDA's __double2bfloat16.
inline __nv_bfloat16 __double2bfloat16(double d) {
    return __nv_bfloat16{
        Eigen::numext::bit_cast<unsigned short>(Eigen::bfloat16(accel::round_to_odd_float(d)))};
}
