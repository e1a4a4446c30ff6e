// matmul, dense, column_sum and dense_backward against the float64 oracle,
// on every path (native, and vendor where the device has one).
//
// Thresholds: the op table's (accel::nmse_threshold; reasoning in
// core/src/op_table.cpp). CUDA's opt-in TF32 mode (10-bit mantissa) would
// need the f16 threshold and is off here.
#include "support/check.hpp"

#include <algorithm>

using namespace accel;
using namespace accel_test;

namespace {
// {70, 66, 33}: past one 64 × 64 tile each way, within the small work caps
// of the simulated devices (register-blocked GPU kernels take it).
const std::vector<MNK> kShapes{{1, 1, 1}, {7, 5, 3}, {16, 16, 16}, {33, 17, 65}, {1, 300, 7}, {70, 66, 33},
                               {127, 129, 131}, {64, 1, 64}, {257, 255, 256}, {384, 320, 1023}};

std::vector<float> random_matrix(std::mt19937_64& g, std::size_t r, std::size_t c) { return uniform(g, r * c); }
}  // namespace

TEST_CASE("matmul matches the reference for every transpose and path") {
    if (!runs({Op::matmul})) return;
    auto g = rng(20);
    check_matmul_shapes(kShapes, g, "matmul");
}

TEST_CASE("matmul with empty operands") {
    if (!runs({Op::matmul})) return;
    for (auto path : paths(Op::matmul)) {
        CAPTURE(std::string(name(path)));
        ops::Options o;
        o.path = path;
        // K == 0: C must be all zeros (poison must be overwritten).
        Tensor A(device(), {5, 0}), B(device(), {0, 4});
        auto C = poisoned(device(), {5, 4});
        ops::matmul(A, B, C, {}, o);
        expect_close(C.download(), reference::Vec(20, 0.0), 0.0, "matmul K=0");
        // M == 0: nothing to write, nothing must fail.
        Tensor A0(device(), {0, 3}), B0 = Tensor::from_host(device(), {3, 2}, std::vector<float>(6, 1.0f));
        Tensor C0(device(), {0, 2});
        ops::matmul(A0, B0, C0, {}, o);
        CHECK(C0.elements() == 0);
    }
}

TEST_CASE("matmul at a large size") {
    if (!runs({Op::matmul})) return;
    auto g = rng(21);
    const std::size_t m = 1024, n = 1024, k = 1024;
    if (!runs_at_size(m * n * k, "matmul 1024")) return;
    auto a = random_matrix(g, m, k), b = random_matrix(g, k, n);
    auto A = Tensor::from_host(device(), {m, k}, a), B = Tensor::from_host(device(), {k, n}, b);
    const auto ref = reference::matmul(a, b, m, n, k);
    for (auto path : paths(Op::matmul)) {
        CAPTURE(std::string(name(path)));
        auto C = poisoned(device(), {m, n});
        ops::Options o;
        o.path = path;
        ops::matmul(A, B, C, {}, o);
        expect_close(C.download(), ref, threshold(Op::matmul), std::string("matmul 1024 ") + name(path));
    }
}

TEST_CASE("dense matches the reference for every activation, with and without bias") {
    if (!runs({Op::dense})) return;
    auto g = rng(22);
    struct Dims {
        std::size_t batch, in, out;
    };
    const std::vector<Dims> dims{{1, 1, 1}, {7, 30, 10}, {40, 30, 10}, {33, 65, 17}, {66, 33, 70}, {128, 257, 129},
                                 {255, 64, 1}};
    for (auto path : paths(Op::dense))
        for (const auto& d : within_work_cap(dims, [](const Dims& x) { return x.batch * x.in * x.out; }, "dense"))
            for (Activation act : {Activation::none, Activation::sigmoid, Activation::relu, Activation::gelu,
                                   Activation::gelu_tanh})
                for (bool with_bias : {true, false}) {
                    CAPTURE(std::string(name(path)));
                    CAPTURE(d.batch);
                    CAPTURE(d.in);
                    CAPTURE(d.out);
                    CAPTURE(std::string(activation_name(act)));
                    CAPTURE(with_bias);
                    auto x = uniform(g, d.batch * d.in, -2.0f, 2.0f), w = uniform(g, d.out * d.in);
                    auto b = with_bias ? uniform(g, d.out) : std::vector<float>{};
                    auto X = Tensor::from_host(device(), {d.batch, d.in}, x);
                    auto W = Tensor::from_host(device(), {d.out, d.in}, w);
                    Tensor Bias = with_bias ? Tensor::from_host(device(), {d.out}, b) : Tensor();
                    auto Y = poisoned(device(), {d.batch, d.out});
                    ops::Options o;
                    o.path = path;
                    ops::dense(X, W, with_bias ? OptionalTensor(Bias) : std::nullopt, Y, act, o);
                    // Judged at the scale of the terms: a pre-activation z = x·w + b may cancel
                    // (1×1×1 with x·w ≈ −b), and then a path that rounds x·w before adding b (a
                    // vendor GEMM, then the epilogue) is rightly far from z relative to z itself.
                    // The activation scales z's error by at most its largest slope L.
                    const reference::Vec want = reference::dense(x, w, b, d.batch, d.in, d.out, act);
                    const double slope = act == Activation::sigmoid ? 0.25
                                         : act == Activation::gelu || act == Activation::gelu_tanh ? 1.13
                                                                                                   : 1.0;
                    reference::Vec scale(want.size());
                    for (std::size_t r = 0; r < d.batch; ++r)
                        for (std::size_t c = 0; c < d.out; ++c) {
                            double terms = with_bias ? std::fabs(double(b[c])) : 0.0;
                            for (std::size_t k = 0; k < d.in; ++k)
                                terms += std::fabs(double(x[r * d.in + k]) * double(w[c * d.in + k]));
                            scale[r * d.out + c] = std::fabs(want[r * d.out + c]) + slope * terms;
                        }
                    expect_close_at_scale(Y.download(), want, scale, threshold(Op::matmul),
                                          std::string("dense ") + name(path));
                }
}

TEST_CASE("dense with relu keeps a NaN of its input on every path") {
    if (!runs({Op::dense})) return;
    // One NaN in row 2 of x makes that row's pre-activations NaN: relu must
    // leave them NaN, and the other rows must be unaffected.
    auto g = rng(27);
    const std::size_t batch = 5, in = 33, out = 17, bad_row = 2;
    for (auto path : paths(Op::dense)) {
        CAPTURE(std::string(name(path)));
        auto x = uniform(g, batch * in), w = uniform(g, out * in), b = uniform(g, out);
        x[bad_row * in + 7] = std::numeric_limits<float>::quiet_NaN();
        auto X = Tensor::from_host(device(), {batch, in}, x), W = Tensor::from_host(device(), {out, in}, w);
        auto B = Tensor::from_host(device(), {out}, b);
        auto Y = Tensor::from_host(device(), {batch, out}, std::vector<float>(batch * out, 7.0f));
        ops::Options o;
        o.path = path;
        ops::dense(X, W, B, Y, Activation::relu, o);
        const auto y = Y.download();
        for (std::size_t c = 0; c < out; ++c) {
            CAPTURE(c);
            CHECK(std::isnan(y[bad_row * out + c]));
        }
        std::fill(x.begin() + bad_row * in, x.begin() + (bad_row + 1) * in, 0.0f);
        const auto ref = reference::dense(x, w, b, batch, in, out, Activation::relu);
        std::vector<float> got;
        reference::Vec want;
        for (std::size_t r = 0; r < batch; ++r)
            if (r != bad_row) {
                got.insert(got.end(), y.begin() + r * out, y.begin() + (r + 1) * out);
                want.insert(want.end(), ref.begin() + r * out, ref.begin() + (r + 1) * out);
            }
        expect_close(got, want, threshold(Op::matmul), std::string("dense relu, finite rows ") + name(path));
    }
}

TEST_CASE("dense with a rank-1 input and a large layer") {
    if (!runs({Op::dense})) return;
    auto g = rng(23);
    for (auto path : paths(Op::dense)) {
        CAPTURE(std::string(name(path)));
        ops::Options o;
        o.path = path;
        auto x = uniform(g, 30), w = uniform(g, 10 * 30), b = uniform(g, 10);
        auto X = Tensor::from_host(device(), {30}, x), W = Tensor::from_host(device(), {10, 30}, w);
        auto Bv = Tensor::from_host(device(), {10}, b);
        auto Y = poisoned(device(), {10});
        ops::dense(X, W, Bv, Y, Activation::sigmoid, o);
        expect_close(Y.download(), reference::dense(x, w, b, 1, 30, 10, Activation::sigmoid), threshold(Op::matmul),
                     "dense rank-1");
        const std::size_t batch = 512, in = 1024, out = 768;
        if (!runs_at_size(batch * in * out, "dense large")) continue;
        auto xl = uniform(g, batch * in), wl = uniform(g, out * in), bl = uniform(g, out);
        auto XL = Tensor::from_host(device(), {batch, in}, xl), WL = Tensor::from_host(device(), {out, in}, wl);
        auto BL = Tensor::from_host(device(), {out}, bl);
        auto YL = poisoned(device(), {batch, out});
        ops::dense(XL, WL, BL, YL, Activation::relu, o);
        expect_close(YL.download(), reference::dense(xl, wl, bl, batch, in, out, Activation::relu), threshold(Op::matmul),
                     "dense large");
    }
}

TEST_CASE("column_sum") {
    if (!runs({Op::column_sum})) return;
    // Threshold 1e-10: a float32 sum of up to 4099 terms, relative error ~sqrt(rows)·2^-24.
    auto g = rng(24);
    for (auto rc : std::vector<std::pair<std::size_t, std::size_t>>{{1, 1}, {7, 3}, {40, 10}, {4099, 5}, {3, 1025},
                                                                      {0, 4}}) {
        CAPTURE(rc.first);
        CAPTURE(rc.second);
        // Positive terms: a sum of signed terms can cancel to near 0, where its
        // relative error (and so the NMSE of a one-column output) has no bound.
        auto x = uniform(g, rc.first * rc.second, 0.0f, 1.0f);
        auto X = Tensor::from_host(device(), {rc.first, rc.second}, x);
        auto Y = poisoned(device(), {rc.second});
        ops::column_sum(X, Y);
        expect_close(Y.download(), reference::column_sum(x, rc.first, rc.second), threshold(Op::column_sum), "column_sum");
    }
}

TEST_CASE("dense_backward gives the gradients of dense") {
    if (!runs({Op::dense, Op::matmul, Op::column_sum, Op::relu_backward, Op::sigmoid_backward, Op::gelu_backward,
               Op::gelu_tanh_backward}))
        return;
    auto g = rng(25);
    const std::size_t batch = 40, in = 30, out = 10;
    for (Activation act :
         {Activation::none, Activation::sigmoid, Activation::relu, Activation::gelu, Activation::gelu_tanh}) {
        CAPTURE(std::string(activation_name(act)));
        auto x = uniform(g, batch * in), w = uniform(g, out * in), b = uniform(g, out), dy = uniform(g, batch * out);
        auto X = Tensor::from_host(device(), {batch, in}, x), W = Tensor::from_host(device(), {out, in}, w);
        auto Bv = Tensor::from_host(device(), {out}, b), DY = Tensor::from_host(device(), {batch, out}, dy);
        Tensor Y(device(), {batch, out}), Z(device(), {batch, out});
        ops::dense(X, W, Bv, Y, act);
        ops::dense(X, W, Bv, Z, Activation::none);  // the pre-activation gelu's derivative needs
        auto DX = poisoned(device(), {batch, in}), DW = poisoned(device(), {out, in}), DB = poisoned(device(), {out});
        ops::dense_backward(X, W, Y, DY, act, &DX, DW, &DB, {}, Z);
        // Oracle: dz = dy ⊙ act'(y) in float64 from the device's y (gelu: act'(z) from its z).
        const auto y = Y.download(), z = Z.download();
        std::vector<float> dz(batch * out);
        for (std::size_t i = 0; i < dz.size(); ++i) {
            double v = dy[i];
            if (act == Activation::relu) v = y[i] > 0 ? v : 0.0;
            if (act == Activation::sigmoid) v = v * double(y[i]) * (1.0 - double(y[i]));
            if (act == Activation::gelu) v = reference::element::gelu_backward(v, z[i]);
            if (act == Activation::gelu_tanh) v = reference::element::gelu_tanh_backward(v, z[i]);
            dz[i] = static_cast<float>(v);
        }
        expect_close(DW.download(), reference::matmul(dz, x, out, in, batch, true, false), threshold(Op::matmul), "dW");
        expect_close(DB.download(), reference::column_sum(dz, batch, out), threshold(Op::matmul), "db");
        expect_close(DX.download(), reference::matmul(dz, w, batch, in, out, false, false), threshold(Op::matmul), "dx");
    }
}

TEST_CASE("matmul and dense with a caller-given geometry larger than needed") {
    if (!runs({Op::matmul, Op::dense})) return;
    // Blocks past the output must write nothing and change nothing.
    auto g = rng(26);
    const std::size_t m = 97, n = 70, k = 33;
    auto a = random_matrix(g, m, k), b = random_matrix(g, k, n), bias = uniform(g, n);
    auto A = Tensor::from_host(device(), {m, k}, a), B = Tensor::from_host(device(), {k, n}, b);
    auto Bt = Tensor::from_host(device(), {n, k}, b);  // the same values read as W[out=n, in=k]
    auto Bias = Tensor::from_host(device(), {n}, bias);
    for (Op op : {Op::matmul, Op::dense}) {
        CAPTURE(std::string(op_name(op)));
        LaunchGeometry geo = device()->default_geometry(op, DType::f32, m, n);
        geo.grid.x = std::min(geo.grid.x * 2 + 1, device()->info().limits.max_grid_dims.x);
        geo.grid.y = std::min(geo.grid.y + 3, device()->info().limits.max_grid_dims.y);
        ops::Options o;
        o.path = ops::PathChoice::native;
        o.geometry = geo;
        auto C = poisoned(device(), {m, n});
        if (op == Op::matmul) {
            ops::matmul(A, B, C, {}, o);
            expect_close(C.download(), reference::matmul(a, b, m, n, k), threshold(Op::matmul), "matmul, large grid");
        } else {
            ops::dense(A, Bt, Bias, C, Activation::sigmoid, o);
            expect_close(C.download(), reference::dense(a, b, bias, m, k, n, Activation::sigmoid), threshold(Op::matmul),
                         "dense, large grid");
        }
    }
}

TEST_CASE("matmul and dense reject a caller-given geometry their tiled kernel cannot cover, writing nothing") {
    auto g = rng(27);
    const std::size_t m = 97, n = 70, k = 33;
    const auto layout = device()->tile_layout(Op::matmul, DType::f32, m, n);
    if (!layout) {
        MESSAGE("skipped: the native matmul of " << device()->selector() << " takes any geometry within the limits");
        return;
    }
    auto A = Tensor::from_host(device(), {m, k}, random_matrix(g, m, k));
    auto B = Tensor::from_host(device(), {k, n}, random_matrix(g, k, n));
    const std::vector<float> before = uniform(g, m * n);
    auto C = Tensor::from_host(device(), {m, n}, before);
    const LaunchGeometry fits = device()->default_geometry(Op::matmul, DType::f32, m, n);
    LaunchGeometry short_x = fits, other_block = fits;
    short_x.grid.x = fits.grid.x - 1;
    other_block.block.x = fits.block.x == 1 ? 2 : fits.block.x / 2;
    for (const LaunchGeometry& bad : {short_x, other_block}) {
        if (bad.grid.x == 0) continue;
        CAPTURE(bad.to_string());
        ops::Options o;
        o.path = ops::PathChoice::native;
        o.geometry = bad;
        try {
            ops::matmul(A, B, C, {}, o);
            FAIL("accepted");
        } catch (const InvalidArgument& e) {
            const std::string block = "block(" + std::to_string(fits.block.x) + "," + std::to_string(fits.block.y) + ",1)";
            CHECK(std::string(e.what()).find(block) != std::string::npos);
        }
        CHECK(C.download() == before);
    }
}

TEST_CASE("matmul and dense with more output rows than 65535 tiles of 64 (a tall output)") {
    if (!runs({Op::matmul, Op::dense})) return;
    // 65535 * 64 + 65 rows: more than a launch with one 64-row tile per block
    // along CUDA's grid.y (at most 65535 blocks) covers; every path must take it.
    auto g = rng(28);
    const std::size_t m = 65535 * 64 + 65, n = 3, k = 2;
    if (!runs_at_size(m * n * k, "tall matmul and dense")) return;
    auto a = random_matrix(g, m, k), b = random_matrix(g, n, k), bias = uniform(g, n);
    auto A = Tensor::from_host(device(), {m, k}, a), B = Tensor::from_host(device(), {n, k}, b);
    auto Bias = Tensor::from_host(device(), {n}, bias);
    for (auto path : paths(Op::matmul)) {
        CAPTURE(std::string(name(path)));
        ops::Options o;
        o.path = path;
        auto C = poisoned(device(), {m, n});
        ops::matmul(A, B, C, {false, true}, o);
        expect_close(C.download(), reference::matmul(a, b, m, n, k, false, true), threshold(Op::matmul),
                     std::string("tall matmul ") + name(path));
        ops::dense(A, B, Bias, C, Activation::relu, o);
        expect_close(C.download(), reference::dense(a, b, bias, m, k, n, Activation::relu), threshold(Op::matmul),
                     std::string("tall dense ") + name(path));
    }
}
