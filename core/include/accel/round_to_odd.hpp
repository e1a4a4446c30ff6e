// accel/round_to_odd.hpp — the first step of every double → f16 / bf16
// conversion in accel (accel::convert_elements, the host and Kokkos convert
// kernels, the CUDA emulation's __double2half / __double2bfloat16).
//
// Rounding a double to float to nearest and then to f16 or bf16 to nearest
// rounds twice: a double just above a halfway point of the 16-bit format can
// land on that halfway point as a float and then tie to the even (lower)
// neighbour. Rounding to float *to odd* instead (Boldo and Melquiond,
// "Emulation of FMA and correctly rounded sums: proved algorithms using
// rounding to odd", IEEE TC 2008) keeps the information the second rounding
// needs whenever the float has at least two more significand bits than the
// target (24 ≥ 11 + 2 and 8 + 2, at every exponent, subnormals included), so
// Eigen's float → f16 / bf16 rounding to nearest even after it gives the
// double rounded once, as CUDA's own conversions do.
// Header-only and pure: thread-safe. Only the standard
// library's float functions are used (std::nextafter, std::ilogb,
// std::scalbn); no bit manipulation.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace accel {

/// `d` rounded to float toward zero, and when that was inexact, to the odd
/// one of the two floats around `d` (the one whose last significand bit is
/// 1). Exact values, ±0, ±Inf and NaN come back as the float they are;
/// magnitudes beyond the float range give ±FLT_MAX (odd), those below half
/// the smallest subnormal ±(smallest subnormal) when not zero.
inline float round_to_odd_float(double d) {
    const float nearest = static_cast<float>(d);
    if (std::isnan(d) || static_cast<double>(nearest) == d) return nearest;
    const float toward_zero = std::fabs(static_cast<double>(nearest)) > std::fabs(d)
                                  ? std::nextafter(nearest, 0.0f)
                                  : nearest;
    const float away = std::nextafter(toward_zero, d > 0 ? std::numeric_limits<float>::infinity()
                                                         : -std::numeric_limits<float>::infinity());
    if (toward_zero == 0.0f) return away;  // 0 is even; the smallest subnormal is odd
    // The significand of toward_zero as an integer: scaled by 2^(23 - exponent),
    // the exponent clamped at float's smallest normal one for subnormals.
    const int exponent = std::max(std::ilogb(toward_zero), std::numeric_limits<float>::min_exponent - 1);
    const double significand = std::scalbn(static_cast<double>(std::fabs(toward_zero)), 23 - exponent);
    return std::fmod(significand, 2.0) != 0.0 ? toward_zero : away;
}

}  // namespace accel
