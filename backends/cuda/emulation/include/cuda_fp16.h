// CUDA's binary16 type and its float conversions (cuda_fp16.h), as far as the
// CUDA backend's kernels use them, for compiling those kernels as host C++ in
// accel's CUDA emulation (test infrastructure; see cuda_runtime_api.h).
//
// The bit conversions are Eigen's (Eigen::half: round to nearest, ties to
// even, in software or with the F16C instructions), the same routine
// libaccel's own f16 conversions (accel/dtype.hpp) use.
#pragma once

#include <Eigen/Core>

#include <accel/round_to_odd.hpp>

/// An IEEE binary16 value as stored (1 sign, 5 exponent, 10 fraction bits):
/// 16 bits, 2-byte aligned, as CUDA's __half. Convert with __half2float and
/// __float2half_rn; no arithmetic is defined on it.
struct alignas(2) __half {
    unsigned short __x;  ///< the bits
};
static_assert(sizeof(__half) == 2, "__half is 16 bits");

/// The exact float32 value of `h` (every binary16 value is a float32 value;
/// ±Inf and NaN stay so). As CUDA's __half2float.
inline float __half2float(__half h) { return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(h.__x)); }

/// `f` rounded to the nearest binary16 value, ties to even: magnitudes from
/// 65520 (halfway past the largest finite value, 65504) give ±Inf, values
/// below 2^-14 become subnormals or ±0, NaN stays NaN. As CUDA's __float2half_rn.
inline __half __float2half_rn(float f) { return __half{Eigen::numext::bit_cast<unsigned short>(Eigen::half(f))}; }

/// `d` rounded once to the nearest binary16 value, ties to even (not through
/// a rounded float: see accel/round_to_odd.hpp); overflow gives ±Inf, NaN stays
/// NaN. As CUDA's __double2half.
inline __half __double2half(double d) {
    return __half{Eigen::numext::bit_cast<unsigned short>(Eigen::half(accel::round_to_odd_float(d)))};
}
