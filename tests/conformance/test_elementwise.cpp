// Elementwise ops against the float64 oracle.
//
// Thresholds: the op table's (accel::nmse_threshold; reasoning in core/src/op_table.cpp).
#include "support/check.hpp"

#include <sstream>

using namespace accel;
using namespace accel_test;

namespace {
const std::vector<std::size_t> kSizes{0, 1, 7, 255, 257, 1023, (1u << 20) + 3};

std::vector<float> with_extremes(std::vector<float> v) {
    // Large |x| stresses stability; they replace the first entries.
    const float ext[] = {-1e4f, 1e4f, -100.0f, 100.0f, -88.0f, 88.0f, 0.0f, -0.0f, 30.0f, -30.0f};
    for (std::size_t i = 0; i < v.size() && i < 10; ++i) v[i] = ext[i];
    return v;
}
}  // namespace

TEST_CASE("add matches the reference at odd, empty and large sizes") {
    auto g = rng(1);
    for (std::size_t n : within_work_cap(kSizes, "sizes")) {
        CAPTURE(n);
        auto a = uniform(g, n), b = uniform(g, n, -100.0f, 100.0f);
        auto ta = Tensor::from_host(device(), {n}, a), tb = Tensor::from_host(device(), {n}, b);
        auto tc = poisoned(device(), {n});
        ops::add(ta, tb, tc);
        expect_close(tc.download(), reference::add(a, b), threshold(Op::add), "add n=" + std::to_string(n));
    }
}

TEST_CASE("add and relu_backward past 2^25 f32 elements (128 MiB: one storage binding's reach on lavapipe)") {
    // A Vulkan device binds at most maxStorageBufferRange bytes of a buffer
    // per descriptor; a longer tensor runs as segments bound at offsets. The
    // element just past the first segment and the last one must be right.
    auto g = rng(4);
    const auto sizes = within_work_cap({(std::size_t{1} << 25) + 4097}, "past 2^25");
    if (sizes.empty() || !runs({Op::add})) return;
    const std::size_t n = sizes[0];
    auto a = uniform(g, n), b = uniform(g, n, -100.0f, 100.0f);
    auto ta = Tensor::from_host(device(), {n}, a), tb = Tensor::from_host(device(), {n}, b);
    auto tc = poisoned(device(), {n});
    ops::add(ta, tb, tc);
    const auto sum = tc.download();
    expect_close(sum, reference::add(a, b), threshold(Op::add), "add n=" + std::to_string(n));
    for (std::size_t i : {std::size_t{0}, (std::size_t{1} << 25) - 1, std::size_t{1} << 25, n - 1}) {
        CAPTURE(i);
        CHECK(sum[i] == a[i] + b[i]);  // one f32 addition: exact on every backend
    }
    if (!runs({Op::relu_backward})) return;
    ops::relu_backward(ta, tb, tc);  // dy = a, x = b: dx = x > 0 ? dy : 0
    const auto dx = tc.download();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += dx[i] != (b[i] > 0 ? a[i] : 0.0f);
    CHECK(wrong == 0);
}

TEST_CASE("add on a 2-D shape and in place") {
    auto g = rng(2);
    auto a = uniform(g, 33 * 65), b = uniform(g, 33 * 65);
    auto ta = Tensor::from_host(device(), {33, 65}, a), tb = Tensor::from_host(device(), {33, 65}, b);
    ops::add(ta, tb, ta);  // c aliases a
    expect_close(ta.download(), reference::add(a, b), threshold(Op::add), "add in place [33,65]");
}

TEST_CASE("add honours a caller-given launch geometry smaller than the problem") {
    auto g = rng(3);
    const std::size_t n = size_within_cap(100003, 4099, "add with geometry");
    auto a = uniform(g, n), b = uniform(g, n);
    auto ta = Tensor::from_host(device(), {n}, a), tb = Tensor::from_host(device(), {n}, b);
    const std::size_t max_block = device()->info().limits.max_block_size;
    for (std::size_t block : {std::size_t{1}, std::size_t{64}, std::size_t{128}, std::size_t{256}}) {
        if (block > max_block) continue;
        for (std::size_t grid : {std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
            CAPTURE(block);
            CAPTURE(grid);
            auto tc = poisoned(device(), {n});
            ops::Options o;
            o.geometry = LaunchGeometry{{grid, 1, 1}, {block, 1, 1}};
            ops::add(ta, tb, tc, o);
            expect_close(tc.download(), reference::add(a, b), threshold(Op::add), "add with geometry");
        }
    }
}

TEST_CASE("sigmoid is accurate and stable for large |x|") {
    if (!runs({Op::sigmoid})) return;
    auto g = rng(4);
    for (std::size_t n : within_work_cap(kSizes, "sizes")) {
        CAPTURE(n);
        auto x = with_extremes(uniform(g, n, -12.0f, 12.0f));
        auto tx = Tensor::from_host(device(), {n}, x);
        auto ty = poisoned(device(), {n});
        ops::sigmoid(tx, ty);
        expect_close(ty.download(), reference::sigmoid(x), threshold(Op::sigmoid), "sigmoid n=" + std::to_string(n));
    }
}

TEST_CASE("relu and its gradient") {
    if (!runs({Op::relu, Op::relu_backward})) return;
    auto g = rng(5);
    for (std::size_t n : within_work_cap(kSizes, "sizes")) {
        CAPTURE(n);
        auto x = with_extremes(uniform(g, n)), dy = uniform(g, n);
        auto tx = Tensor::from_host(device(), {n}, x), tdy = Tensor::from_host(device(), {n}, dy);
        auto ty = poisoned(device(), {n}), tdx = poisoned(device(), {n});
        ops::relu(tx, ty);
        ops::relu_backward(tdy, tx, tdx);
        expect_close(ty.download(), reference::relu(x), threshold(Op::relu), "relu");
        expect_close(tdx.download(), reference::relu_backward(dy, x), threshold(Op::relu_backward), "relu_backward");
    }
}

TEST_CASE("relu keeps NaN and maps infinities; relu_backward passes dy only where x > 0") {
    if (!runs({Op::relu, Op::relu_backward})) return;
    // Specials at the start, in the middle and at the end, so that vectorized
    // bodies and remainder loops both see them. Outputs start at a finite
    // sentinel: a NaN in them must have been written.
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const std::size_t n = 1027;
    auto g = rng(8);
    auto x = uniform(g, n), dy = uniform(g, n);
    const std::vector<std::pair<std::size_t, float>> specials{{0, nan},  {1, inf},       {2, -inf},     {3, -0.0f},
                                                              {4, nan},  {n / 2, nan},   {n / 2 + 1, inf},
                                                              {n - 3, -inf}, {n - 2, inf}, {n - 1, nan}};
    for (const auto& sp : specials) x[sp.first] = sp.second;
    for (std::size_t i = 0; i < n; i += 5) dy[i] = nan;  // NaN gradients, where x > 0 and where not
    auto tx = Tensor::from_host(device(), {n}, x), tdy = Tensor::from_host(device(), {n}, dy);
    auto ty = Tensor::from_host(device(), {n}, std::vector<float>(n, 7.0f));
    auto tdx = Tensor::from_host(device(), {n}, std::vector<float>(n, 7.0f));
    ops::relu(tx, ty);
    ops::relu_backward(tdy, tx, tdx);
    const auto y = ty.download(), dx = tdx.download();
    auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
    std::size_t bad_y = 0, bad_dx = 0;
    std::ostringstream first;  // the first wrong element of each
    for (std::size_t i = 0; i < n; ++i) {
        const float want_y = std::isnan(x[i]) ? nan : x[i] > 0 ? x[i] : 0.0f;
        const float want_dx = x[i] > 0 ? dy[i] : 0.0f;  // x = NaN gives 0, see ops::relu_backward
        if (!same(y[i], want_y) && bad_y++ == 0)
            first << "relu(" << x[i] << ") = " << y[i] << " at " << i << ", expected " << want_y << "; ";
        if (!same(dx[i], want_dx) && bad_dx++ == 0)
            first << "relu_backward(dy " << dy[i] << ", x " << x[i] << ") = " << dx[i] << " at " << i
                  << ", expected " << want_dx;
    }
    INFO(first.str());
    CHECK(bad_y == 0);
    CHECK(std::isnan(reference::relu({nan})[0]));  // the oracle must not hide a NaN either
    CHECK(bad_dx == 0);
}

TEST_CASE("sigmoid_backward") {
    if (!runs({Op::sigmoid_backward})) return;
    auto g = rng(6);
    for (std::size_t n : within_work_cap(kSizes, "sizes")) {
        CAPTURE(n);
        auto y = uniform(g, n, 0.0f, 1.0f), dy = uniform(g, n);
        auto ty = Tensor::from_host(device(), {n}, y), tdy = Tensor::from_host(device(), {n}, dy);
        auto tdx = poisoned(device(), {n});
        ops::sigmoid_backward(tdy, ty, tdx);
        expect_close(tdx.download(), reference::sigmoid_backward(dy, y), threshold(Op::sigmoid_backward), "sigmoid_backward");
    }
}

TEST_CASE("bce_with_logits, its mean and its gradient") {
    if (!runs({Op::bce_with_logits, Op::bce_with_logits_backward})) return;
    auto g = rng(7);
    for (std::size_t n : within_work_cap(kSizes, "sizes")) {
        CAPTURE(n);
        auto z = with_extremes(uniform(g, n, -8.0f, 8.0f));
        std::vector<float> t(n);
        std::bernoulli_distribution coin(0.5);
        for (auto& v : t) v = coin(g) ? 1.0f : 0.0f;
        auto tz = Tensor::from_host(device(), {n}, z), tt = Tensor::from_host(device(), {n}, t);
        auto tl = poisoned(device(), {n}), tdz = poisoned(device(), {n});
        ops::bce_with_logits(tz, tt, tl);
        ops::bce_with_logits_backward(tz, tt, tdz);
        const auto ref = reference::bce_with_logits(z, t);
        expect_close(tl.download(), ref, threshold(Op::bce_with_logits), "bce_with_logits");
        expect_close(tdz.download(), reference::bce_with_logits_backward(z, t, n ? 1.0 / double(n) : 0.0), threshold(Op::bce_with_logits_backward),
                     "bce_with_logits_backward");
        // A shard of a batch of 3n elements spread over processes: weight 1/(3n).
        auto tds = poisoned(device(), {n});
        const float scale = n ? 1.0f / float(3 * n) : 0.0f;
        ops::bce_with_logits_backward_scaled(tz, tt, tds, scale);
        expect_close(tds.download(), reference::bce_with_logits_backward(z, t, double(scale)), threshold(Op::bce_with_logits_backward),
                     "bce_with_logits_backward_scaled");
        CHECK_THROWS_AS(ops::bce_with_logits_backward_scaled(tz, tt, tds, std::numeric_limits<float>::infinity()),
                        InvalidArgument);
        const float mean = ops::bce_with_logits_loss(tz, tt);
        if (n == 0) {
            CHECK(std::isnan(mean));
        } else {
            double s = 0;
            for (double v : ref) s += v;
            // A float32 sum of n positive terms: rounding errors random-walk to
            // ~sqrt(n)·2^-24 relative (6e-5 at n = 1e6 in the worst case seen).
            CHECK(std::fabs(mean - s / double(n)) <= 1e-4 * (s / double(n)));
        }
    }
}

TEST_CASE("adam_step matches PyTorch's update over several steps") {
    if (!runs({Op::adam_step})) return;
    auto g = rng(8);
    for (std::size_t n : within_work_cap({1, 7, 1023, 100003}, "adam_step")) {
        CAPTURE(n);
        auto p = uniform(g, n);
        reference::Vec rp(p.begin(), p.end()), rm(n, 0.0), rv(n, 0.0);
        // Magnitudes the results are summed from (see expect_close_at_scale): m sums
        // (1-β1)·β1^k·g terms of either sign; p moves by at most ~lr per step.
        reference::Vec m_scale(n, 0.0), p_scale(n);
        for (std::size_t i = 0; i < n; ++i) p_scale[i] = std::fabs(p[i]);
        auto tp = Tensor::from_host(device(), {n}, p);
        auto tm = Tensor::from_host(device(), {n}, std::vector<float>(n, 0.0f));
        auto tv = Tensor::from_host(device(), {n}, std::vector<float>(n, 0.0f));
        for (std::size_t step = 1; step <= 5; ++step) {
            auto grad = uniform(g, n);
            auto tg = Tensor::from_host(device(), {n}, grad);
            ops::adam_step(tp, tg, tm, tv, step, {1e-2f, 0.9f, 0.999f, 1e-8f});
            reference::Vec rg(grad.begin(), grad.end());
            // The device receives float32 hyper-parameters; the oracle uses the same values.
            reference::adam_step(rp, rg, rm, rv, step, double(1e-2f), double(0.9f), double(0.999f), double(1e-8f));
            for (std::size_t i = 0; i < n; ++i) {
                m_scale[i] = double(0.9f) * m_scale[i] + (1 - double(0.9f)) * std::fabs(rg[i]);
                p_scale[i] += double(1e-2f);
            }
        }
        // p and m cancel (signs of p0 and g are random), so they are judged at the
        // scale of their terms; v sums squares and keeps the plain NMSE.
        expect_close_at_scale(tp.download(), rp, p_scale, threshold(Op::adam_step), "adam param after 5 steps");
        expect_close_at_scale(tm.download(), rm, m_scale, threshold(Op::adam_step), "adam first moment");
        expect_close(tv.download(), rv, threshold(Op::adam_step), "adam second moment");
    }
}

TEST_CASE("adam_step where the update cancels the parameter stays within 16u(|p| + |u|) of the oracle") {
    // lr = 0.1 and p0 = u·(1 + δ), |δ| <= 1e-3: step 1's update u = lr·g/(|g| + eps) takes
    // p to p0 − u ≈ δ·u, so the result's own magnitude says nothing of the error (its
    // relative error may reach u·|u|/|p − u|). The bound is per element, at the scale of
    // the terms: a dozen f32 roundings of magnitudes up to |p| + |u|, 16 units of 2^-24.
    if (!runs({Op::adam_step})) return;
    auto g = rng(81);
    const float lr = 0.1f;
    for (std::size_t n : within_work_cap({1, 31, 4099}, "adam_step")) {
        CAPTURE(n);
        std::vector<float> grad = uniform(g, n), p(n), delta = uniform(g, n, -1e-3f, 1e-3f);
        for (std::size_t i = 0; i < n; ++i) p[i] = (grad[i] < 0 ? -lr : lr) * (1 + delta[i]);
        auto tp = Tensor::from_host(device(), {n}, p), tg = Tensor::from_host(device(), {n}, grad);
        auto tm = Tensor::from_host(device(), {n}, std::vector<float>(n, 0.0f));
        auto tv = Tensor::from_host(device(), {n}, std::vector<float>(n, 0.0f));
        ops::adam_step(tp, tg, tm, tv, 1, {lr, 0.9f, 0.999f, 1e-8f});
        reference::Vec rp(p.begin(), p.end()), rm(n, 0.0), rv(n, 0.0);
        reference::adam_step(rp, reference::Vec(grad.begin(), grad.end()), rm, rv, 1, double(lr), double(0.9f),
                             double(0.999f), double(1e-8f));
        const std::vector<float> got = tp.download();
        std::size_t worst = 0;
        double worst_ratio = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double scale = std::fabs(double(p[i])) + std::fabs(double(p[i]) - rp[i]);
            const double ratio = std::fabs(double(got[i]) - rp[i]) / (16 * 0x1p-24 * scale);
            if (!(ratio <= worst_ratio)) worst = i, worst_ratio = ratio;
        }
        INFO("element " << worst << ": p0 " << p[worst] << ", got " << got[worst] << ", oracle " << rp[worst]);
        CHECK(worst_ratio <= 1.0);
    }
}

TEST_CASE("fma_throughput probe computes what it claims, in f32, f64 and f16") {
    const std::size_t n = 4099, iterations = 1000;
    for (DType t : dtypes({DType::f32, DType::f64, DType::f16})) {
        CAPTURE(std::string(dtype_name(t)));
        reference::Vec ref(n);
        for (std::size_t i = 0; i < n; ++i) ref[i] = reference::fma_throughput_value(i, iterations, t);
        Tensor y = Tensor::from_host(device(), {n}, std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()), t);
        double flops = 0;
        try {
            flops = diagnostics::fma_throughput(y, iterations);
        } catch (const Unsupported& e) {
            MESSAGE((std::string("skipped: fma_throughput ") + dtype_name(t) + ": " + e.what()));
            continue;
        }
        CHECK(flops == doctest::Approx(16.0 * iterations * n));
        expect_close(y.download_as<double>(), ref, diagnostics::fma_probe_nmse(t), "fma_throughput");
    }
    Tensor bf16(device(), {8}, DType::bf16);
    CHECK_THROWS_AS(diagnostics::fma_throughput(bf16, 10), InvalidArgument);  // bf16 computes in f32
}

TEST_CASE("matrix_throughput probe computes what it claims, on f16 and bf16 operands") {
    const std::size_t n = 32 * 70, iterations = 300;
    for (DType t : {DType::f16, DType::bf16}) {
        CAPTURE(std::string(dtype_name(t)));
        Tensor y = Tensor::from_host(device(), {n}, std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()));
        double flops = 0;
        try {
            flops = diagnostics::matrix_throughput(y, t, iterations);
        } catch (const Unsupported& e) {
            MESSAGE((std::string("skipped: matrix_throughput ") + dtype_name(t) + ": " + e.what()));
            continue;
        }
        CHECK(flops == doctest::Approx(8.0 * 4096 * iterations * (n / 32)));
        // Every value is exact in f32: each round adds 1 to every accumulator.
        for (float v : y.download()) REQUIRE(double(v) == reference::matrix_throughput_value(iterations));
    }
    Tensor ragged(device(), {40});
    CHECK_THROWS_AS(diagnostics::matrix_throughput(ragged, DType::f16, 10), InvalidArgument);
    Tensor y(device(), {64});
    CHECK_THROWS_AS(diagnostics::matrix_throughput(y, DType::f32, 10), InvalidArgument);
}
