// matmul and dense at sizes around the blocking of the CPU GEMM
// (backends/common/cpu_gemm.hpp: register tile MR×NR = 8×32 floats with a
// 16-column narrow panel, KC = 256, MC = 192, NC = 2048, B read in place up
// to 32 rows, A read in place below 3 panels; host tiles of ≥ 64 rows), one
// below, at and one above each, with all four transposes, and skinny shapes
// (N = 10, K = 30, M = 1). Every backend runs them: the sizes are just as
// much edge cases of GPU tiles. Every shape has tens of outputs or more: the
// NMSE of one lone dot product has no bound when its sum cancels to near 0.
#include "support/check.hpp"

using namespace accel;
using namespace accel_test;

namespace {

// Sizes b-1, b, b+1 for each boundary b of one dimension, the others kept small but not multiples.
std::vector<MNK> around(std::size_t MNK::*dim, std::initializer_list<std::size_t> bounds, MNK base) {
    std::vector<MNK> out;
    for (std::size_t b : bounds)
        for (std::size_t v : {b - 1, b, b + 1}) {
            MNK s = base;
            s.*dim = v;
            out.push_back(s);
        }
    return out;
}

std::vector<MNK> blocking_shapes() {
    std::vector<MNK> s;
    for (const auto& v : around(&MNK::m, {8, 16, 32, 64, 128, 192, 384}, {0, 37, 19})) s.push_back(v);  // MR, MC, tiles
    for (const auto& v : around(&MNK::n, {16, 32, 48, 64, 96, 128}, {13, 0, 21}))
        s.push_back(v);                                                                     // narrow, NR, panels
    for (const auto& v : around(&MNK::n, {2048}, {9, 0, 5})) s.push_back(v);               // NC
    for (const auto& v : around(&MNK::k, {2, 256, 512}, {17, 35, 0})) s.push_back(v);     // KC
    for (const auto& v : around(&MNK::k, {256}, {200, 100, 0})) s.push_back(v);           // KC with packed A and B
    // Skinny and small: the MLP layer, a dense layer, row and column vectors.
    for (const MNK& v : std::vector<MNK>{{4096, 10, 30}, {64, 128, 784}, {1, 777, 65}, {777, 1, 65}, {300, 2, 1},
                                         {5, 300, 1}, {1, 100, 600}, {65, 33, 3}})
        s.push_back(v);
    return s;
}

}  // namespace

TEST_CASE("matmul matches the reference around the CPU GEMM's block sizes, every transpose and path") {
    auto g = rng(60);
    check_matmul_shapes(blocking_shapes(), g, "gemm blocking");
}

TEST_CASE("dense matches the reference around the CPU GEMM's block sizes") {
    // dense is x·Wᵀ (W stored [out, in]): the transposed-B case of the GEMM, plus bias and activation.
    auto g = rng(61);
    const std::vector<MNK> shapes{{7, 255, 31}, {8, 256, 32}, {9, 257, 33}, {64, 784, 128}, {63, 783, 127},
                                  {65, 785, 129}, {193, 30, 10}, {4096, 30, 10}, {1, 513, 2049}};
    for (auto path : paths(Op::dense))
        for (const auto& d : within_work_cap(shapes, [](const MNK& x) { return x.m * x.n * x.k; }, "gemm blocking dense"))
            for (Activation act : {Activation::none, Activation::sigmoid}) {
                // m = batch, n = in, k = out here.
                CAPTURE(name(path));
                CAPTURE(d.m);
                CAPTURE(d.n);
                CAPTURE(d.k);
                CAPTURE(activation_name(act));
                auto x = uniform(g, d.m * d.n), w = uniform(g, d.k * d.n), b = uniform(g, d.k);
                auto X = Tensor::from_host(device(), {d.m, d.n}, x);
                auto W = Tensor::from_host(device(), {d.k, d.n}, w);
                auto Bias = Tensor::from_host(device(), {d.k}, b);
                auto Y = poisoned(device(), {d.m, d.k});
                ops::Options o;
                o.path = path;
                ops::dense(X, W, &Bias, Y, act, o);
                expect_close(Y.download(), reference::dense(x, w, b, d.m, d.n, d.k, act), threshold(Op::matmul),
                             std::string("dense ") + name(path));
            }
}
