// ACCEL_CHECK / accel::check on the device under test: correct kernels pass
// the check against the oracle and against the host backend; a wrong result
// is caught and named; records round-trip and bad ones are refused.
#include "support/check.hpp"

#include <accel/check.hpp>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <thread>

using namespace accel;
using accel_test::device;

namespace {

// Turns the check on for one scope.
struct Checking {
    explicit Checking(const std::string& against, bool warn = false) {
        check::start(against, warn, TRACE_TEST_TMPDIR);
    }
    ~Checking() { check::stop(); }
};

// A short training-like sequence of ops on `d` (those it runs), fresh data.
void run_ops(const std::shared_ptr<Device>& d, std::mt19937_64& g) {
    const bool f16 = d->kernel_table().supports(Op::convert, DType::f16, OpPath::native);
    Tensor x = Tensor::from_host(d, Shape{16, 12}, accel_test::uniform(g, 192));
    Tensor w = Tensor::from_host(d, Shape{8, 12}, accel_test::uniform(g, 96));
    Tensor b = Tensor::from_host(d, Shape{8}, accel_test::uniform(g, 8));
    Tensor y(d, Shape{16, 8}), dy = Tensor::from_host(d, Shape{16, 8}, accel_test::uniform(g, 128));
    Tensor dx(d, Shape{16, 12}), dw(d, Shape{8, 12}), db(d, Shape{8});
    for (auto path : accel_test::paths(Op::dense)) {
        ops::Options o;
        o.path = path;
        y = accel_test::poisoned(d, Shape{16, 8});  // NaN: an output the kernel must not read (gemm's beta 0)
        ops::dense(x, w, b, y, Activation::relu, o);
        ops::dense_backward(x, w, y, dy, Activation::relu, &dx, dw, &db, o);
        ops::matmul(x, w, y, ops::Transpose{false, true}, o);
    }
    Tensor z = Tensor::from_host(d, Shape{128}, accel_test::uniform(g, 128, -4, 4));
    Tensor t = Tensor::from_host(d, Shape{128}, accel_test::uniform(g, 128, 0, 1));
    Tensor dz(d, Shape{128}), s(d, Shape{128});
    (void)ops::bce_with_logits_loss(z, t);
    ops::bce_with_logits_backward(z, t, dz);
    ops::sigmoid(z, s);
    Tensor m = Tensor::from_host(d, Shape{128}, std::vector<float>(128, 0.0f));
    Tensor v = Tensor::from_host(d, Shape{128}, std::vector<float>(128, 0.0f));
    ops::adam_step(z, dz, m, v, 1, ops::AdamParams{});
    if (f16) (void)z.to(DType::f16);
}

std::string temp_file(const std::string& what) {
    return std::string(TRACE_TEST_TMPDIR) + "/" + what + "-" + std::to_string(::getpid()) + ".cbor";
}

}  // namespace

// The ops run_ops calls.
const std::vector<Op> kRunOps{Op::dense,           Op::matmul,          Op::column_sum,
                              Op::relu_backward,   Op::bce_with_logits, Op::bce_with_logits_backward,
                              Op::sigmoid,         Op::adam_step};

TEST_CASE("correct kernels pass the shadow check against the float64 oracle") {
    if (!accel_test::runs(kRunOps)) return;
    auto g = accel_test::rng(71);
    Checking on("oracle");
    CHECK(check::active());
    CHECK_NOTHROW(run_ops(device(), g));
}

TEST_CASE("correct kernels pass the shadow check against the host backend") {
    if (!accel_test::runs(kRunOps)) return;
    auto g = accel_test::rng(72);
    Checking on("host");
    CHECK_NOTHROW(run_ops(device(), g));
}

TEST_CASE("a wrong result is caught, named, recorded, and replays") {
    // An op of this test's own whose host kernel is off by 1 % on one element
    // in 97: what a kernel bug looks like to the check.
    static const Op scale2 = [] {
        OpInfo info = accel_test::unary_test_op("test_check_scale2", "y = 2x");
        info.elementwise_reference = [](double x, double) { return 2 * x; };
        info.input_ranges = {{-1.0f, 1.0f}};
        return define_op(info);
    }();
    auto host = open_device("host");
    host->kernel_table().add(scale2, DType::f32, OpPath::native, [](const KernelArgs& a) {
        const float* x = static_cast<const float*>(a.in[0]);
        float* y = static_cast<float*>(a.out[0]);
        for (std::size_t i = 0; i < a.n; ++i) y[i] = 2 * x[i] * (i == 42 ? 1.01f : 1.0f);
    });
    auto g = accel_test::rng(73);
    const std::vector<float> xs = accel_test::uniform(g, 97, 0.5f, 1.0f);
    Tensor x = Tensor::from_host(host, Shape{97}, xs), y(host, Shape{97});
    // Unchecked, the op runs; checked, it fails naming the call.
    CHECK_NOTHROW(ops::run(scale2, {&x}, {&y}));
    std::string record;
    {
        Checking on("oracle");
        try {
            ops::run(scale2, {&x}, {&y});
            FAIL("the check let a wrong result through");
        } catch (const CheckFailed& e) {
            const std::string m = e.what();
            MESSAGE(m);
            CHECK(m.find("on host:0") != std::string::npos);
            CHECK(m.find("of test_check_scale2") != std::string::npos);
            CHECK(m.find("x[97] -> y[97]") != std::string::npos);
            CHECK(m.find("worst element y[42]") != std::string::npos);
            CHECK(m.find("the float64 oracle") != std::string::npos);
            record = e.record_path();
        }
    }
    REQUIRE_FALSE(record.empty());
    const check::OpRecord r = check::load(record);
    CHECK(r.op == "test_check_scale2");
    CHECK(r.n == 97);
    CHECK(r.threshold == 1e-12);
    CHECK(r.nmse > r.threshold);
    CHECK(check::widen(r.inputs[0], DType::f32)[42] == doctest::Approx(xs[42]));
    const auto want = check::oracle(r);
    CHECK(want[0][42] == doctest::Approx(2.0 * xs[42]));
    // The recorded result, and a rerun on the host, diverge at element 42.
    const auto again = check::compare(check::rerun(r, *host), want);
    CHECK(again.nmse > r.threshold);
    CHECK(again.index == 42);
    // Warn mode: reported and goes on.
    {
        Checking on("oracle", true);
        CHECK_NOTHROW(ops::run(scale2, {&x}, {&y}));
    }
    std::remove(record.c_str());
    // Replayed from a graph (accel/graph.hpp), the call is checked as the eager one is.
    const Graph graph = capture(host->default_stream(), [&] { ops::run(scale2, {&x}, {&y}); });
    CHECK_NOTHROW(graph.launch());
    {
        Checking on("oracle");
        try {
            graph.launch();
            FAIL("the check let a replay's wrong result through");
        } catch (const CheckFailed& e) {
            CHECK(std::string(e.what()).find("of test_check_scale2") != std::string::npos);
            std::remove(e.record_path().c_str());
        }
    }
}

TEST_CASE("records round-trip, and a file that is not one is refused with the reason") {
    check::OpRecord r;
    r.op = "matmul";
    r.m = 2;
    r.n = 3;
    r.k = 4;
    r.trans_b = true;
    std::vector<float> a(8, 1.5f), b(12, -2.0f), c(6, 0.0f);
    auto bytes = [](const std::vector<float>& v) {
        const auto* p = reinterpret_cast<const unsigned char*>(v.data());
        return std::vector<unsigned char>(p, p + v.size() * sizeof(float));
    };
    r.inputs = {bytes(a), bytes(b)};
    r.outputs_before = {bytes(c)};
    r.seq = 37;
    const std::string file = temp_file("record");
    check::save(r, file);
    const check::OpRecord back = check::load(file);
    CHECK(back.op == "matmul");
    CHECK(back.trans_b);
    CHECK(back.seq == 37);
    CHECK(back.inputs == r.inputs);
    const auto want = check::oracle(back);
    REQUIRE(want.size() == 1);
    for (double v : want[0]) CHECK(v == -12.0);

    // Operand sizes that do not match the shapes.
    r.inputs[1].pop_back();
    check::save(r, file);
    CHECK_THROWS_WITH_AS(check::load(file), doctest::Contains("input 'b' has 47 bytes; its shape needs 48"),
                         InvalidArgument);
    // Not CBOR at all, and a missing file.
    std::ofstream(file) << "{\"format\": \"accel-op-record\"}";
    CHECK_THROWS_WITH_AS(check::load(file), doctest::Contains("is not a usable accel op record"), InvalidArgument);
    std::remove(file.c_str());
    CHECK_THROWS_AS(check::load(file), InvalidArgument);
    // A check against nothing, or a selector that does not parse.
    CHECK_THROWS_AS(check::start(""), InvalidArgument);
    CHECK_THROWS_AS(check::start("no such backend!"), InvalidArgument);
    CHECK_FALSE(check::active());
}

TEST_CASE("the check holds with threads on their own streams and on the shared default stream") {
    if (!accel_test::runs({Op::add, Op::matmul})) return;
    auto& d = device();
    Checking on("oracle");
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&d, &failures, i] {
            try {
                auto g = accel_test::rng(80 + i);
                auto own = d->create_stream();
                ops::Options o;
                if (i % 2) o.stream = own.get();  // half on their own stream, half on the default one
                Tensor a = Tensor::from_host(d, Shape{9, 7}, accel_test::uniform(g, 63));
                Tensor b = Tensor::from_host(d, Shape{7, 5}, accel_test::uniform(g, 35));
                Tensor c(d, Shape{9, 5}), s(d, Shape{9, 7});
                for (int k = 0; k < 10; ++k) {
                    ops::matmul(a, b, c, {}, o);
                    ops::add(a, a, s, o);
                }
                own->synchronize();
            } catch (const std::exception& e) {
                std::fprintf(stderr, "%s\n", e.what());
                ++failures;
            }
        });
    for (auto& t : threads) t.join();
    CHECK(failures == 0);
}

TEST_CASE("a sum that cancels is judged at the size of its terms, as the conformance suite judges sums") {
    // column_sum of 40 terms of ±1..2 that cancel to ~1e-4, computed in
    // float32: its error relative to the result is ~1e-3, far past the NMSE
    // threshold, yet it is what any correct float32 sum gives (found on the
    // MLP example's output-layer gradient after 100 epochs).
    std::mt19937_64 g(2026);  // fixed data: a sum that does round (some draws sum exactly)
    std::vector<float> x(40);
    for (std::size_t i = 0; i < x.size(); i += 2) {
        x[i] = accel_test::uniform(g, 1, 1.0f, 2.0f)[0] + std::ldexp(1.0f, -23) * float(i % 7);
        x[i + 1] = -x[i] * (1.0f - std::ldexp(1.0f, -22)) + (i == 0 ? 1e-4f : 0.0f);
    }
    float sum = 0;  // a correct float32 sum, in an order that rounds: the positive terms first
    for (float v : x)
        if (v > 0) sum += v;
    for (float v : x)
        if (v < 0) sum += v;
    auto bytes = [](const std::vector<float>& v) {
        const auto* p = reinterpret_cast<const unsigned char*>(v.data());
        return std::vector<unsigned char>(p, p + v.size() * sizeof(float));
    };
    check::OpRecord r;
    r.op = "column_sum";
    r.m = 40;
    r.n = 1;
    r.inputs = {bytes(x)};
    r.outputs_before = {bytes({0.0f})};
    const auto want = check::oracle(r), magnitude = check::scale(r, want);
    const std::vector<std::vector<double>> got{{double(sum)}};
    const double threshold = nmse_threshold(Op::column_sum, DType::f32);
    CHECK(magnitude[0][0] > 40);  // Σ|x|
    CHECK(check::compare(got, want).nmse > threshold);  // relative to the result: a false alarm
    CHECK(check::compare(got, want, magnitude).nmse <= threshold);
    // A wrong sum is still caught at that scale.
    const std::vector<std::vector<double>> wrong{{double(sum) + 1e-2}};
    CHECK(check::compare(wrong, want, magnitude).nmse > threshold);
}
