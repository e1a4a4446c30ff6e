// Deterministic mode (accel/ops.hpp): what it promises, checked bit for bit.
//
// Within one process: row i of matmul, dense and dense_backward's dx is the
// same whether the call has 1, 7 or 256 rows; every op gives the same bits
// when called again and on another stream; the vendor path is refused and
// `auto` runs native. Across processes and thread counts the same is checked
// by tests/determinism (digests of one workload under 1 and 2 threads).
#include "support/check.hpp"

#include <cstdlib>
#include <cstring>
#include <functional>

using namespace accel;
using namespace accel_test;

namespace {

// Whether the device runs `op` natively in `dtype`; else says so once per case.
bool runs_in(Op op, DType dtype) {
    if (device()->kernel_table().supports(op, dtype, OpPath::native)) return true;
    MESSAGE(op_name(op) << " in " << dtype_name(dtype) << " is not run here: "
                        << device()->kernel_table().unsupported_reason(op, dtype, OpPath::native));
    return false;
}

// The raw bytes of a tensor: bits, not values (−0 differs from +0, NaN
// payloads count).
std::vector<unsigned char> bits_of(const Tensor& t) {
    std::vector<unsigned char> out(t.bytes());
    if (!out.empty()) t.buffer().download(out.data(), out.size());
    return out;
}

// Rows [0, rows) of a row-major tensor's bits.
std::vector<unsigned char> first_rows(const std::vector<unsigned char>& bits, std::size_t rows, std::size_t row_bytes) {
    return {bits.begin(), bits.begin() + static_cast<std::ptrdiff_t>(rows * row_bytes)};
}

// The first differing row of `got` against `want` (equal lengths), or -1.
long first_differing_row(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want,
                         std::size_t row_bytes) {
    for (std::size_t r = 0; r * row_bytes < got.size(); ++r)
        if (std::memcmp(got.data() + r * row_bytes, want.data() + r * row_bytes, row_bytes) != 0)
            return static_cast<long>(r);
    return -1;
}

// Whether the device's backend promises what the mode needs; when it does
// not, checks that the mode refuses its ops instead (and says so).
bool promised() {
    const Determinism& p = device()->info().determinism;
    if (p.reproducible && p.batch_invariant) return true;
    MESSAGE(device()->selector() << "'s backend promises no deterministic kernels: the mode must refuse its ops");
    ops::Options o;
    o.deterministic = true;
    CHECK_THROWS_AS(ops::resolve_path(*device(), Op::matmul, o), Unsupported);
    return false;
}

// Whether ACCEL_OP_PATH forces the vendor path on this process's ops, which
// deterministic mode refuses (checked below): the mode's native-kernel cases
// then have nothing to run, and say so; the suite run without the variable
// (or with =native) checks them.
bool vendor_forced() {
    const char* v = std::getenv("ACCEL_OP_PATH");
    if (!v) return false;
    try {
        if (ops::parse_path_choice(v) != ops::PathChoice::vendor) return false;
    } catch (const InvalidArgument&) {
        return false;  // the ops reject it themselves
    }
    MESSAGE("skipped: ACCEL_OP_PATH=" << std::string(v) << " forces the vendor path, which deterministic mode refuses "
            "(its native kernels are checked in a run without ACCEL_OP_PATH=vendor)");
    return true;
}

ops::Options deterministic() {
    ops::Options o;
    o.deterministic = true;
    return o;
}

// Checks that `run(rows)` (an output of `rows` × `cols` elements of `dtype`)
// gives, for rows = 1 and 7, the first rows of its 256-row result. (A
// repeated call is the next test case's.)
void expect_batch_invariant(const std::function<Tensor(std::size_t)>& run, std::size_t cols, DType dtype,
                            const std::string& what) {
    constexpr std::size_t kFull = 256;
    const std::size_t row_bytes = cols * dtype_size(dtype);
    const auto full = bits_of(run(kFull));
    for (std::size_t rows : {std::size_t{1}, std::size_t{7}}) {
        const long row = first_differing_row(bits_of(run(rows)), first_rows(full, rows, row_bytes), row_bytes);
        CHECK_MESSAGE(row < 0, what << ": row " << row << " of a call with " << rows
                                    << " rows differs from the same row of the call with " << kFull << " rows");
    }
}

}  // namespace

TEST_CASE("deterministic mode: matmul, dense and dense_backward rows do not depend on the batch size, in every dtype") {
    if (vendor_forced() || !promised()) return;
    auto g = rng(70);
    const ops::Options o = deterministic();
    struct Product {
        std::size_t n, k;
    };
    // K = 300 runs two passes over k on CPUs, K = 33 one ragged pass, N = 1
    // a narrow tile; 256 × 30 × 300 is past the host's one-thread size. A
    // kernel checker's cap (Oclgrind's 70000) leaves them all out: about 150
    // launches per dtype take minutes there.
    const std::vector<Product> products = within_work_cap(
        std::vector<Product>{{30, 300}, {65, 33}, {1, 300}}, [](const Product& p) { return 256 * p.n * p.k; },
        "deterministic matmul");
    for (DType dt : dtypes()) {
        CAPTURE(std::string(dtype_name(dt)));
        if (selected(Op::matmul) && runs_in(Op::matmul, dt))
            for (const Product& p : products)
                for (bool ta : {false, true})
                    for (bool tb : {false, true}) {
                        const auto a = uniform(g, 256 * p.k), b = uniform(g, p.k * p.n);
                        const Tensor B = Tensor::from_host(device(), tb ? Shape{p.n, p.k} : Shape{p.k, p.n}, b, dt);
                        expect_batch_invariant(
                            [&](std::size_t m) {
                                // op(A)'s first m rows: A[m, k], or A[k, m] for the transpose.
                                std::vector<float> rows(m * p.k);
                                for (std::size_t i = 0; i < m; ++i)
                                    for (std::size_t j = 0; j < p.k; ++j)
                                        rows[ta ? j * m + i : i * p.k + j] = a[i * p.k + j];
                                const Tensor A = Tensor::from_host(device(), ta ? Shape{p.k, m} : Shape{m, p.k}, rows, dt);
                                Tensor C(device(), {m, p.n}, dt);
                                ops::matmul(A, B, C, {ta, tb}, o);
                                return C;
                            },
                            p.n, dt, "matmul " + describe({256, p.n, p.k}, ta, tb));
                    }
        if (selected(Op::dense) && runs_in(Op::dense, dt))
            for (const Product& p : products)
                // The activation is applied after each element's sum: three of them, with and without bias.
                for (Activation act : {Activation::none, Activation::relu, Activation::gelu_tanh})
                    for (bool with_bias : {act != Activation::relu}) {
                        const auto x = uniform(g, 256 * p.k);
                        const Tensor W = Tensor::from_host(device(), {p.n, p.k}, uniform(g, p.n * p.k), dt);
                        const Tensor bias = Tensor::from_host(device(), {p.n}, uniform(g, p.n), dt);
                        expect_batch_invariant(
                            [&](std::size_t batch) {
                                const Tensor X = Tensor::from_host(
                                    device(), {batch, p.k}, std::vector<float>(x.begin(), x.begin() + batch * p.k), dt);
                                Tensor Y(device(), {batch, p.n}, dt);
                                ops::dense(X, W, with_bias ? OptionalTensor(std::cref(bias)) : std::nullopt, Y, act, o);
                                return Y;
                            },
                            p.n, dt,
                            std::string("dense ") + activation_name(act) + (with_bias ? " with bias" : "") +
                                " in " + std::to_string(p.k) + " out " + std::to_string(p.n));
                    }
        if (selected(Op::dense) && runs_in(Op::matmul, dt) && runs_in(Op::dense, dt))
            for (const Product& p : products)
                for (Activation act : {Activation::relu, Activation::gelu}) {  // y's gradient, and z's
                    const auto x = uniform(g, 256 * p.k), dy = uniform(g, 256 * p.n);
                    const Tensor W = Tensor::from_host(device(), {p.n, p.k}, uniform(g, p.n * p.k), dt);
                    expect_batch_invariant(
                        [&](std::size_t batch) {
                            const auto head = [batch](const std::vector<float>& v, std::size_t cols) {
                                return std::vector<float>(v.begin(), v.begin() + batch * cols);
                            };
                            const Tensor X = Tensor::from_host(device(), {batch, p.k}, head(x, p.k), dt);
                            const Tensor DY = Tensor::from_host(device(), {batch, p.n}, head(dy, p.n), dt);
                            Tensor Z(device(), {batch, p.n}, dt), Y(device(), {batch, p.n}, dt);
                            ops::dense(X, W, std::nullopt, Z, Activation::none, o);
                            ops::dense(X, W, std::nullopt, Y, act, o);
                            Tensor DX(device(), {batch, p.k}, dt), DW(device(), {p.n, p.k}, dt);
                            ops::dense_backward(X, W, Y, DY, act, &DX, DW, nullptr, o, Z);
                            return DX;
                        },
                        p.k, dt, std::string("dense_backward dx, ") + activation_name(act) + " in " + std::to_string(p.k) + " out " + std::to_string(p.n));
                }
    }
}

TEST_CASE("deterministic mode: a product that underflows to -0 gives the same bits at every batch size") {
    // K = 1, negative tiny products below the dtype's (or the f32 sum's)
    // smallest subnormal: a full tile and an edge tile must not differ in
    // the sign of the zero (the CPU GEMM's edge tiles once added 0 + sum).
    if (vendor_forced() || !promised()) return;
    auto g = rng(72);
    const std::size_t n = 40;
    for (DType dt : dtypes()) {
        CAPTURE(std::string(dtype_name(dt)));
        if (!selected(Op::matmul) || !runs_in(Op::matmul, dt)) continue;
        // Scales whose product rounds to zero: below 2^-149 in the f32 sum (bf16 too), 2^-1074 in f64,
        // and 2^-25 once stored in f16.
        const float scale = dt == DType::f16 ? 0x1p-14f : 0x1p-80f;
        const double scale64 = 0x1p-600;
        const auto mags_a = uniform(g, 256, 1.0f, 1.5f), mags_b = uniform(g, n, 1.0f, 1.5f);
        std::vector<float> b(n);
        for (std::size_t j = 0; j < n; ++j) b[j] = (j % 3 ? 1.0f : -1.0f) * mags_b[j] * scale;
        const auto upload64 = [&](const std::vector<float>& v, double s, Shape shape) {
            std::vector<double> d(v.size());
            for (std::size_t i = 0; i < v.size(); ++i) d[i] = v[i] / scale * s;
            return Tensor::from_host(device(), shape, d);
        };
        const Tensor B = dt == DType::f64 ? upload64(b, scale64, {1, n}) : Tensor::from_host(device(), {1, n}, b, dt);
        expect_batch_invariant(
            [&](std::size_t m) {
                std::vector<float> a(m);
                for (std::size_t i = 0; i < m; ++i) a[i] = -mags_a[i] * scale;
                const Tensor A = dt == DType::f64 ? upload64(a, scale64, {m, 1}) : Tensor::from_host(device(), {m, 1}, a, dt);
                Tensor C(device(), {m, n}, dt);
                ops::matmul(A, B, C, {}, deterministic());
                return C;
            },
            n, dt, "matmul [m,1]x[1,40] of underflowing products");
    }
}

TEST_CASE("deterministic mode: every op gives the same bits again and on another stream, in every dtype") {
    if (vendor_forced() || !promised()) return;
    auto g = rng(71);
    const auto other = device()->create_stream();
    // column_sum over 96 rows, products of K = 130; a kernel checker's smaller cap: 12 × 20.
    const bool full = size_within_cap(96 * 130 * 130, 12 * 20 * 20, "deterministic every op") > 12 * 20 * 20;
    const std::size_t rows = full ? 96 : 12, cols = full ? 130 : 20;
    for (DType dt : dtypes()) {
        CAPTURE(std::string(dtype_name(dt)));
        const auto t = [&](std::size_t r, std::size_t c, float lo = -1, float hi = 1) {
            return Tensor::from_host(device(), {r, c}, uniform(g, r * c, lo, hi), dt);
        };
        const Tensor a = t(rows, cols), b = t(rows, cols), w = t(cols, cols), p01 = t(rows, cols, 0, 1);
        const std::vector<float> params = uniform(g, rows * cols);
        // Each op's call on stream `s`, returning its output.
        const std::vector<std::pair<Op, std::function<Tensor(ops::Options)>>> calls{
            {Op::add, [&](ops::Options o) { Tensor c(device(), {rows, cols}, dt); ops::add(a, b, c, o); return c; }},
            {Op::mul, [&](ops::Options o) { Tensor c(device(), {rows, cols}, dt); ops::mul(a, b, c, o); return c; }},
            {Op::sigmoid, [&](ops::Options o) { Tensor c(device(), {rows, cols}, dt); ops::sigmoid(a, c, o); return c; }},
            {Op::gelu, [&](ops::Options o) { Tensor c(device(), {rows, cols}, dt); ops::gelu(a, c, o); return c; }},
            {Op::gelu_backward,
             [&](ops::Options o) { Tensor c(device(), {rows, cols}, dt); ops::gelu_backward(b, a, c, o); return c; }},
            {Op::column_sum, [&](ops::Options o) { Tensor c(device(), {cols}, dt); ops::column_sum(a, c, o); return c; }},
            {Op::dot, [&](ops::Options o) { Tensor c(device(), {1}, dt); ops::dot(a, b, c, o); return c; }},
            {Op::triad, [&](ops::Options o) { Tensor c(device(), {rows, cols}, dt); ops::triad(a, b, 0.4, c, o); return c; }},
            {Op::bce_with_logits_backward,
             [&](ops::Options o) {
                 Tensor c(device(), {rows, cols}, dt);
                 ops::bce_with_logits_backward(a, p01, c, o);
                 return c;
             }},
            {Op::matmul, [&](ops::Options o) { Tensor c(device(), {rows, cols}, dt); ops::matmul(a, w, c, {}, o); return c; }},
            {Op::dense,
             [&](ops::Options o) {
                 Tensor c(device(), {rows, cols}, dt);
                 ops::dense(a, w, std::nullopt, c, Activation::gelu_tanh, o);
                 return c;
             }},
            {Op::adam_step,
             [&](ops::Options o) {
                 const std::vector<float> zeros(rows * cols, 0.0f);
                 Tensor p = Tensor::from_host(device(), {rows, cols}, params, dt);
                 Tensor m = Tensor::from_host(device(), {rows, cols}, zeros, dt);
                 Tensor v = Tensor::from_host(device(), {rows, cols}, zeros, dt);
                 for (std::size_t step = 1; step <= 3; ++step) ops::adam_step(p, a, m, v, step, {}, o);
                 return p;
             }},
        };
        for (const auto& entry : calls) {  // not a structured binding: doctest's messages capture `op` in a lambda
            const Op op = entry.first;
            const auto& call = entry.second;
            if (!selected(op) || !runs_in(op, dt)) continue;
            CAPTURE(std::string(op_name(op)));
            ops::Options on_default = deterministic(), on_other = deterministic();
            on_other.stream = other.get();
            const auto first = bits_of(call(on_default));
            CHECK_MESSAGE(bits_of(call(on_default)) == first, op_name(op) << ": a second call gave other bits");
            Tensor there = call(on_other);
            other->synchronize();
            CHECK_MESSAGE(bits_of(there) == first, op_name(op) << ": the call on another stream gave other bits");
        }
        if (selected(Op::bce_with_logits) && runs_in(Op::bce_with_logits, dt)) {
            const float loss = ops::bce_with_logits_loss(a, p01, deterministic());
            const float again = ops::bce_with_logits_loss(a, p01, deterministic());
            CHECK_MESSAGE(std::memcmp(&loss, &again, sizeof loss) == 0, "bce_with_logits_loss: " << loss << " then " << again);
        }
    }
}

TEST_CASE("deterministic mode refuses the vendor path of matmul and dense and runs auto natively") {
    if (!runs({Op::matmul}) || !promised()) return;
    const Device& d = *device();
    ops::Options o = deterministic();
    if (!vendor_forced()) {  // auto is native in the mode, unless the process forces the vendor path
        CHECK(ops::resolve_path(d, Op::matmul, o) == OpPath::native);
        CHECK(ops::resolve_path(d, Op::dense, o, DType::f32, {256, 30, 4096, false, true}) == OpPath::native);
    }
    o.path = ops::PathChoice::vendor;
    const std::string refused = message_of([&] { ops::resolve_path(d, Op::matmul, o); });
    INFO(refused);
    CHECK(contains(refused, "in deterministic mode, which it cannot keep"));  // with or without a vendor library
    {
        ScopedEnv vendor("ACCEL_OP_PATH", "vendor");
        const std::string from_env = message_of([&] { ops::resolve_path(d, Op::dense, deterministic()); });
        INFO(from_env);
        CHECK(contains(from_env, "ACCEL_OP_PATH=vendor"));
    }
    // The device's setting applies where the call does not choose; the call's wins.
    const bool was = device()->deterministic();
    device()->set_deterministic(true);
    CHECK(ops::deterministic_mode(d, ops::Options{}));
    ops::Options off;
    off.deterministic = false;
    CHECK_FALSE(ops::deterministic_mode(d, off));
    device()->set_deterministic(was);
    CHECK_FALSE(d.info().determinism.basis.empty());  // accel-info shows what the promise rests on
}
