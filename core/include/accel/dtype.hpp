// accel/dtype.hpp — element data types of tensors.
//
// As PyTorch and cuBLAS define them: f32 (IEEE binary32), f64 (binary64),
// f16 (IEEE binary16: 1 sign, 5 exponent, 10 fraction bits) and bf16
// (bfloat16: the upper 16 bits of a binary32, 8 exponent and 7 fraction
// bits). f16 and bf16 are storage formats: ops convert them to float32,
// compute and accumulate in float32, and round the result once to the
// nearest 16-bit value (ties to even). f64 computes and accumulates in f64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace accel {

/// Element type of a tensor. The numeric values are part of the plugin ABI
/// (KernelArgs::dtype): new types are appended.
enum class DType : std::uint8_t { f32 = 0, f64 = 1, f16 = 2, bf16 = 3 };

/// Every DType, in enum order.
inline constexpr DType kAllDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

/// Number of DType values (the size of per-dtype tables).
inline constexpr std::size_t kDTypeCount = 4;

/// "f32", "f64", "f16" or "bf16". Never throws.
const char* dtype_name(DType t) noexcept;

/// Bytes per element: 4, 8, 2, 2. Never throws.
std::size_t dtype_size(DType t) noexcept;

/// Unit roundoff u = 2^-p of the format (p significant bits including the
/// implicit one): f32 2^-24, f64 2^-53, f16 2^-11, bf16 2^-8. The relative
/// error of one rounding to nearest is at most u (Higham, Accuracy and
/// Stability of Numerical Algorithms, 2nd ed., §2.1).
double unit_roundoff(DType t) noexcept;

/// Parses "f32", "f64", "f16", "bf16" (also "float32", "float64",
/// "float16"/"half", "bfloat16"; any case, blanks around ignored). Throws
/// InvalidArgument quoting the text and listing the accepted names.
DType parse_dtype(const std::string& text);

/// A binary16 value as stored on a device (bits only; convert with
/// to_float / from_float). Plain 16-bit layout, usable in host vectors that
/// are uploaded as they are.
struct Half {
    std::uint16_t bits = 0;
};

/// A bfloat16 value as stored on a device (bits only). See Half.
struct BFloat16 {
    std::uint16_t bits = 0;
};

/// Exact widening conversions to float32.
float to_float(Half h) noexcept;
float to_float(BFloat16 b) noexcept;
/// Rounds a float32 to the nearest f16 / bf16 value, ties to even (as CUDA's
/// __float2half_rn and __float2bfloat16_rn); overflow gives ±Inf, NaN stays
/// NaN.
Half to_half(float f) noexcept;
BFloat16 to_bfloat16(float f) noexcept;

/// Converts `count` elements of dtype `from` at `src` into dtype `to` at
/// `dst` (host memory; the two ranges must not overlap). Each value is
/// rounded once to nearest, ties to even (f64 → f16/bf16 too: through f32
/// rounded to odd, accel/round_to_odd.hpp). Never throws.
void convert_elements(const void* src, DType from, void* dst, DType to, std::size_t count) noexcept;

}  // namespace accel
