// Every op in every dtype (f32, f64, f16, bf16) and on every path, against
// the float64 oracle given the inputs as stored (rounded to the dtype), with
// the op table's threshold for that dtype. A (op, dtype, path) the device
// does not support is listed as skipped with the reason the front-end gives
// (and that reason must be an Unsupported naming op, dtype and device);
// nothing unsupported counts as passed.
#include "support/check.hpp"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>

using namespace accel;
using namespace accel_test;

namespace {

Tensor put(const std::vector<float>& v, Shape s, DType t) { return Tensor::from_host(device(), std::move(s), v, t); }

Tensor nan_tensor(Shape s, DType t) {
    return put(std::vector<float>(s.elements(), std::numeric_limits<float>::quiet_NaN()), s, t);
}

// One check of one call: what came back, and what the oracle says.
struct Result {
    std::string what;
    std::vector<double> got;
    reference::Vec want;
    bool exact = false;  ///< one correctly rounded value each (convert): equal, not merely close
};

// Runs `op` once in dtype t on path p with fresh data, returns its results.
using Case = std::function<std::vector<Result>(DType t, ops::Options o, std::mt19937_64& g)>;

std::vector<Result> unary(Op op, void (*run)(const Tensor&, Tensor&, const ops::Options&),
                          reference::Vec (*oracle)(const reference::FVec&), float lo, float hi, DType t,
                          ops::Options o, std::mt19937_64& g) {
    const std::size_t n = 1003;
    const auto x = stored(uniform(g, n, lo, hi), t);
    auto tx = put(x, {n}, t);
    auto ty = nan_tensor({n}, t);
    run(tx, ty, o);
    return {{op_name(op), ty.download_as<double>(), oracle(x)}};
}

std::vector<Result> binary(Op op, void (*run)(const Tensor&, const Tensor&, Tensor&, const ops::Options&),
                           reference::Vec (*oracle)(const reference::FVec&, const reference::FVec&), float lo,
                           float hi, DType t, ops::Options o, std::mt19937_64& g) {
    const std::size_t n = 1003;
    const auto a = stored(uniform(g, n, lo, hi), t), b = stored(uniform(g, n, 0.0f, 1.0f), t);
    auto ta = put(a, {n}, t), tb = put(b, {n}, t);
    auto tc = nan_tensor({n}, t);
    run(ta, tb, tc, o);
    return {{op_name(op), tc.download_as<double>(), oracle(a, b)}};
}

reference::Vec bce_backward_mean(const reference::FVec& z, const reference::FVec& t) {
    return reference::bce_with_logits_backward(z, t, 1.0 / double(z.size()));
}

const std::vector<std::pair<Op, Case>>& cases() {
    static const std::vector<std::pair<Op, Case>> all{
        {Op::add, [](DType t, ops::Options o, std::mt19937_64& g) {
             return binary(Op::add, ops::add, reference::add, -4, 4, t, o, g);
         }},
        {Op::sigmoid, [](DType t, ops::Options o, std::mt19937_64& g) {
             return unary(Op::sigmoid, ops::sigmoid, reference::sigmoid, -12, 12, t, o, g);
         }},
        {Op::relu, [](DType t, ops::Options o, std::mt19937_64& g) {
             return unary(Op::relu, ops::relu, reference::relu, -4, 4, t, o, g);
         }},
        {Op::relu_backward, [](DType t, ops::Options o, std::mt19937_64& g) {
             return binary(Op::relu_backward, ops::relu_backward, reference::relu_backward, -4, 4, t, o, g);
         }},
        {Op::sigmoid_backward, [](DType t, ops::Options o, std::mt19937_64& g) {
             return binary(Op::sigmoid_backward, ops::sigmoid_backward, reference::sigmoid_backward, -4, 4, t, o, g);
         }},
        {Op::bce_with_logits, [](DType t, ops::Options o, std::mt19937_64& g) {
             return binary(Op::bce_with_logits, ops::bce_with_logits, reference::bce_with_logits, -8, 8, t, o, g);
         }},
        {Op::bce_with_logits_backward, [](DType t, ops::Options o, std::mt19937_64& g) {
             return binary(Op::bce_with_logits_backward, ops::bce_with_logits_backward, bce_backward_mean, -8, 8, t, o,
                           g);
         }},
        {Op::matmul, [](DType t, ops::Options o, std::mt19937_64& g) {
             std::vector<Result> r;
             const std::size_t m = 67, n = 45, k = 33;
             for (int tr = 0; tr < 4; ++tr) {
                 const bool ta = tr & 1, tb = tr & 2;
                 const auto a = stored(uniform(g, m * k), t), b = stored(uniform(g, k * n), t);
                 auto A = put(a, ta ? Shape{k, m} : Shape{m, k}, t), B = put(b, tb ? Shape{n, k} : Shape{k, n}, t);
                 auto C = nan_tensor({m, n}, t);
                 ops::matmul(A, B, C, {ta, tb}, o);
                 r.push_back({std::string("matmul ta=") + (ta ? "1" : "0") + " tb=" + (tb ? "1" : "0"),
                              C.download_as<double>(), reference::matmul(a, b, m, n, k, ta, tb)});
             }
             return r;
         }},
        {Op::dense, [](DType t, ops::Options o, std::mt19937_64& g) {
             std::vector<Result> r;
             const std::size_t batch = 19, in = 31, out = 23;
             for (Activation act : {Activation::none, Activation::relu, Activation::sigmoid}) {
                 const auto x = stored(uniform(g, batch * in), t), w = stored(uniform(g, out * in), t),
                            b = stored(uniform(g, out), t);
                 auto X = put(x, {batch, in}, t), W = put(w, {out, in}, t), Bias = put(b, {out}, t);
                 auto Y = nan_tensor({batch, out}, t);
                 ops::dense(X, W, Bias, Y, act, o);
                 r.push_back({std::string("dense ") + activation_name(act), Y.download_as<double>(),
                              reference::dense(x, w, b, batch, in, out, act)});
             }
             return r;
         }},
        {Op::column_sum, [](DType t, ops::Options o, std::mt19937_64& g) {
             const std::size_t rows = 37, cols = 29;
             const auto x = stored(uniform(g, rows * cols, 0.0f, 1.0f), t);  // one sign: see the op table
             auto X = put(x, {rows, cols}, t);
             auto Y = nan_tensor({cols}, t);
             ops::column_sum(X, Y, o);
             return std::vector<Result>{{"column_sum", Y.download_as<double>(), reference::column_sum(x, rows, cols)}};
         }},
        {Op::convert, [](DType t, ops::Options o, std::mt19937_64& g) {
             // From every source dtype into t; the oracle rounds the same values once, on the host.
             std::vector<Result> r;
             const std::size_t n = 1003;
             for (DType from : kAllDTypes) {
                 auto x = stored(uniform(g, n, -1000.0f, 1000.0f), from);
                 x[0] = 70000.0f;  // beyond f16's range: +Inf there, as a host rounding gives
                 x = stored(x, from);
                 auto tx = put(x, {n}, from);
                 auto ty = nan_tensor({n}, t);
                 ops::convert(tx, ty, o);
                 const auto want = stored(x, t);
                 std::vector<double> got = ty.download_as<double>();
                 // +Inf where the target overflows: equal to the host's, then out of the sums.
                 if (std::isinf(want[0]) && got[0] == double(want[0])) got[0] = 0, x[0] = 0;
                 const auto want_clean = stored(x, t);
                 r.push_back({std::string("convert from ") + dtype_name(from), got,
                              reference::Vec(want_clean.begin(), want_clean.end()), true});
             }
             return r;
         }},
        {Op::adam_step, [](DType t, ops::Options o, std::mt19937_64& g) {
             const std::size_t n = 1003;
             const auto p0 = stored(uniform(g, n), t), gr = stored(uniform(g, n), t);
             auto P = put(p0, {n}, t), G = put(gr, {n}, t);
             auto M = put(std::vector<float>(n, 0.0f), {n}, t), V = put(std::vector<float>(n, 0.0f), {n}, t);
             const ops::AdamParams hp{1e-2f, 0.9f, 0.999f, 1e-8f};
             reference::Vec p(p0.begin(), p0.end()), m(n, 0.0), v(n, 0.0);
             const reference::Vec gd(gr.begin(), gr.end());
             for (std::size_t step = 1; step <= 3; ++step) {
                 ops::adam_step(P, G, M, V, step, hp, o);
                 reference::adam_step(p, gd, m, v, step, double(hp.lr), double(hp.beta1), double(hp.beta2),
                                      double(hp.eps));
             }
             return std::vector<Result>{{"adam param", P.download_as<double>(), p},
                                        {"adam m", M.download_as<double>(), m},
                                        {"adam v", V.download_as<double>(), v}};
         }},
    };
    return all;
}

}  // namespace

TEST_CASE("convert rounds f64 once to f16 and bf16") {
    // Doubles just above and below halfway points of f16 and bf16, closer
    // than half a float ulp: through a rounded float they land on the halfway
    // point and tie to even, which is wrong for half of them. The expected
    // value is the nearer of the two neighbours, computed on exact doubles.
    auto g = rng(12);
    for (DType t : {DType::f16, DType::bf16}) {
        CAPTURE(dtype_name(t));
        const int bits = t == DType::f16 ? 11 : 8;  // significand bits of the target
        std::vector<double> x, want;
        for (int i = 0; i < 2000; ++i) {
            const int e = static_cast<int>(g() % 20) - 10;  // within f16's normal range
            const double lo = std::ldexp(std::floor(std::ldexp(uniform(g, 1, 1.0f, 2.0f)[0], bits - 1)), e - bits + 1);
            const double ulp = std::ldexp(1.0, e - bits + 1), mid = lo + ulp / 2;
            const double nudge = std::ldexp(1.0, e - 40) * (i % 2 ? 1 : -1);  // far below a float ulp (2^(e-23))
            const double sign = (i / 2) % 2 ? -1.0 : 1.0;
            x.push_back(sign * (mid + nudge));
            want.push_back(sign * (nudge > 0 ? lo + ulp : lo));
        }
        auto X = Tensor::from_host(device(), {x.size()}, x);
        auto Y = Tensor::from_host(device(), {x.size()}, std::vector<float>(x.size(), 0.0f), t);
        try {
            ops::convert(X, Y);
        } catch (const Unsupported& e) {
            MESSAGE((std::string("skipped: convert f64 to ") + dtype_name(t) + ": " + e.what()));
            continue;
        }
        const auto got = Y.download_as<double>();
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < x.size(); ++i) wrong += got[i] != want[i];
        CHECK_MESSAGE(wrong == 0, wrong << " of " << x.size() << " values not rounded once to nearest");
        // The host-side conversion (accel::convert_elements) rounds once too.
        std::vector<std::uint16_t> bits16(x.size());
        convert_elements(x.data(), DType::f64, bits16.data(), t, x.size());
        std::vector<double> back(x.size());
        convert_elements(bits16.data(), t, back.data(), DType::f64, x.size());
        std::size_t host_wrong = 0;
        for (std::size_t i = 0; i < x.size(); ++i) host_wrong += back[i] != want[i];
        CHECK_MESSAGE(host_wrong == 0, host_wrong << " of " << x.size() << " host conversions not rounded once");
    }
}

TEST_CASE("every op in every dtype and path passes the op table's threshold, or is skipped as unsupported") {
    auto g = rng(9001);
    std::vector<std::string> skipped;
    for (const auto& [op, run] : cases()) {
        for (DType t : kAllDTypes) {
            for (OpPath path : {OpPath::native, OpPath::vendor}) {
                if (path == OpPath::vendor && !op_info(op).has_vendor_path) continue;
                const std::string what = std::string(op_name(op)) + " " + dtype_name(t) + " " + path_name(path);
                CAPTURE(what);
                ops::Options o;
                o.path = path == OpPath::vendor ? ops::PathChoice::vendor : ops::PathChoice::native;
                if (!device()->supports(op, t, path)) {
                    // The front-end must refuse it, naming op, dtype and device.
                    std::string reason;
                    try {
                        run(t, o, g);
                    } catch (const Unsupported& e) {
                        reason = e.what();
                    }
                    CHECK(reason.find(op_name(op)) != std::string::npos);
                    CHECK(reason.find(dtype_name(t)) != std::string::npos);
                    CHECK(reason.find(device()->selector()) != std::string::npos);
                    skipped.push_back(what + ": " + reason);
                    continue;
                }
                for (const Result& r : run(t, o, g)) {
                    expect_close(r.got, r.want, threshold(op, t), what + " (" + r.what + ")");
                    if (r.exact) CHECK_MESSAGE(r.got == r.want, what << " (" << r.what << "): not the correctly rounded values");
                }
            }
        }
    }
    std::ostringstream list;
    for (const auto& s : skipped) list << "\n  skipped: " << s;
    MESSAGE(skipped.size() << " (op, dtype, path) unsupported on " << device()->selector() << list.str());
}

TEST_CASE("16-bit results are rounded to nearest even, not truncated: add is bit-exact where its f32 sum is exact") {
    // a, b in [1, 2): their sum is exact in f32, so the device must store that
    // sum rounded once to nearest even, bit for bit as the host rounds it. A
    // truncating store stays within the NMSE thresholds; this catches it.
    auto g = rng(9002);
    const std::size_t n = 4099;
    for (DType t : kAllDTypes) {
        CAPTURE(dtype_name(t));
        if (!device()->supports(Op::add, t, OpPath::native)) continue;
        const auto a = stored(uniform(g, n, 1.0f, 2.0f), t), b = stored(uniform(g, n, 1.0f, 2.0f), t);
        auto ta = put(a, {n}, t), tb = put(b, {n}, t);
        auto tc = nan_tensor({n}, t);
        ops::add(ta, tb, tc);
        std::vector<float> sum(n);
        for (std::size_t i = 0; i < n; ++i) sum[i] = a[i] + b[i];
        const auto want = stored(sum, t);
        const auto got = tc.download_as<float>();
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i) wrong += got[i] != want[i];
        CHECK_MESSAGE(wrong == 0, wrong << " of " << n << " sums not rounded to nearest even");
    }
}

TEST_CASE("operands of different dtypes are rejected, naming both, and the output is left untouched") {
    const std::size_t n = 17;
    auto a = put(std::vector<float>(n, 1.0f), {n}, DType::f32);
    auto b = put(std::vector<float>(n, 2.0f), {n}, DType::f64);
    auto c = put(std::vector<float>(n, 5.0f), {n}, DType::f32);
    std::string message;
    try {
        ops::add(a, b, c);
    } catch (const InvalidArgument& e) {
        message = e.what();
    }
    CHECK(message.find("f64") != std::string::npos);
    CHECK(message.find("f32") != std::string::npos);
    CHECK(c.download() == std::vector<float>(n, 5.0f));
}
