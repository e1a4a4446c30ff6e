// Subnormal inputs and results, element by element, in every dtype: add and
// mul of values whose exact result is subnormal, relu and relu_backward
// passing a subnormal through, and bce_with_logits whose loss is
// log1p(exp(-z)) ≈ exp(-z) below the dtype's smallest normal (z = 100 in
// f32: 3.7e-44). On a device that keeps subnormals (DeviceInfo::subnormals
// flushes nothing in the dtype) every element is within max(rel·|ref|,
// 4 smallest subnormals) of the float64 value rounded to the dtype; a zero
// where the value is subnormal fails. On a device that says it flushes the
// dtype, an element may instead match flush-to-zero semantics (subnormal
// inputs read as ±0, subnormal results stored as ±0), and the case says so.
#include "support/check.hpp"

#include <cmath>
#include <limits>
#include <sstream>

using namespace accel;
using namespace accel_test;

namespace {

struct Format {
    double min_normal, min_subnormal, rel;
};

Format format_of(DType t) {
    switch (t) {
    case DType::f64: return {std::numeric_limits<double>::min(), std::numeric_limits<double>::denorm_min(), 1e-12};
    case DType::f16: return {std::ldexp(1.0, -14), std::ldexp(1.0, -24), std::ldexp(1.0, -10)};
    case DType::bf16: return {std::ldexp(1.0, -126), std::ldexp(1.0, -133), std::ldexp(1.0, -7)};
    default: return {std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min(), 1e-6};
    }
}

// `v` (exactly representable in t) as a tensor of t.
Tensor tensor_of(const std::vector<double>& v, DType t) {
    if (t == DType::f64) return Tensor::from_host(device(), {v.size()}, v);
    return Tensor::from_host(device(), {v.size()}, std::vector<float>(v.begin(), v.end()), t);
}

// A double rounded to t, as the device stores it.
double rounded(double v, DType t) {
    if (t == DType::f64) return v;
    return static_cast<double>(stored({static_cast<float>(v)}, t)[0]);
}

double flushed(double v, const Format& f) { return std::fabs(v) < f.min_normal ? std::copysign(0.0, v) : v; }

// The inputs of one op's elements, and its float64 formula.
struct Case {
    Op op;
    std::vector<std::vector<double>> inputs;
    double (*formula)(const std::vector<double>&);
};

double add_of(const std::vector<double>& x) { return x[0] + x[1]; }
double mul_of(const std::vector<double>& x) { return x[0] * x[1]; }
double relu_of(const std::vector<double>& x) { return x[0] > 0 ? x[0] : 0.0; }
double relu_backward_of(const std::vector<double>& x) { return x[1] > 0 ? x[0] : 0.0; }
double bce_of(const std::vector<double>& x) {  // max(z, 0) - z·t + log1p(exp(-|z|)), as PyTorch defines it
    return std::max(x[0], 0.0) - x[0] * x[1] + std::log1p(std::exp(-std::fabs(x[0])));
}

// Elements whose exact result is subnormal in t (and a few normal ones).
std::vector<Case> cases_of(DType t) {
    const Format f = format_of(t);
    const double s = f.min_subnormal, m = f.min_normal;
    const std::vector<double> sub{s, -s, 3 * s, m / 2, -m / 4, m - s};
    // z with exp(-z) subnormal in t: 100 (f32), 740 (f64), 90 (bf16), 12 (f16).
    const double z = t == DType::f64 ? 740 : t == DType::bf16 ? 90 : t == DType::f16 ? 12 : 100;
    // Factors whose product is subnormal: 2^-e · 2^-e' below the smallest normal.
    const int e = t == DType::f64 ? 520 : t == DType::f16 ? 10 : t == DType::bf16 ? 64 : 70;
    const double p = std::ldexp(1.0, -e), q = std::ldexp(1.5, t == DType::f16 ? -12 : -e);
    return {
        {Op::add, {sub, {0.0, s, -s, m / 4, m / 4, s}}, add_of},
        {Op::mul, {{p, -p, p, 1.0}, {q, q, p, s}}, mul_of},
        {Op::relu, {sub}, relu_of},
        {Op::relu_backward, {sub, {1, 1, 1, 1, 1, 1}}, relu_backward_of},
        {Op::bce_with_logits, {{z, -z, z + 1, 0.5}, {1, 0, 1, 1}}, bce_of},
    };
}

}  // namespace

TEST_CASE("subnormal inputs and results in every dtype: kept, or flushed to zero where the device says it "
          "flushes that dtype") {
    const Subnormals& said = device()->info().subnormals;
    for (DType t : dtypes()) {
        const std::string dt = dtype_name(t);
        const Format f = format_of(t);
        const bool flushes = said.flushes(t);
        if (flushes)
            MESSAGE(device()->selector() << " flushes " << dt << " subnormals (" << said.basis
                                         << "): subnormal cases compared with flush-to-zero semantics");
        std::size_t as_flushed = 0;
        for (const Case& c : cases_of(t)) {
            if (!device()->kernel_table().supports(c.op, t, OpPath::native)) {
                MESSAGE(std::string(op_name(c.op)) << " in " << dt << " skipped: unsupported on " << device()->selector());
                continue;
            }
            const std::size_t n = c.inputs[0].size();
            std::vector<Tensor> in;
            for (const auto& v : c.inputs) in.push_back(tensor_of(v, t));
            auto out = tensor_of(std::vector<double>(n, 7.0), t);
            std::vector<const Tensor*> ins;
            for (const Tensor& x : in) ins.push_back(&x);
            ops::run(c.op, ins, {&out});
            const auto got = out.download_as<double>();
            std::size_t bad = 0;
            std::ostringstream first;
            for (std::size_t i = 0; i < n; ++i) {
                std::vector<double> x, xf;
                for (const auto& v : c.inputs) x.push_back(v[i]), xf.push_back(flushed(v[i], f));
                const double ieee = rounded(c.formula(x), t), ftz = flushed(rounded(c.formula(xf), t), f);
                auto near = [&](double want) {
                    return std::fabs(got[i] - want) <= std::max(f.rel * std::fabs(want), 4 * f.min_subnormal);
                };
                // A subnormal result must not come back as zero where the device keeps subnormals.
                const bool lost = ieee != 0 && got[i] == 0 && std::fabs(ieee) < f.min_normal;
                const bool ok_ieee = near(ieee) && !lost, ok_ftz = flushes && (ftz == 0 ? got[i] == 0 : near(ftz));
                if (!ok_ieee && ok_ftz) ++as_flushed;
                if (!ok_ieee && !ok_ftz && bad++ < 4)
                    first << "\n  inputs " << x[0] << (x.size() > 1 ? ", " + std::to_string(x[1]) : std::string())
                          << " at " << i << ": got " << got[i] << ", float64 " << ieee
                          << (flushes ? ", flushed " + std::to_string(ftz) : std::string());
            }
            INFO(std::string(op_name(c.op)) << " in " << dt << ": " << bad << " of " << n << " elements wrong" << first.str());
            CHECK(bad == 0);
        }
        if (flushes) MESSAGE(as_flushed << " " << dt << " elements came back flushed to zero");
    }
}
