// Every op in every dtype (f32, f64, f16, bf16) and on every path, against
// the float64 oracle given the inputs as stored (rounded to the dtype), with
// the op table's threshold for that dtype. A (op, dtype, path) the device
// does not support is listed as skipped with the reason the front-end gives
// (and that reason must be an Unsupported naming op, dtype and device);
// nothing unsupported counts as passed.
#include "support/check.hpp"

#include "../../backends/common/kernel_table.hpp"  // native_ops_of_every_backend

#include <algorithm>
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

// Any elementwise op of the table with an oracle (OpInfo::elementwise_reference):
// inputs drawn from its input ranges, run through ops::run.
std::vector<Result> elementwise(Op op, DType t, ops::Options o, std::mt19937_64& g) {
    const OpInfo& info = op_info(op);
    const std::size_t n = 1003;
    std::vector<reference::FVec> x;
    std::vector<Tensor> tx;
    for (const auto& range : info.input_ranges) {
        x.push_back(stored(uniform(g, n, range[0], range[1]), t));
        tx.push_back(put(x.back(), {n}, t));
    }
    std::vector<const Tensor*> in;
    for (const Tensor& v : tx) in.push_back(&v);
    auto y = nan_tensor({n}, t);
    ops::run(op, in, {&y}, o);
    return {{op_name(op), y.download_as<double>(), reference::elementwise(op, x)}};
}

// The ops with a case of their own; the elementwise ops with an oracle in the
// table are covered by `elementwise` (cases()).
const std::vector<std::pair<Op, Case>>& special_cases() {
    static const std::vector<std::pair<Op, Case>> all{
        {Op::bce_with_logits_backward, [](DType t, ops::Options o, std::mt19937_64& g) {
             // The gradient of the mean loss: a scale of 1/n.
             const std::size_t n = 1003;
             const auto z = stored(uniform(g, n, -8, 8), t), p = stored(uniform(g, n, 0.0f, 1.0f), t);
             auto Z = put(z, {n}, t), P = put(p, {n}, t);
             auto dZ = nan_tensor({n}, t);
             ops::bce_with_logits_backward(Z, P, dZ, o);
             return std::vector<Result>{{"bce_with_logits_backward", dZ.download_as<double>(),
                                         reference::bce_with_logits_backward(z, p, 1.0 / double(n))}};
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
             for (Activation act : {Activation::none, Activation::relu, Activation::sigmoid, Activation::gelu,
                                    Activation::gelu_tanh}) {
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
        {Op::scale, [](DType t, ops::Options o, std::mt19937_64& g) {
             const std::size_t n = 1003;
             const double s = 0.4;  // BabelStream's scalar
             const auto x = stored(uniform(g, n, -4, 4), t);
             auto X = put(x, {n}, t);
             auto Y = nan_tensor({n}, t);
             ops::scale(X, s, Y, o);
             return std::vector<Result>{
                 {"scale", Y.download_as<double>(), reference::scale(reference::Vec(x.begin(), x.end()), s)}};
         }},
        {Op::triad, [](DType t, ops::Options o, std::mt19937_64& g) {
             const std::size_t n = 1003;
             const double s = 0.4;
             const auto b = stored(uniform(g, n, -4, 4), t), c = stored(uniform(g, n, -4, 4), t);
             auto B = put(b, {n}, t), C = put(c, {n}, t);
             auto A = nan_tensor({n}, t);
             ops::triad(B, C, s, A, o);
             return std::vector<Result>{{"triad", A.download_as<double>(),
                                         reference::triad(reference::Vec(b.begin(), b.end()),
                                                          reference::Vec(c.begin(), c.end()), s)}};
         }},
        {Op::dot, [](DType t, ops::Options o, std::mt19937_64& g) {
             const std::size_t n = 1003;
             const auto a = stored(uniform(g, n, 0.0f, 1.0f), t), b = stored(uniform(g, n, 0.0f, 1.0f), t);  // one sign
             auto A = put(a, {n}, t), B = put(b, {n}, t);
             auto Y = nan_tensor({1}, t);
             ops::dot(A, B, Y, o);
             return std::vector<Result>{{"dot", Y.download_as<double>(),
                                         {reference::dot(reference::Vec(a.begin(), a.end()),
                                                         reference::Vec(b.begin(), b.end()))}}};
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

// Every op of the table now (ops a plugin or the program defined included)
// that has an elementwise oracle, then the special cases.
std::vector<std::pair<Op, Case>> cases() {
    std::vector<std::pair<Op, Case>> all;
    for (const OpInfo* info : op_table())
        if (info->elementwise_reference) {
            const Op op = info->op;
            all.push_back({op, [op](DType t, ops::Options o, std::mt19937_64& g) { return elementwise(op, t, o, g); }});
        }
    all.insert(all.end(), special_cases().begin(), special_cases().end());
    return all;
}

}  // namespace

TEST_CASE("convert rounds f64 once to f16 and bf16") {
    // Doubles just above and below halfway points of f16 and bf16, closer
    // than half a float ulp: through a rounded float they land on the halfway
    // point and tie to even, which is wrong for half of them. The expected
    // value is the nearer of the two neighbours, computed on exact doubles.
    auto g = rng(12);
    for (DType t : dtypes({DType::f16, DType::bf16})) {
        CAPTURE(std::string(dtype_name(t)));
        const int bits = t == DType::f16 ? 11 : 8;  // significand bits of the target
        std::vector<double> x, want;
        for (int i = 0; i < 2000; ++i) {
            const int e = static_cast<int>(g() % 20) - 10;  // within f16's normal range
            // An integer significand in [2^(bits-1), 2^bits): a float drawn from [1, 2) can be 2
            // (libstdc++'s uniform_real_distribution<float>, LWG 2524), whose ulp is twice as large.
            const auto significand = static_cast<double>((1u << (bits - 1)) + g() % (1u << (bits - 1)));
            const double lo = std::ldexp(significand, e - bits + 1);
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

TEST_CASE("the device's kernel table and its kernels agree") {
    // A kernel the backend claims (KernelTable::claim) but did not
    // register is a defect, not an unsupported op: it fails here instead of
    // being skipped below. A registered kernel missing from the table is one
    // too (the table is what the backend says it runs).
    const auto claimed = device()->kernel_table().claimed();
    CHECK_MESSAGE(!claimed.empty(), device()->selector() << " states no kernel table (KernelTable::claim)");
    auto same = [](const KernelKey& a, const KernelKey& b) { return a.op == b.op && a.dtype == b.dtype && a.path == b.path; };
    for (const KernelKey& k : claimed)
        CHECK_MESSAGE(device()->kernel_table().supports(k.op, k.dtype, k.path),
                      device()->selector() << " claims " << std::string(op_name(k.op)) << " in "
                                           << std::string(dtype_name(k.dtype)) << " on the "
                                           << std::string(path_name(k.path)) << " path but registered no kernel for it");
    for (const KernelKey& k : device()->kernel_table().registered())
        CHECK_MESSAGE(std::any_of(claimed.begin(), claimed.end(), [&](const KernelKey& c) { return same(c, k); }),
                      device()->selector() << " registered " << std::string(op_name(k.op)) << " in "
                                           << std::string(dtype_name(k.dtype)) << " on the "
                                           << std::string(path_name(k.path)) << " path, which its kernel table lacks");
}

TEST_CASE("an in-tree backend's device runs every op of every in-tree backend natively in f32") {
    // backends/common/kernel_table.hpp's list is the promise; a Vulkan shader
    // missing from the build, say, would otherwise drop its op unnoticed.
    const std::string& backend = device()->info().backend;
    const std::vector<std::string> in_tree{"host", "cuda", "hip", "opencl", "kokkos", "vulkan"};
    if (std::find(in_tree.begin(), in_tree.end(), backend) == in_tree.end()) {
        MESSAGE("skipped: " << backend << " is not an in-tree backend");
        return;
    }
    for (Op op : native_ops_of_every_backend())
        CHECK_MESSAGE(device()->kernel_table().supports(op, DType::f32, OpPath::native),
                      device()->selector() << " runs no native f32 kernel of " << std::string(op_name(op))
                                           << ", which every in-tree backend runs: "
                                           << device()->kernel_table().unsupported_reason(op, DType::f32, OpPath::native));
}

TEST_CASE("every op in every dtype and path passes the op table's threshold, or is skipped as unsupported") {
    auto g = rng(9001);
    std::vector<std::string> skipped, checked;
    const auto all = cases();
    for (const OpInfo* info : op_table())  // an op without a case would pass untested
        CHECK_MESSAGE((info->kernel_only || std::any_of(all.begin(), all.end(), [&](const auto& c) { return c.first == info->op; })),
                      "op " << info->name << " has no conformance case: give it an elementwise_reference in the op "
                      "table, or a case of its own here");
    for (const auto& [op, run] : all) {
        if (!selected(op)) continue;  // accel-conformance --ops
        for (DType t : dtypes()) {
            for (OpPath path : {OpPath::native, OpPath::vendor}) {
                if (path == OpPath::vendor && !op_info(op).has_vendor_path) continue;
                const std::string what = std::string(op_name(op)) + " " + dtype_name(t) + " " + path_name(path);
                CAPTURE(what);
                ops::Options o;
                o.path = path == OpPath::vendor ? ops::PathChoice::vendor : ops::PathChoice::native;
                if (!device()->kernel_table().supports(op, t, path)) {
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
                    const std::string why = device()->kernel_table().unsupported_reason(op, t, path);
                    CHECK_FALSE(why.empty());
                    skipped.push_back(what + ": " + why);
                    continue;
                }
                checked.push_back(what);
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
    std::string ran;
    for (const auto& c : checked) ran += (ran.empty() ? "" : ", ") + c;
    MESSAGE(checked.size() << " (op, dtype, path) checked on " << device()->selector() << ": " << ran);
}

TEST_CASE("results in every dtype are rounded to nearest even, not truncated: add is bit-exact where its f32 sum is "
          "exact") {
    // a, b in [1, 2): their sum is exact in f32, so the device must store that
    // sum rounded once to nearest even, bit for bit as the host rounds it. A
    // truncating store stays within the NMSE thresholds; this catches it.
    auto g = rng(9002);
    const std::size_t n = 4099;
    for (DType t : dtypes()) {
        CAPTURE(std::string(dtype_name(t)));
        if (!device()->kernel_table().supports(Op::add, t, OpPath::native)) continue;
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
