// The logistic over its whole input range, element by element, in every
// dtype: sigmoid, and the ops built on the same exp (bce_with_logits_backward,
// dense's sigmoid epilogue on every path).
//
// NMSE over random inputs averages a defect away where it is small; the
// worst element does not. Every element must be within max(rel·|ref|,
// 4·denorm_min) of the float64 value of its stored input, rel = 1e-6 or one
// ulp of the dtype where that is coarser (f16 2^-10, bf16 2^-7: a result
// rounded once to them may be a half ulp off, and the f32 computation before
// can move it across a rounding boundary), so the subnormal tail is checked
// too: a result that stays at FLT_MIN, or flushes 6e-39 to 0, fails.
// sigmoid(-inf) = 0, sigmoid(+inf) = 1, NaN gives NaN. And an element's
// bits do not depend on its position or the tensor's length: vector bodies
// and remainder loops give the same value.
#include "support/check.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

using namespace accel;
using namespace accel_test;

namespace {

// Inputs that matter: the infinities, NaN, the signed zeros, the subnormal
// and normal limits of f32, the edges of exp's subnormal and zero ranges
// and of the CPU and OpenCL exp's clamp (-130).
std::vector<float> special_inputs() {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const float dmin = std::numeric_limits<float>::denorm_min(), fmin = std::numeric_limits<float>::min(),
                fmax = std::numeric_limits<float>::max();
    return {nan,   inf,     -inf,    0.0f,    -0.0f,   dmin,    -dmin,    fmin,   -fmin,  fmax,    -fmax,
            -88.0f, -87.6f, -87.5f, -87.34f, -100.0f, -103.9f, -103.98f, -104.0f, -110.0f, -745.0f, 16.7f,
            17.0f, 88.0f,  100.0f, -16.0f,  -17.4f,  -9.0f,   9.0f,    -129.9f, -130.0f, -130.1f, 130.0f};
}

// The whole range: specials first and last (so vector bodies and remainder
// loops both see them), a dense sweep of [-110, 20] (every range-reduction
// interval of exp, the subnormal tail, saturation at 1), a coarse one of
// [-800, -110] (f64's subnormal tail), magnitudes from 1e-45 to 3e38 of
// both signs, and random points. Under ACCEL_TEST_MAX_WORK (simulators) the
// sweeps are coarser: about 4000 elements instead of 400 000.
std::vector<float> range_inputs(std::mt19937_64& g) {
    const auto specials = special_inputs();
    std::vector<float> x = specials;
    const std::size_t sweep = size_within_cap(400001, 2001, "sigmoid range sweep");
    const bool small = sweep < 400001;
    for (std::size_t i = 0; i < sweep; ++i) x.push_back(-110.0f + 130.0f * static_cast<float>(i) / (sweep - 1));
    for (int i = 0; i <= 690; i += small ? 10 : 1) x.push_back(-800.0f + static_cast<float>(i));
    for (int e = -149; e <= 127; e += small ? 3 : 1)
        for (float m : {1.0f, 1.3f, 1.7f}) x.push_back(std::ldexp(m, e)), x.push_back(-std::ldexp(m, e));
    for (float v : uniform(g, small ? 257 : 4099, -30.0f, 30.0f)) x.push_back(v);
    x.insert(x.end(), specials.begin(), specials.end());
    return x;
}

// Relative bound of a dtype (see file comment).
double relative_bound(DType t) {
    switch (t) {
    case DType::f16: return std::ldexp(1.0, -10);
    case DType::bf16: return std::ldexp(1.0, -7);
    default: return 1e-6;
    }
}

double smallest_subnormal(DType t) {
    switch (t) {
    case DType::f64: return std::numeric_limits<double>::denorm_min();
    case DType::f16: return std::ldexp(1.0, -24);
    case DType::bf16: return std::ldexp(1.0, -133);
    default: return std::numeric_limits<float>::denorm_min();
    }
}

// Checks every element of y (sigmoid of x, as stored in t) against the
// float64 logistic; `what` names the op and path.
void expect_logistic(const std::vector<float>& x, const std::vector<double>& y, DType t, const std::string& what) {
    REQUIRE(y.size() == x.size());
    const auto ref = reference::sigmoid(x);
    const double rel = relative_bound(t), floor = 4 * smallest_subnormal(t);
    std::size_t bad = 0;
    std::ostringstream first;
    for (std::size_t i = 0; i < x.size(); ++i) {
        bool ok;
        if (std::isnan(x[i])) ok = std::isnan(y[i]);
        else if (x[i] == -std::numeric_limits<float>::infinity()) ok = y[i] == 0.0;
        else if (x[i] == std::numeric_limits<float>::infinity()) ok = y[i] == 1.0;
        else ok = std::fabs(y[i] - ref[i]) <= std::max(rel * std::fabs(ref[i]), floor);
        if (!ok && bad++ < 4)
            first << "\n  x = " << x[i] << " at " << i << ": got " << y[i] << ", float64 " << ref[i];
    }
    INFO(what << " in " << std::string(dtype_name(t)) << ": " << bad << " of " << x.size() << " elements beyond max(" << rel
              << " relative, " << floor << ")" << first.str());
    CHECK(bad == 0);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

}  // namespace

TEST_CASE("sigmoid over its whole range in every dtype: within 1e-6 relative or 4 smallest subnormals, "
          "0 at -inf, 1 at +inf, NaN kept") {
    auto g = rng(21);
    const auto x = range_inputs(g);
    for (DType t : dtypes()) {
        if (!device()->kernel_table().supports(Op::sigmoid, t, OpPath::native)) {
            MESSAGE("sigmoid in " << std::string(dtype_name(t)) << " skipped: unsupported on " << device()->selector());
            continue;
        }
        const auto xs = stored(x, t);
        auto tx = Tensor::from_host(device(), {xs.size()}, xs, t);
        auto ty = Tensor::from_host(device(), {xs.size()}, std::vector<float>(xs.size(), 7.0f), t);
        ops::sigmoid(tx, ty);
        expect_logistic(xs, ty.download_as<double>(), t, "sigmoid");
    }
}

TEST_CASE("sigmoid gives an element the same bits at every position and tensor length, in every dtype") {
    // The specials, rotated through tensors of every length up to 40 and a
    // few longer ones, against the same inputs' results in one long tensor.
    const auto pool = special_inputs();
    const std::size_t P = pool.size();
    std::vector<std::size_t> lengths;
    for (std::size_t n = 1; n <= 40; ++n) lengths.push_back(n);
    for (std::size_t n : {63, 64, 65, 127, 128, 129, 1000, 1001}) lengths.push_back(n);
    for (DType t : dtypes()) {
        if (!device()->kernel_table().supports(Op::sigmoid, t, OpPath::native)) continue;
        CAPTURE(std::string(dtype_name(t)));
        std::vector<float> long_x;
        for (std::size_t i = 0; i < 4099; ++i) long_x.push_back(pool[i % P]);
        auto tl = Tensor::from_host(device(), {long_x.size()}, long_x, t);
        ops::sigmoid(tl, tl);
        const auto want = tl.download_as<double>();  // want[i % P]: pool[i % P]'s result
        std::size_t bad = 0;
        std::ostringstream first;
        for (std::size_t n : lengths) {
            std::vector<float> x(n);
            for (std::size_t i = 0; i < n; ++i) x[i] = pool[(i + n) % P];
            auto tx = Tensor::from_host(device(), {n}, x, t);
            auto ty = Tensor::from_host(device(), {n}, std::vector<float>(n, 7.0f), t);
            ops::sigmoid(tx, ty);
            const auto y = ty.download_as<double>();
            for (std::size_t i = 0; i < n; ++i)
                if (!same_bits(y[i], want[(i + n) % P]) && bad++ < 4)
                    first << "\n  x = " << pool[(i + n) % P] << " at " << i << " of " << n << ": " << y[i]
                          << ", in the long tensor " << want[(i + n) % P];
        }
        INFO(bad << " elements differ from the same input's result in a long tensor" << first.str());
        CHECK(bad == 0);
    }
}

TEST_CASE("ops built on sigmoid's exp hold the same bound over the whole range in every dtype: "
          "bce_with_logits_backward and dense's sigmoid epilogue on every path") {
    auto g = rng(22);
    const auto x = range_inputs(g);
    const std::size_t n = x.size();
    for (DType t : dtypes()) {
        CAPTURE(std::string(dtype_name(t)));
        const auto xs = stored(x, t);
        auto tz = Tensor::from_host(device(), {n}, xs, t);
        if (device()->kernel_table().supports(Op::bce_with_logits_backward, t, OpPath::native)) {
            // Targets 0 and weight 1: dz = sigmoid(z).
            auto tt = Tensor::from_host(device(), {n}, std::vector<float>(n, 0.0f), t);
            auto tdz = Tensor::from_host(device(), {n}, std::vector<float>(n, 7.0f), t);
            ops::bce_with_logits_backward_scaled(tz, tt, tdz, 1.0f, {});
            expect_logistic(xs, tdz.download_as<double>(), t, "bce_with_logits_backward (t = 0, scale 1)");
        }
        // y[o] = sigmoid(W[o, 0] · 1 + 0): the epilogue sees the input exactly.
        auto one = Tensor::from_host(device(), {1}, std::vector<float>{1.0f}, t);
        auto zero = Tensor::from_host(device(), {n}, std::vector<float>(n, 0.0f), t);
        auto w = Tensor::from_host(device(), {n, 1}, xs, t);
        for (auto path : paths(Op::dense)) {
            ops::Options o;
            o.path = path;
            if (!device()->kernel_table().supports(Op::dense, t, path == ops::PathChoice::vendor ? OpPath::vendor : OpPath::native)) {
                MESSAGE("dense in " << std::string(dtype_name(t)) << " on the " << std::string(name(path)) << " path skipped: unsupported");
                continue;
            }
            auto y = Tensor::from_host(device(), {n}, std::vector<float>(n, 7.0f), t);
            ops::dense(one, w, zero, y, Activation::sigmoid, o);
            expect_logistic(xs, y.download_as<double>(), t, std::string("dense's sigmoid epilogue, ") + name(path));
        }
    }
}
