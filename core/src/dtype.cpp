// Element types: names, sizes and host conversions. The 16-bit conversions
// are Eigen's (Eigen::half, Eigen::bfloat16: round to nearest even, F16C
// instructions where the compiler targets them), not hand-written bit tricks.
#include <accel/dtype.hpp>
#include <accel/round_to_odd.hpp>
#include <accel/error.hpp>

#include <accel_internal/text.hpp>

#include <Eigen/Core>

#include <cstring>

namespace accel {

const char* dtype_name(DType t) noexcept {
    switch (t) {
        case DType::f32: return "f32";
        case DType::f64: return "f64";
        case DType::f16: return "f16";
        case DType::bf16: return "bf16";
    }
    return "?";
}

std::size_t dtype_size(DType t) noexcept {
    switch (t) {
        case DType::f32: return 4;
        case DType::f64: return 8;
        case DType::f16:
        case DType::bf16: return 2;
    }
    return 0;
}

double unit_roundoff(DType t) noexcept {
    switch (t) {
        case DType::f32: return 0x1p-24;
        case DType::f64: return 0x1p-53;
        case DType::f16: return 0x1p-11;
        case DType::bf16: return 0x1p-8;
    }
    return 0;
}

DType parse_dtype(const std::string& text) {
    const std::string t = detail::lower(detail::trim(text));
    if (t == "f32" || t == "float32" || t == "float") return DType::f32;
    if (t == "f64" || t == "float64" || t == "double") return DType::f64;
    if (t == "f16" || t == "float16" || t == "half") return DType::f16;
    if (t == "bf16" || t == "bfloat16") return DType::bf16;
    throw InvalidArgument("dtype '" + detail::echo(text) + "' is not one of f32, f64, f16, bf16");
}

namespace {
template <class E, class S>
E eigen_of(S s) {
    return Eigen::numext::bit_cast<E>(s.bits);
}
}  // namespace

float to_float(Half h) noexcept { return static_cast<float>(eigen_of<Eigen::half>(h)); }
float to_float(BFloat16 b) noexcept { return static_cast<float>(eigen_of<Eigen::bfloat16>(b)); }
Half to_half(float f) noexcept { return Half{Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(f))}; }
BFloat16 to_bfloat16(float f) noexcept {
    return BFloat16{Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(f))};
}

namespace {
// Element i of a host array of dtype t, widened exactly to double.
double load(const void* p, DType t, std::size_t i) noexcept {
    switch (t) {
        case DType::f32: return static_cast<const float*>(p)[i];
        case DType::f64: return static_cast<const double*>(p)[i];
        case DType::f16: return to_float(static_cast<const Half*>(p)[i]);
        case DType::bf16: return to_float(static_cast<const BFloat16*>(p)[i]);
    }
    return 0;
}

void store(void* p, DType t, std::size_t i, double v) noexcept {
    switch (t) {
        case DType::f32: static_cast<float*>(p)[i] = static_cast<float>(v); return;
        case DType::f64: static_cast<double*>(p)[i] = v; return;
        // Through float rounded to odd, then to nearest even: v rounded once.
        case DType::f16: static_cast<Half*>(p)[i] = to_half(round_to_odd_float(v)); return;
        case DType::bf16: static_cast<BFloat16*>(p)[i] = to_bfloat16(round_to_odd_float(v)); return;
    }
}
}  // namespace

void convert_elements(const void* src, DType from, void* dst, DType to, std::size_t count) noexcept {
    if (count == 0) return;  // an absent operand (dense without bias): its data may be null, which memcpy forbids
    if (from == to) {
        std::memcpy(dst, src, count * dtype_size(from));
        return;
    }
    for (std::size_t i = 0; i < count; ++i) store(dst, to, i, load(src, from, i));
}

}  // namespace accel
