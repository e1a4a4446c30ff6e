// GELU over its whole input range, element by element, in every dtype, and
// its gradients against finite differences of the float64 forward.
//
// Range: gelu, gelu_tanh, their backward ops (dy = 1, so dx is the
// derivative) and dense's gelu and gelu_tanh epilogues on every path. Every
// element must be within rel·M + floor of the float64 oracle of its stored
// input, where M is |ref| for the forward ops and the sum of the magnitudes
// of the derivative's terms for the backward ones (the derivative of gelu
// crosses 0 at x = -0.75, where only an absolute bound holds), and
//   rel = 64·u + 8·u·cond(x) (+ one ulp of a 16-bit dtype, 2^-10 / 2^-7):
// u the compute type's unit roundoff (2^-24 for f32, f16, bf16; 2^-53 for
// f64); 64·u holds the library's erfc (OpenCL: 16 ulp) and the roundings
// after it; the argument x/√2 (or 2u of the tanh form) is rounded a few
// times, which the function amplifies by its condition number: erfc's
// 2t² = x² and the logistic's |2u| for x < 0 (1 for x > 0, where both
// saturate to x). The floor, (2 + |x|·(1 + 2|u'|))·smallest subnormal of the
// dtype, is the half subnormal a tiny intermediate (Φ, σ) is rounded to,
// times the factor it is multiplied by, plus the result's own rounding: a
// subnormal tail that is flushed to 0, or a result that stays at FLT_MIN,
// fails. At ±Inf the limits (gelu(+Inf) = +Inf, gelu(-Inf) = 0, where the
// literal x·Φ(x) is -Inf·0 = NaN), NaN gives NaN and ±0 keep their sign.
//
// Gradients: the float64 oracle of each backward op against central
// differences of the oracle's forward, and the device's gelu_backward,
// gelu_tanh_backward and dense_backward with the gelu activations against
// central differences of the float64 forward, on fresh random data.
#include "support/check.hpp"

#include <accel/elementwise_math.hpp>

#include <cmath>
#include <limits>
#include <sstream>

using namespace accel;
using namespace accel_test;

namespace {

namespace el = accel::elementwise_math;

constexpr double kSqrt2OverPi = 0.79788456080286535588;

// 2u = 2√(2/π)(x + 0.044715x³) and u' = √(2/π)(1 + 3·0.044715x²), in float64.
double tanh_arg2(double x) { return 2 * kSqrt2OverPi * x * (1 + 0.044715 * x * x); }
double tanh_arg_slope(double x) { return kSqrt2OverPi * (1 + 3 * 0.044715 * x * x); }

// The specials, the edges where the tails underflow f32 (Φ near -13.5, the
// logistic's exp near 2u = -87.3 and -103.9, x ≈ -10.1 and -10.8) and f64,
// the magnitudes where x³ overflows f32 (≈ 7e12).
std::vector<float> special_inputs() {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const float dmin = std::numeric_limits<float>::denorm_min(), fmin = std::numeric_limits<float>::min(),
                fmax = std::numeric_limits<float>::max();
    return {nan,    inf,    -inf,  0.0f,   -0.0f,  dmin,   -dmin,   fmin,    -fmin,  fmax,    -fmax,  1e13f,
            -1e13f, 7e12f,  -7e12f, 3e12f, -3e12f, -13.0f, -13.5f,  -14.0f,  -14.5f, -10.1f,  -10.8f, -11.0f,
            -37.5f, -38.5f, -0.75f, -0.7518f, 5.5f, 6.0f,  10.0f,  -1.0f,   1.0f,   -0.5f,   0.5f};
}

// Specials first and last (vector bodies and remainder loops both see them),
// a dense sweep of [-40, 12] (both tails, f64's down to its subnormals),
// magnitudes from 1e-45 to 3e38 of both signs, random points. Coarser under
// ACCEL_TEST_MAX_WORK (simulators).
std::vector<float> range_inputs(std::mt19937_64& g) {
    const auto specials = special_inputs();
    const std::size_t points = size_within_cap(200001, 2001, "gelu range sweep");
    const int binade_step = points < 200001 ? 3 : 1;
    std::vector<float> x = specials;
    const float lowest = -40.0f, width = 52.0f;
    for (std::size_t i = 0; i < points; ++i) x.push_back(lowest + width * static_cast<float>(i) / (points - 1));
    for (float mantissa : {1.0f, 1.3f, 1.7f})  // every binade of f32, subnormals included
        for (int e = -149; e <= 127; e += binade_step) {
            const float v = std::ldexp(mantissa, e);
            x.insert(x.end(), {v, -v});
        }
    const auto random = uniform(g, binade_step == 1 ? 4099 : 257, -8.0f, 8.0f);
    x.insert(x.end(), random.begin(), random.end());
    x.insert(x.end(), specials.begin(), specials.end());
    return x;
}

double compute_roundoff(DType t) { return t == DType::f64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24); }

// The smallest positive value of t: the element whose bits are 1 (little-endian).
double smallest_subnormal(DType t) {
    const unsigned char bits[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    double v = 0;
    convert_elements(bits, t, &v, DType::f64, 1);
    return v;
}

bool is_tanh_form(Op op) { return op == Op::gelu_tanh || op == Op::gelu_tanh_backward; }
bool is_backward(Op op) { return op == Op::gelu_backward || op == Op::gelu_tanh_backward; }

// The float64 value of op at x (dy = 1 for the backward ops) and the
// magnitude M the relative bound applies to.
struct Expected {
    double value, magnitude;
};
Expected expected(Op op, double x) {
    switch (op) {
    case Op::gelu: return {el::gelu(x, 0), std::fabs(el::gelu(x, 0))};
    case Op::gelu_tanh: return {el::gelu_tanh(x, 0), std::fabs(el::gelu_tanh(x, 0))};
    case Op::gelu_backward: {
        const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0)), pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
        return {el::gelu_backward(1.0, x), cdf + (pdf == 0 ? 0.0 : std::fabs(x) * pdf)};
    }
    default: {
        const double s = el::sigmoid(tanh_arg2(x), 0), ss = s * el::sigmoid(-tanh_arg2(x), 0);
        return {el::gelu_tanh_backward(1.0, x), s + (ss == 0 ? 0.0 : std::fabs(2 * ss * x * tanh_arg_slope(x)))};
    }
    }
}

// Whether got is op's value at x within the bound of the file comment; at
// a zero input (forward ops) also its sign, unless `any_zero_sign`.
bool within(Op op, float x, double got, DType t, bool any_zero_sign) {
    const Expected e = expected(op, x);
    if (std::isnan(x) || std::isnan(e.value)) return std::isnan(got);
    if (std::isinf(x)) return got == e.value;  // the limits: +Inf, 0 or 1
    if (x == 0 && !is_backward(op)) return got == 0 && (any_zero_sign || std::signbit(got) == std::signbit(x));
    const double u = compute_roundoff(t);
    const double cond = x > 0 ? 1.0 : is_tanh_form(op) ? std::fabs(tanh_arg2(x)) : double(x) * x;
    const double one_ulp = t == DType::f16 ? std::ldexp(1.0, -10) : t == DType::bf16 ? std::ldexp(1.0, -7) : 0.0;
    const double rel = one_ulp + 64 * u + 8 * u * cond;
    const double slope = op == Op::gelu_tanh_backward ? 1 + 2 * std::fabs(tanh_arg_slope(x)) : 1.0;
    const double floor = (2 + std::fabs(x) * slope) * smallest_subnormal(t);
    return std::fabs(got - e.value) <= rel * e.magnitude + floor;
}

void expect_within(Op op, const std::vector<float>& x, const std::vector<double>& y, DType t, const std::string& what,
                   bool any_zero_sign = false) {
    REQUIRE(y.size() == x.size());
    std::size_t bad = 0;
    std::ostringstream first;
    for (std::size_t i = 0; i < x.size(); ++i)
        if (!within(op, x[i], y[i], t, any_zero_sign) && bad++ < 4)
            first << "\n  x = " << x[i] << " at " << i << ": got " << y[i] << ", float64 " << expected(op, x[i]).value;
    INFO(what << " in " << std::string(dtype_name(t)) << ": " << bad << " of " << x.size()
              << " elements beyond the bound" << first.str());
    CHECK(bad == 0);
}

// Calls check(t, xs) for every dtype of the run, xs the range inputs (salt
// seeds their random part) as t stores them.
template <class Check>
void over_the_range(std::uint64_t salt, Check check) {
    auto g = rng(salt);
    const auto x = range_inputs(g);
    for (DType t : dtypes()) {
        CAPTURE(std::string(dtype_name(t)));
        check(t, stored(x, t));
    }
}

bool supported(Op op, DType t, OpPath path = OpPath::native) {
    if (device()->kernel_table().supports(op, t, path)) return true;
    MESSAGE(std::string(op_name(op)) << " in " << std::string(dtype_name(t)) << " skipped: unsupported on "
                                     << device()->selector());
    return false;
}

// Central difference of f at x with h = 1e-5·max(1, |x|): its truncation
// error h²·|f'''|/6, with |f'''| <= 1.2 for both forms (gelu''' =
// xφ(x)(x² − 4) peaks at 0.8), is at most 2e-11·max(1, |x|)²; the rounding
// of f(x ± h) and of x ± h adds about 2^-53·max(1, |f|)/h < 2e-11·max(1, |x|).
// So |fd − f'| < 1e-9·max(1, |x|)², with room.
template <class F>
double central_difference(F f, double x) {
    const double h = 1e-5 * std::max(1.0, std::fabs(x));
    return (f(x + h) - f(x - h)) / (2 * h);
}
constexpr double kFiniteDifferenceError = 1e-9;  // per unit of max(1, |x|)², see central_difference

// gelu'(x) or gelu_tanh'(x) by central differences of the oracle's forward.
double fd_slope(Activation act, double x) {
    return act == Activation::gelu ? central_difference([](double v) { return el::gelu(v, 0); }, x)
                                   : central_difference([](double v) { return el::gelu_tanh(v, 0); }, x);
}

// NMSE of got against a finite-difference reference that is itself within
// err[i] of the exact value: sqrt(NMSE(got, exact)) <= sqrt(threshold), so
// sqrt(NMSE(got, ref)) <= sqrt(threshold) + sqrt(Σ err² / Σ ref²).
double with_fd_error(double threshold, const std::vector<double>& ref, const std::vector<double>& err) {
    double e2 = 0, r2 = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) e2 += err[i] * err[i], r2 += ref[i] * ref[i];
    const double s = std::sqrt(threshold) + std::sqrt(e2 / r2);
    return s * s;
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("gelu and gelu_tanh over their whole range in every dtype: within the bound, +Inf at +Inf, 0 at -Inf, "
          "NaN kept, the sign of 0 kept") {
    over_the_range(31, [](DType t, const std::vector<float>& xs) {
        for (Op op : {Op::gelu, Op::gelu_tanh}) {
            if (!supported(op, t)) continue;
            auto tx = Tensor::from_host(device(), {xs.size()}, xs, t);
            auto ty = Tensor::from_host(device(), {xs.size()}, std::vector<float>(xs.size(), 7.0f), t);
            ops::run(op, {&tx}, {&ty});
            expect_within(op, xs, ty.download_as<double>(), t, op_name(op));
        }
    });
}

TEST_CASE("gelu_backward and gelu_tanh_backward over the whole range of x in every dtype: within the bound, "
          "1 at +Inf, 0 at -Inf, NaN kept") {
    over_the_range(32, [](DType t, const std::vector<float>& xs) {
        const std::size_t n = xs.size();
        for (Op op : {Op::gelu_backward, Op::gelu_tanh_backward}) {
            if (!supported(op, t)) continue;
            auto tdy = Tensor::from_host(device(), {n}, std::vector<float>(n, 1.0f), t);
            auto tx = Tensor::from_host(device(), {n}, xs, t);
            auto tdx = Tensor::from_host(device(), {n}, std::vector<float>(n, 7.0f), t);
            ops::run(op, {&tdy, &tx}, {&tdx});
            expect_within(op, xs, tdx.download_as<double>(), t, std::string(op_name(op)) + " (dy = 1)");
        }
    });
}

TEST_CASE("dense's gelu and gelu_tanh epilogues hold the same bound over the whole range in every dtype, on "
          "every path") {
    over_the_range(33, [](DType t, const std::vector<float>& xs) {
        // y[r, 0] = act(x[r, 0] · 1 + 0), a batch of n rows of one input: the epilogue sees each x
        // exactly (-0 + 0 is +0: no sign check).
        const std::size_t n = xs.size();
        auto batch = Tensor::from_host(device(), {n, 1}, xs, t);
        auto unit = Tensor::from_host(device(), {1, 1}, std::vector<float>{1.0f}, t);
        auto no_shift = Tensor::from_host(device(), {1}, std::vector<float>{0.0f}, t);
        for (auto path : paths(Op::dense)) {
            if (!supported(Op::dense, t, path == ops::PathChoice::vendor ? OpPath::vendor : OpPath::native)) continue;
            for (Activation act : {Activation::gelu, Activation::gelu_tanh}) {
                ops::Options o;
                o.path = path;
                auto y = Tensor::from_host(device(), {n, 1}, std::vector<float>(n, 7.0f), t);
                ops::dense(batch, unit, no_shift, y, act, o);
                expect_within(act == Activation::gelu ? Op::gelu : Op::gelu_tanh, xs, y.download_as<double>(), t,
                              std::string("dense's ") + activation_name(act) + " epilogue, " + name(path), true);
            }
        }
    });
}

TEST_CASE("the float64 oracles of gelu_backward and gelu_tanh_backward are the derivatives of their forwards "
          "(central differences)") {
    auto g = rng(34);
    auto x = uniform(g, 4099, -6.0f, 6.0f);
    for (int i = -600; i <= 600; ++i) x.push_back(0.01f * static_cast<float>(i));
    for (Activation act : {Activation::gelu, Activation::gelu_tanh}) {
        CAPTURE(activation_name(act));
        std::size_t bad = 0;
        std::ostringstream first;
        for (float xf : x) {
            const double v = xf, s = std::max(1.0, std::fabs(v));
            const double fd = fd_slope(act, v);
            const double oracle = act == Activation::gelu ? el::gelu_backward(1.0, v) : el::gelu_tanh_backward(1.0, v);
            if (!(std::fabs(oracle - fd) <= kFiniteDifferenceError * s * s) && bad++ < 4)
                first << "\n  x = " << v << ": oracle " << oracle << ", central difference " << fd;
        }
        INFO(bad << " of " << x.size() << " points differ by more than 1e-9·max(1, |x|)²" << first.str());
        CHECK(bad == 0);
    }
}

TEST_CASE("gelu_backward and gelu_tanh_backward on the device match central differences of the float64 forward, "
          "in every dtype") {
    auto g = rng(35);
    const std::size_t n = 10007;
    for (DType t : dtypes())
        for (Activation act : {Activation::gelu, Activation::gelu_tanh}) {
            const Op op = act == Activation::gelu ? Op::gelu_backward : Op::gelu_tanh_backward;
            if (!supported(op, t)) continue;
            const auto dy = stored(uniform(g, n), t), x = stored(uniform(g, n, -6.0f, 6.0f), t);
            auto tdy = Tensor::from_host(device(), {n}, dy, t), tx = Tensor::from_host(device(), {n}, x, t);
            auto tdx = Tensor::from_host(device(), {n}, std::vector<float>(n, 7.0f), t);
            ops::run(op, {&tdy, &tx}, {&tdx});
            std::vector<double> ref(n), err(n);
            for (std::size_t i = 0; i < n; ++i) {
                const double s = std::max(1.0, std::fabs(double(x[i])));
                ref[i] = dy[i] * fd_slope(act, x[i]);
                err[i] = std::fabs(dy[i]) * kFiniteDifferenceError * s * s;
            }
            const double limit = with_fd_error(nmse_threshold(op, t), ref, err);
            const double got = reference::nmse(tdx.download_as<double>(), ref);
            INFO(std::string(op_name(op)) << " in " << std::string(dtype_name(t)) << ": NMSE " << got
                                          << " against central differences, limit " << limit);
            CHECK(got <= limit);
        }
}

TEST_CASE("dense_backward with gelu and gelu_tanh matches central differences of the float64 forward, in every "
          "dtype") {
    if (!runs({Op::dense, Op::matmul, Op::column_sum})) return;
    auto g = rng(36);
    const std::size_t batch = 37, in = 29, out = 11;
    for (DType t : dtypes())
        for (Activation act : {Activation::gelu, Activation::gelu_tanh}) {
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(activation_name(act));
            if (!supported(act == Activation::gelu ? Op::gelu_backward : Op::gelu_tanh_backward, t) ||
                !supported(Op::dense, t) || !supported(Op::column_sum, t))
                continue;
            const auto x = stored(uniform(g, batch * in, -2.0f, 2.0f), t), w = stored(uniform(g, out * in), t),
                       b = stored(uniform(g, out), t), dy = stored(uniform(g, batch * out), t);
            auto X = Tensor::from_host(device(), {batch, in}, x, t), W = Tensor::from_host(device(), {out, in}, w, t);
            auto B = Tensor::from_host(device(), {out}, b, t), DY = Tensor::from_host(device(), {batch, out}, dy, t);
            Tensor Y(device(), {batch, out}, t), Z(device(), {batch, out}, t);
            ops::dense(X, W, B, Y, act);
            ops::dense(X, W, B, Z, Activation::none);
            Tensor DX(device(), {batch, in}, t), DW(device(), {out, in}, t), DB(device(), {out}, t);
            ops::dense_backward(X, W, Y, DY, act, &DX, DW, &DB, {}, Z);
            // dz = dy ⊙ act'(z) by central differences at the device's z (what the gradient is taken at),
            // within err of the exact derivative; dW = dzᵀ·x, db = Σ dz, dx = dz·W in float64.
            // The errors of dz bound those of the products: |Δ(dzᵀ·x)| <= |Δdz|ᵀ·|x|, and so on.
            const auto z = Z.download_as<double>();
            std::vector<double> dz(batch * out), dz_err(batch * out), ax(x.size()), aw(w.size());
            for (std::size_t i = 0; i < dz.size(); ++i) {
                const double s = std::max(1.0, std::fabs(z[i]));
                dz[i] = dy[i] * fd_slope(act, z[i]);
                dz_err[i] = std::fabs(dy[i]) * kFiniteDifferenceError * s * s;
            }
            for (std::size_t i = 0; i < x.size(); ++i) ax[i] = std::fabs(x[i]);
            for (std::size_t i = 0; i < w.size(); ++i) aw[i] = std::fabs(w[i]);
            const std::vector<double> xd = widen(x), wd = widen(w);
            const double thr = threshold(Op::matmul, t);
            const auto ref_dw = reference::matmul(dz, xd, out, in, batch, true, false);
            const auto ref_db = reference::column_sum(dz, batch, out);
            const auto ref_dx = reference::matmul(dz, wd, batch, in, out, false, false);
            const double dw_limit =
                with_fd_error(thr, ref_dw, reference::matmul(dz_err, ax, out, in, batch, true, false));
            const double db_limit = with_fd_error(thr, ref_db, reference::column_sum(dz_err, batch, out));
            const double dx_limit =
                with_fd_error(thr, ref_dx, reference::matmul(dz_err, aw, batch, in, out, false, false));
            CHECK(reference::nmse(DW.download_as<double>(), ref_dw) <= dw_limit);
            CHECK(reference::nmse(DB.download_as<double>(), ref_db) <= db_limit);
            CHECK(reference::nmse(DX.download_as<double>(), ref_dx) <= dx_limit);
        }
}
