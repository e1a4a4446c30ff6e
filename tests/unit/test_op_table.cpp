// The op table and kernels as data: an op added to the table and given a
// kernel on one backend runs there, while every plugin built before it
// existed still loads and reports it unsupported.
#include <accel/accel.hpp>
#include <accel/reference.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

#include "other_devices.hpp"
#include "support/check.hpp"

using namespace accel;

namespace {

using accel_test::contains;

// A test-only op: y = 2x + 1, elementwise (defined once per process).
Op scale_shift_op() {
    static const Op op = define_op(accel_test::unary_test_op("test_scale_shift", "y = 2x + 1"));
    return op;
}

}  // namespace

TEST_CASE("the op table: one entry per built-in op, every threshold set, names unique") {
    const auto table = op_table();
    REQUIRE(table.size() >= kBuiltinOpCount);
    for (std::size_t i = 0; i < kBuiltinOpCount; ++i) {
        const OpInfo& info = *table[i];
        CAPTURE(info.name);
        CHECK(static_cast<std::size_t>(info.op) == i);
        CHECK(find_op(info.name) == &info);
        CHECK(std::string(op_name(info.op)) == info.name);
        CHECK_FALSE(info.outputs.empty());
        CHECK_FALSE(info.nmse_reason.empty());
        for (DType t : kAllDTypes) {
            // Never tighter than one rounding to the dtype allows (u²), never loose enough to pass garbage.
            CHECK(nmse_threshold(info.op, t) >= unit_roundoff(t) * unit_roundoff(t));
            CHECK(nmse_threshold(info.op, t) <= 1e-3);
        }
        const bool counted = info.flops && info.bytes;
        CHECK(counted);
    }
    CHECK(op_info(Op::matmul).flops({64, 32, 16}) == 2.0 * 64 * 32 * 16);
    CHECK(op_info(Op::add).bytes({1, 1000, 0}, DType::f16) == 3 * 1000 * 2);
    CHECK_THROWS_AS(op_info(static_cast<Op>(100000)), InvalidArgument);
    CHECK(std::string(op_name(static_cast<Op>(-1))) == "?");
}

TEST_CASE("define_op rejects a taken name, no output, or a threshold that is not positive") {
    OpInfo dup = op_info(Op::add);
    CHECK_THROWS_AS(define_op(dup), InvalidArgument);
    OpInfo no_out;
    no_out.name = "test_no_output";
    no_out.nmse = {1, 1, 1, 1};
    CHECK_THROWS_AS(define_op(no_out), InvalidArgument);
    OpInfo bad;
    bad.name = "test_bad_threshold";
    bad.outputs = {"y"};
    bad.nmse = {1e-12, 0, 1e-6, 1e-4};
    try {
        define_op(bad);
        FAIL("a zero threshold was accepted");
    } catch (const InvalidArgument& e) {
        CHECK(contains(e.what(), "f64"));
    }
    CHECK(find_op("test_bad_threshold") == nullptr);
}

TEST_CASE("an op added to the table and to the host backend only runs there and is unsupported elsewhere") {
    const Op op = scale_shift_op();
    auto host = open_device("host");
    CHECK_FALSE(host->kernel_table().supports(op, DType::f32, OpPath::native));
    host->kernel_table().add("test_scale_shift", DType::f32, OpPath::native, [](const KernelArgs& a) {
        const float* x = static_cast<const float*>(a.in[0]);
        float* y = static_cast<float*>(a.out[0]);
        for (std::size_t i = 0; i < a.n; ++i) y[i] = 2.0f * x[i] + 1.0f;
    });
    CHECK(host->kernel_table().supports(op, DType::f32, OpPath::native));
    CHECK_FALSE(host->kernel_table().supports(op, DType::f16, OpPath::native));

    std::mt19937_64 g(std::random_device{}());
    std::uniform_real_distribution<float> u(-10, 10);
    std::vector<float> x(1001);
    for (float& v : x) v = u(g);
    auto tx = Tensor::from_host(host, {x.size()}, x);
    Tensor ty(host, {x.size()});
    ops::run(op, {&tx}, {&ty});
    reference::Vec want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = 2.0 * x[i] + 1.0;
    CHECK(reference::nmse(ty.download(), want) <= nmse_threshold(op, DType::f32));

    // f16 has no kernel: Unsupported naming op, dtype and device.
    auto hx = Tensor::from_host(host, {4}, std::vector<float>{1, 2, 3, 4}, DType::f16);
    Tensor hy(host, {4}, DType::f16);
    try {
        ops::run(op, {&hx}, {&hy});
        FAIL("an f16 call without a kernel ran");
    } catch (const Unsupported& e) {
        CHECK(contains(e.what(), "test_scale_shift"));
        CHECK(contains(e.what(), "f16"));
        CHECK(contains(e.what(), "host:0"));
    }

    // Every other backend's plugin was built without the op: it loads, runs
    // its own ops, and reports this one unsupported.
    int others = 0;
    for (const auto& d : other_backend_devices()) {
        CAPTURE(d->selector());
        ++others;
        CHECK(d->kernel_table().supports(Op::add, DType::f32, OpPath::native));
        CHECK_FALSE(d->kernel_table().supports(op, DType::f32, OpPath::native));
        auto dx = Tensor::from_host(d, {3}, std::vector<float>{1, 2, 3});
        Tensor dy(d, {3});
        try {
            ops::run(op, {&dx}, {&dy});
            FAIL("ran on a backend without a kernel");
        } catch (const Unsupported& e) {
            CHECK(contains(e.what(), "test_scale_shift"));
            CHECK(contains(e.what(), d->selector()));
        }
    }
    MESSAGE(others << " other backend(s) checked");
}

TEST_CASE("a kernel registered under a name the op table lacks is refused, naming it; a null kernel too") {
    auto host = open_device("host");
    const auto kernels_before = host->kernel_table().registered().size();
    const Kernel k = [](const KernelArgs&) {};
    try {
        host->kernel_table().add("relu_bakward", DType::f32, OpPath::native, k);
        FAIL("a kernel for a misspelled op was accepted");
    } catch (const InvalidArgument& e) {
        CHECK(contains(e.what(), "'relu_bakward'"));
        CHECK(contains(e.what(), "relu_backward"));  // the ops there are, listed
    }
    CHECK_THROWS_AS(host->kernel_table().add(Op::relu, DType::f32, OpPath::native, Kernel{}), InvalidArgument);
    CHECK_THROWS_AS(host->kernel_table().add("relu", DType::f32, OpPath::native, Kernel{}), InvalidArgument);
    CHECK(host->kernel_table().registered().size() == kernels_before);  // nothing registered or replaced
    CHECK(host->kernel_table().supports(Op::relu, DType::f32, OpPath::native));
}

TEST_CASE("a device's kernel table: the claimed kernels are the registered ones, and the rest say why") {
    for (const BackendStatus& st : backend_statuses()) {
        if (!st.availability.available) continue;
        CAPTURE(st.name);
        std::shared_ptr<Device> d;
        try {
            d = open_device(st.name);
        } catch (const Error& e) {
            MESSAGE("skipped " << st.name << ": " << std::string(e.what()));
            continue;
        }
        const auto claimed = d->kernel_table().claimed();
        CHECK_FALSE(claimed.empty());
        for (const KernelKey& key : claimed) {
            CAPTURE(std::string(op_name(key.op)));
            CAPTURE(std::string(dtype_name(key.dtype)));
            CHECK(d->kernel_table().supports(key.op, key.dtype, key.path));
            CHECK(d->kernel_table().unsupported_reason(key.op, key.dtype, key.path).empty());
        }
        // A vendor path no op but matmul, dense and gemm has: the reason says so.
        CHECK(contains(d->kernel_table().unsupported_reason(Op::add, DType::f32, OpPath::vendor), "no backend has a vendor path"));
    }
}

TEST_CASE("a kernel table's reasons: a built-in op its backend states nothing of is one its plugin may predate") {
    // A plugin built before gelu existed: its claim and kernels have add (f32) only.
    KernelTable table("old:0", "old", nullptr);
    table.claim({{{Op::add}, {DType::f32}, OpPath::native}});
    table.add(Op::add, DType::f32, OpPath::native, [](const KernelArgs&) {});
    const std::string no_gelu = table.unsupported_reason(Op::gelu, DType::f32, OpPath::native);
    CHECK(contains(no_gelu, "gelu in f32 on the native path is not in the old backend's kernel table"));
    CHECK(contains(no_gelu, "its plugin was built before the op existed, or the backend lacks it"));
    // add in another dtype: the backend states add, so not an op it predates.
    const std::string no_f64 = table.unsupported_reason(Op::add, DType::f64, OpPath::native);
    CHECK(contains(no_f64, "not in the old backend's kernel table"));
    CHECK_FALSE(contains(no_f64, "built before"));
    // An op a program defined: no plugin has it unless given, nothing to predate.
    CHECK_FALSE(contains(table.unsupported_reason(scale_shift_op(), DType::f32, OpPath::native), "built before"));
    // A backend's own reason comes first.
    KernelTable own("own:0", "own", [](Op, DType, OpPath) { return std::string("the device lacks it"); });
    CHECK(own.unsupported_reason(Op::gelu, DType::f32, OpPath::native) == "the device lacks it");
}

TEST_CASE("ops::run validates operand counts and nulls") {
    const Op op = scale_shift_op();
    auto host = open_device("host");
    auto x = Tensor::from_host(host, {2}, std::vector<float>{1, 2});
    Tensor y(host, {2});
    CHECK_THROWS_AS(ops::run(op, {&x, &x}, {&y}), InvalidArgument);
    CHECK_THROWS_AS(ops::run(op, {nullptr}, {&y}), InvalidArgument);
    Tensor wrong(host, {3});
    CHECK_THROWS_AS(ops::run(op, {&x}, {&wrong}), InvalidArgument);
}
