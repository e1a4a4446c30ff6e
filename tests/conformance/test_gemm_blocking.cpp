// matmul and dense at sizes around the blocking of the CPU GEMM
// (backends/common/cpu_gemm.hpp: register tile MR×NR = 8×32 floats with a
// 16-column narrow panel on AVX-512, 6×16 with an 8-column one on AVX2;
// KC = 768 and NC = 1024 on AVX-512, 256 and 2048 on AVX2, the depth split
// into passes of equal length; MC = 192; A's rows packed by 8×8 transposes
// with a scalar tail; B read in place up to 4·MR rows, A read in place below
// 3 panels; host tiles of ≥ 64 rows, multiples of MR), one
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
    for (const auto& v : around(&MNK::m, {6, 8, 12, 16, 24, 32, 64, 128, 192, 384}, {0, 37, 19})) s.push_back(v);  // MR, MC, tiles
    for (const auto& v : around(&MNK::n, {8, 16, 24, 32, 48, 64, 96, 128}, {13, 0, 21}))
        s.push_back(v);                                                                     // narrow, NR, panels
    for (const auto& v : around(&MNK::n, {1024, 2048}, {9, 0, 5})) s.push_back(v);         // NC
    for (const auto& v : around(&MNK::k, {2, 8, 256, 512, 768, 1536}, {17, 35, 0})) s.push_back(v);  // KC, passes
    for (const auto& v : around(&MNK::k, {256, 768}, {200, 100, 0})) s.push_back(v);      // KC with packed A and B
    // Large enough for the host's threads to share packed B blocks (at least
    // 256 rows for 2 threads): two NC blocks with a partial panel, and two
    // depth passes.
    for (const MNK& v : std::vector<MNK>{{256, 1030, 40}, {263, 70, 800}}) s.push_back(v);
    // Skinny and small: the MLP layer, a dense layer, row and column vectors.
    for (const MNK& v : std::vector<MNK>{{4096, 10, 30}, {64, 128, 784}, {1, 777, 65}, {777, 1, 65}, {300, 2, 1},
                                         {5, 300, 1}, {1, 100, 600}, {65, 33, 3}})
        s.push_back(v);
    return s;
}

// Outputs large enough for a GPU's tile rule to pick 64×64 and 128×128 block
// tiles (the CUDA backend's matmul_tile takes a tile only when it gives at
// least 128 blocks): edges of 1, 63 and 127 rows/columns past a tile
// multiple, K of one partial 8-deep slice or several with a partial last one
// (the double-buffered loop's edge), and leading dimensions that allow
// 16-byte vector loads (multiples of 4) and that forbid them (odd).
std::vector<MNK> gpu_tile_shapes() {
    return {{1024, 576, 16},    // 64×64 tiles, every load vectorizable
            {1087, 577, 19},    // 64×64, edges of 63 rows and 1 column, no vectors
            {2048, 1152, 12},   // 128×128, aligned, K = 8 + 4
            {2049, 1151, 13},   // 128×128, edges of 1 row and 127 columns, no vectors
            {1920, 1280, 30},   // 128×128, rows along M/N vectorizable, rows along K (30) not
            {1030, 4, 5}};      // a skinny output: the smallest tile
}

// The native matmul in dtype t on each of `shapes` (within the work cap),
// every transpose, against the float64 reference of the stored inputs; the
// output NaN-poisoned first.
void check_native_matmul(DType t, const std::vector<MNK>& shapes, std::mt19937_64& g, const std::string& what) {
    for (const auto& s : within_work_cap(shapes, [](const MNK& x) { return x.m * x.n * x.k; }, what))
        for (int tr = 0; tr < 4; ++tr) {
            const bool ta = tr & 1, tb = tr & 2;
            CAPTURE(std::string(dtype_name(t)));
            INFO(describe(s, ta, tb));
            const auto a = stored(uniform(g, s.m * s.k), t), b = stored(uniform(g, s.k * s.n), t);
            auto A = Tensor::from_host(device(), ta ? Shape{s.k, s.m} : Shape{s.m, s.k}, a, t);
            auto B = Tensor::from_host(device(), tb ? Shape{s.n, s.k} : Shape{s.k, s.n}, b, t);
            auto C = Tensor::from_host(device(), {s.m, s.n},
                                       std::vector<float>(s.m * s.n, std::numeric_limits<float>::quiet_NaN()), t);
            ops::Options o;
            o.path = ops::PathChoice::native;
            ops::matmul(A, B, C, {ta, tb}, o);
            expect_close(C.download_as<double>(), reference::matmul(a, b, s.m, s.n, s.k, ta, tb),
                         threshold(Op::matmul, t), what + " " + dtype_name(t));
        }
}

}  // namespace

TEST_CASE("matmul matches the reference around the CPU GEMM's block sizes, every transpose and path") {
    if (!runs({Op::matmul})) return;
    auto g = rng(60);
    check_matmul_shapes(blocking_shapes(), g, "gemm blocking");
}

TEST_CASE("dense matches the reference around the CPU GEMM's block sizes") {
    if (!runs({Op::dense})) return;
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
                ops::dense(X, W, Bias, Y, act, o);
                expect_close(Y.download(), reference::dense(x, w, b, d.m, d.n, d.k, act), threshold(Op::matmul),
                             std::string("dense ") + name(path));
            }
}

TEST_CASE("matmul matches the reference at GPU tile sizes, every transpose and path") {
    if (!runs({Op::matmul})) return;
    auto g = rng(62);
    check_matmul_shapes(gpu_tile_shapes(), g, "gemm gpu tiles");
}

TEST_CASE("matmul and dense in every dtype match the reference at GPU tile sizes") {
    // f16 and bf16 are staged as float and f64 as double: the 16-bit
    // conversions on the way into shared memory and the double tiles get
    // the large-tile shapes too. Inputs are the values as stored in the dtype.
    auto g = rng(63);
    const std::vector<MNK> shapes{{2049, 1151, 13}, {1087, 577, 19}, {1024, 576, 16}};
    for (DType t : dtypes()) {
        if (!device()->kernel_table().supports(Op::matmul, t, OpPath::native)) continue;
        check_native_matmul(t, shapes, g, "gemm dtypes");
        // dense: x [batch, in]·W[out, in]ᵀ + bias, then sigmoid; batch × out at the large tiles.
        const std::size_t batch = 2049, in = 13, out = 1151;
        if (!runs_at_size(batch * in * out, "gemm dtypes dense")) continue;
        const auto x = stored(uniform(g, batch * in), t), w = stored(uniform(g, out * in), t),
                   b = stored(uniform(g, out), t);
        auto X = Tensor::from_host(device(), {batch, in}, x, t), W = Tensor::from_host(device(), {out, in}, w, t);
        auto Bias = Tensor::from_host(device(), {out}, b, t);
        auto Y = Tensor::from_host(device(), {batch, out},
                                   std::vector<float>(batch * out, std::numeric_limits<float>::quiet_NaN()), t);
        ops::Options o;
        o.path = ops::PathChoice::native;
        ops::dense(X, W, Bias, Y, Activation::sigmoid, o);
        expect_close(Y.download_as<double>(), reference::dense(x, w, b, batch, in, out, Activation::sigmoid),
                     threshold(Op::matmul, t), std::string("gemm dtypes dense ") + dtype_name(t));
    }
}

namespace {

// Depths around the slices of the GPU kernels (8-deep SIMT slices; 16-deep
// mma steps in 32-deep tensor-core slices; 8 values per 16-byte copy of a
// 16-bit row), with outputs whose rows are and are not multiples of 8
// values (16-byte rows of f16/bf16: the tensor-core kernel's cp.async path
// against its element copies).
std::vector<MNK> slice_shapes() {
    std::vector<MNK> s;
    bool aligned = false;
    for (std::size_t k : {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 65}) {
        s.push_back(aligned ? MNK{40, 48, k} : MNK{37, 45, k});
        aligned = !aligned;
    }
    s.push_back({37, 45, 64});
    return s;
}

// A tensor of `dtype` holding v (values representable in dtype).
Tensor exact_tensor(Shape shape, const std::vector<double>& v, DType dtype) {
    if (dtype == DType::f64) return Tensor::from_host(device(), shape, v);
    return Tensor::from_host(device(), shape, std::vector<float>(v.begin(), v.end()), dtype);
}

// The smallest positive normal value of dtype.
double smallest_normal(DType t) {
    switch (t) {
        case DType::f16: return std::ldexp(1.0, -14);
        case DType::f64: return std::numeric_limits<double>::min();
        default: return std::numeric_limits<float>::min();  // f32, bf16
    }
}

// v rounded once to dtype (to nearest even), as a kernel stores an exact result.
double rounded(double v, DType t) {
    unsigned char raw[8];
    convert_elements(&v, DType::f64, raw, t, 1);
    double back = 0;
    convert_elements(raw, t, &back, DType::f64, 1);
    return back;
}

}  // namespace

TEST_CASE("matmul in every dtype matches the reference around the GPU kernels' slices, every transpose") {
    if (!runs({Op::matmul})) return;
    auto g = rng(64);
    for (DType t : dtypes()) {
        if (!device()->kernel_table().supports(Op::matmul, t, OpPath::native)) continue;
        check_native_matmul(t, slice_shapes(), g, "gemm slices");
    }
}

TEST_CASE("matmul in every dtype carries NaN, ±Inf, ±0 and subnormal operands as the float64 reference does") {
    if (!runs({Op::matmul})) return;
    // A[m,k]·B[k,n] with: a NaN in row 1 of A (row 1 of C is NaN); +Inf in
    // column 7 of B, row 5 (column 7 of C is ±Inf, or NaN where A[i][5] is
    // 0); row 9 of A all zeros of both signs (+0 in C: some product is +0);
    // row 12 of A subnormal (multiples of smallest_normal / 64 up to 8 of
    // them) against B of quarter integers, so that its products and sums are
    // exact in every dtype. These rows must be the exact result rounded once
    // to the dtype, bit for bit; every other element is compared by the
    // op's NMSE threshold.
    const std::size_t m = 24, n = 24, k = 40;
    auto g = rng(65);
    std::uniform_int_distribution<int> small(-8, 8), quarter(-4, 4);
    for (DType t : dtypes()) {
        if (!device()->kernel_table().supports(Op::matmul, t, OpPath::native)) continue;
        const double tiny = smallest_normal(t) / 64;
        for (int tr = 0; tr < 4; ++tr) {
            const bool ta = tr & 1, tb = tr & 2;
            CAPTURE(std::string(dtype_name(t)));
            CAPTURE(ta);
            CAPTURE(tb);
            std::vector<double> a(m * k), b(k * n);  // logical A[i][p] and B[p][j], row-major
            for (auto& v : a) v = quarter(g) / 4.0;
            for (auto& v : b) v = quarter(g) / 4.0;
            a[1 * k + 3] = std::numeric_limits<double>::quiet_NaN();
            b[5 * n + 7] = std::numeric_limits<double>::infinity();
            for (std::size_t p = 0; p < k; ++p) {
                a[9 * k + p] = p % 2 ? -0.0 : 0.0;
                a[12 * k + p] = small(g) * tiny;
            }
            a[3 * k + 5] = 0.0;  // 0·Inf: NaN at C[3][7]
            // Stored as the transposes ask.
            std::vector<double> as(a.size()), bs(b.size());
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t p = 0; p < k; ++p) as[ta ? p * m + i : i * k + p] = a[i * k + p];
            for (std::size_t p = 0; p < k; ++p)
                for (std::size_t j = 0; j < n; ++j) bs[tb ? j * k + p : p * n + j] = b[p * n + j];
            auto A = exact_tensor(ta ? Shape{k, m} : Shape{m, k}, as, t);
            auto B = exact_tensor(tb ? Shape{n, k} : Shape{k, n}, bs, t);
            auto C = poisoned(device(), {m, n}).to(t);
            ops::Options o;
            o.path = ops::PathChoice::native;
            ops::matmul(A, B, C, {ta, tb}, o);
            const std::vector<double> got = C.download_as<double>(), ref = reference::matmul(as, bs, m, n, k, ta, tb);
            std::vector<double> got_rest, ref_rest;
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                    const double x = got[i * n + j], r = ref[i * n + j];
                    INFO("C[" << i << "][" << j << "] = " << x << ", reference " << r);
                    if (std::isnan(r)) {
                        CHECK(std::isnan(x));
                    } else if (std::isinf(r) || i == 9 || i == 12) {
                        CHECK(x == rounded(r, t));
                        CHECK(std::signbit(x) == std::signbit(r));
                    } else {
                        got_rest.push_back(x);
                        ref_rest.push_back(r);
                    }
                }
            expect_close(got_rest, ref_rest, threshold(Op::matmul, t), std::string("gemm specials ") + dtype_name(t));
        }
    }
}
