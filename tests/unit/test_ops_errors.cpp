// The op front-end rejects bad input with clear messages and writes nothing.
#include <accel/accel.hpp>

#include <doctest/doctest.h>

#include "support/check.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

using namespace accel;

namespace {
using accel_test::contains;


std::shared_ptr<Device> host() { return open_device("host"); }
Tensor filled(std::initializer_list<std::size_t> s, float v) {
    Shape sh(s);
    return Tensor::from_host(host(), sh, std::vector<float>(sh.elements(), v));
}
bool untouched(const Tensor& t, float v) {
    for (float x : t.download())
        if (x != v) return false;
    return true;
}
}  // namespace

TEST_CASE("add: mismatched shapes name both shapes and leave the output untouched") {
    auto a = filled({3, 4}, 1), b = filled({4, 3}, 1), c = filled({3, 4}, 7);
    auto msg = accel_test::message_of([&] { ops::add(a, b, c); });
    CHECK(contains(msg, "add"));
    CHECK(contains(msg, "[4, 3]"));
    CHECK(contains(msg, "[3, 4]"));
    CHECK(untouched(c, 7));
    auto c2 = filled({12}, 7);
    CHECK(contains(accel_test::message_of([&] { ops::add(a, a, c2); }), "[12]"));
}

TEST_CASE("every elementwise op checks shapes") {
    auto x = filled({5}, 1), y = filled({6}, 1), o = filled({5}, 3);
    CHECK_THROWS_AS(ops::sigmoid(x, y), InvalidArgument);
    CHECK_THROWS_AS(ops::relu(x, y), InvalidArgument);
    CHECK_THROWS_AS(ops::relu_backward(x, y, o), InvalidArgument);
    CHECK_THROWS_AS(ops::sigmoid_backward(y, x, o), InvalidArgument);
    CHECK_THROWS_AS(ops::bce_with_logits(x, y, o), InvalidArgument);
    CHECK_THROWS_AS(ops::bce_with_logits_backward(x, y, o), InvalidArgument);
    CHECK_THROWS_AS(ops::bce_with_logits_loss(x, y), InvalidArgument);
    auto m = filled({5}, 0), v = filled({6}, 0);
    CHECK_THROWS_AS(ops::adam_step(o, x, m, v, 1), InvalidArgument);
    CHECK(untouched(o, 3));
}

TEST_CASE("matmul: inner-dimension and output-shape errors") {
    auto a = filled({3, 4}, 1), b = filled({5, 2}, 1), c = filled({3, 2}, 9);
    auto msg = accel_test::message_of([&] { ops::matmul(a, b, c); });
    CHECK(contains(msg, "inner dimensions"));
    CHECK(contains(msg, "[3, 4]"));
    CHECK(contains(msg, "[5, 2]"));
    CHECK(untouched(c, 9));
    auto b2 = filled({4, 2}, 1), c_bad = filled({2, 3}, 9);
    CHECK(contains(accel_test::message_of([&] { ops::matmul(a, b2, c_bad); }), "must be [3, 2]"));
    auto v = filled({4}, 1);
    CHECK(contains(accel_test::message_of([&] { ops::matmul(a, v, c); }), "rank 2"));
    // With transposes the rule applies to op(a), op(b).
    auto at = filled({4, 3}, 1);
    ops::matmul(at, b2, c, {true, false});
    CHECK(untouched(c, 4));
    CHECK(contains(accel_test::message_of([&] { ops::matmul(a, a, c, {false, false}); }), "inner dimensions"));
    auto sq = filled({3, 3}, 1);
    CHECK(contains(accel_test::message_of([&] { ops::matmul(sq, sq, sq); }), "aliases"));
}

TEST_CASE("dense: weight, bias and output shapes") {
    auto x = filled({8, 30}, 1), w = filled({10, 30}, 1), bias = filled({10}, 0), y = filled({8, 10}, 5);
    auto w_bad = filled({10, 29}, 1);
    CHECK(contains(accel_test::message_of([&] { ops::dense(x, w_bad, bias, y); }), "in = 29"));
    auto b_bad = filled({11}, 0);
    CHECK(contains(accel_test::message_of([&] { ops::dense(x, w, b_bad, y); }), "bias has shape [11]"));
    auto y_bad = filled({10, 8}, 5);
    CHECK(contains(accel_test::message_of([&] { ops::dense(x, w, bias, y_bad); }), "must be [8, 10]"));
    CHECK(untouched(y, 5));
    ops::dense(x, w, bias, y, Activation::relu);
    CHECK(untouched(y, 30));
}

TEST_CASE("tensors of different devices are rejected") {
    auto other = get_backend("host").create_device(0);
    auto a = filled({4}, 1), c = filled({4}, 2);
    auto b = Tensor::from_host(other, {4}, std::vector<float>(4, 1.0f));
    auto msg = accel_test::message_of([&] { ops::add(a, b, c); });
    CHECK(contains(msg, "one device"));
    CHECK(untouched(c, 2));
    auto stream = other->create_stream();
    ops::Options o;
    o.stream = stream.get();
    CHECK(contains(accel_test::message_of([&] { ops::add(a, a, c, o); }), "Options::stream"));
}

TEST_CASE("geometry outside the device limits is rejected") {
    auto a = filled({4}, 1), c = filled({4}, 2);
    ops::Options o;
    o.geometry = LaunchGeometry{{0, 1, 1}, {1, 1, 1}};
    CHECK(contains(accel_test::message_of([&] { ops::add(a, a, c, o); }), "at least 1"));
    CHECK(untouched(c, 2));
}

TEST_CASE("path selection: vendor where there is none is an error, never a silent fallback") {
    auto a = filled({4}, 1), c = filled({4}, 2);
    ops::Options o;
    o.path = ops::PathChoice::vendor;
    CHECK_THROWS_AS(ops::add(a, a, c, o), Unsupported);
    CHECK(ops::resolve_path(*host(), Op::matmul, {ops::PathChoice::native, {}, nullptr}) == OpPath::native);
    setenv("ACCEL_OP_PATH", "sideways", 1);
    CHECK_THROWS_AS(ops::resolve_path(*host(), Op::matmul), InvalidArgument);
    setenv("ACCEL_OP_PATH", "native", 1);
    CHECK(ops::resolve_path(*host(), Op::matmul) == OpPath::native);
    setenv("ACCEL_OP_PATH", " NATIVE\t", 1);  // case and blanks ignored, as in ACCEL_BACKEND
    CHECK(ops::resolve_path(*host(), Op::matmul) == OpPath::native);
    setenv("ACCEL_OP_PATH", "Auto", 1);
    CHECK_NOTHROW(ops::resolve_path(*host(), Op::matmul));
    CHECK(ops::parse_path_choice("Vendor") == ops::PathChoice::vendor);
    CHECK(ops::parse_path_choice("") == ops::PathChoice::automatic);
    CHECK(ops::parse_path_choice(" AUTO ") == ops::PathChoice::automatic);
    const auto msg = accel_test::message_of([] { ops::parse_path_choice(std::string(5000, 'n')); });
    CHECK(contains(msg, "(5000 characters)"));
    CHECK(msg.size() < 200);
    unsetenv("ACCEL_OP_PATH");
}

TEST_CASE("adam rejects step 0 and bad hyper-parameters") {
    auto p = filled({3}, 1), g = filled({3}, 1), m = filled({3}, 0), v = filled({3}, 0);
    CHECK(contains(accel_test::message_of([&] { ops::adam_step(p, g, m, v, 0); }), "step is 0"));
    const auto msg = accel_test::message_of([&] { ops::adam_step(p, g, m, v, 1, {-1.0f}); });
    CHECK(contains(msg, "lr=-1 "));
    CHECK(contains(msg, "eps=1e-08 "));  // the default, not rounded to 0.000000
    CHECK(untouched(p, 1));
}

TEST_CASE("column_sum and dense_backward check their shapes") {
    auto x = filled({4, 3}, 1), y_bad = filled({4}, 8);
    CHECK(contains(accel_test::message_of([&] { ops::column_sum(x, y_bad); }), "must be [3]"));
    CHECK(untouched(y_bad, 8));
    auto v = filled({12}, 1), y = filled({3}, 8);
    CHECK(contains(accel_test::message_of([&] { ops::column_sum(v, y); }), "rank 2"));
    auto xb = filled({8, 30}, 1), w = filled({10, 30}, 1), out = filled({8, 10}, 1), dw_bad = filled({30, 10}, 5);
    auto dw = filled({10, 30}, 5), db_bad = filled({8}, 5);
    CHECK(contains(accel_test::message_of([&] { ops::dense_backward(xb, w, out, out, Activation::relu, nullptr, dw_bad, nullptr); }),
                   "dw has shape [30, 10]"));
    CHECK(contains(accel_test::message_of([&] { ops::dense_backward(xb, w, out, out, Activation::none, nullptr, dw, &db_bad); }),
                   "db has shape [8]"));
    CHECK(untouched(dw, 5));
    // gelu's derivative is a function of the pre-activation, which only the caller has.
    for (Activation act : {Activation::gelu, Activation::gelu_tanh}) {
        CAPTURE(std::string(activation_name(act)));
        CHECK(contains(accel_test::message_of([&] { ops::dense_backward(xb, w, out, out, act, nullptr, dw, nullptr); }),
                       "needs pre_activation"));
        auto z_bad = filled({8, 9}, 1);
        CHECK(contains(accel_test::message_of([&] { ops::dense_backward(xb, w, out, out, act, nullptr, dw, nullptr, {}, z_bad); }),
                       "pre_activation has shape [8, 9]"));
        CHECK(untouched(dw, 5));
    }
    CHECK(ops::parse_activation("gelu") == Activation::gelu);
    CHECK(ops::parse_activation("gelu_tanh") == Activation::gelu_tanh);
}

namespace {
// The folder under which this test's cache folders live: the system's temporary folder, never
// the working directory (which may be a source tree).
std::string evidence_root() {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp && *tmp ? tmp : "/tmp") + "/accel-path-evidence-" + std::to_string(::getpid());
}

// A fresh, empty cache directory for path evidence (ACCEL_CACHE_DIR).
std::string fresh_cache_dir(const char* name) {
    const std::string dir = evidence_root() + "/" + name;
    std::system(("rm -rf '" + dir + "'").c_str());
    setenv("ACCEL_CACHE_DIR", dir.c_str(), 1);
    return dir;
}

void write_file(const std::string& path, const std::string& text) {
    std::system(("mkdir -p \"$(dirname '" + path + "')\"").c_str());
    std::ofstream(path) << text;
}

// A fresh cache directory `name` whose paths.json holds one record: `key`
// takes `path` ("native" or "vendor"), measured at class m x n x k.
void forge_record(const std::string& name, const std::string& key, const char* path, std::size_t m, std::size_t n,
                  std::size_t k) {
    const std::string dir = fresh_cache_dir(name.c_str());
    write_file(dir + "/paths.json", "{\"version\": 2, \"entries\": {\"" + key + "\": {\"path\": \"" + path +
                                        "\", \"native_gflops\": 1, \"vendor_gflops\": 1, \"m\": " +
                                        std::to_string(m) + ", \"n\": " + std::to_string(n) +
                                        ", \"k\": " + std::to_string(k) + "}}}");
}
}  // namespace

TEST_CASE("automatic path: the faster path by measurement, recorded once, a record followed") {
    unsetenv("ACCEL_OP_PATH");
    auto d = host();
    if (!d->kernel_table().supports(Op::matmul, OpPath::vendor)) {
        MESSAGE("host has no vendor BLAS in this build: automatic is native, nothing to measure");
        CHECK(ops::resolve_path(*d, Op::matmul) == OpPath::native);
        return;
    }
    const std::string dir = fresh_cache_dir("measure");
    CHECK_FALSE(ops::recorded_path_evidence(*d).has_value());
    const auto ev = ops::path_evidence(*d);
    CHECK(ev.shape.m == 256);
    CHECK(ev.shape.n == 256);
    CHECK(ev.shape.k == 256);
    CHECK(ev.native_gflops > 0);
    CHECK(ev.vendor_gflops > 0);
    CHECK(ev.path == (ev.native_gflops >= 1.2 * ev.vendor_gflops ? OpPath::native : OpPath::vendor));
    const auto again = ops::recorded_path_evidence(*d);
    REQUIRE(again.has_value());
    CHECK(again->path == ev.path);
    std::ifstream file(dir + "/paths.json");
    std::stringstream text;
    text << file.rdbuf();
    CHECK(contains(text.str(), "\"native_gflops\""));
    // The record belongs to this build of the plugin: its file's size is in the key.
    for (const BackendStatus& b : backend_statuses()) {
        struct stat st {};
        if (b.name != d->info().backend) continue;
        CHECK(backend_plugin_file(b.name) == b.plugin_path);
        REQUIRE(stat(b.plugin_path.c_str(), &st) == 0);
        CHECK(contains(ev.key, " plugin " + std::to_string(st.st_size) + " bytes"));
    }
    CHECK_THROWS_AS(backend_plugin_file("nosuch"), InvalidArgument);

    // A record in the file decides, whichever way it points.
    for (const char* path : {"native", "vendor"}) {
        CAPTURE(path);
        forge_record(path, ev.key, path, 256, 256, 256);
        CHECK(ops::resolve_path(*d, Op::matmul) == (std::string(path) == "native" ? OpPath::native : OpPath::vendor));
        CHECK(ops::resolve_path(*d, Op::dense) == (std::string(path) == "native" ? OpPath::native : OpPath::vendor));
    }
    // The file is untrusted: what does not parse is no record, and never an error.
    for (const char* bad : {"not json", "{\"entries\": 3}", "[]"}) {
        CAPTURE(bad);
        const std::string broken = fresh_cache_dir("broken");
        write_file(broken + "/paths.json", bad);
        CHECK_FALSE(ops::recorded_path_evidence(*d).has_value());
    }
    const std::string odd = fresh_cache_dir("odd");
    write_file(odd + "/paths.json", std::string("{\"entries\": {\"") + ev.key +
                                        "\": {\"path\": \"sideways\", \"native_gflops\": 1, \"vendor_gflops\": 1, "
                                        "\"m\": 256, \"n\": 256, \"k\": 256}}}");
    CHECK_FALSE(ops::recorded_path_evidence(*d).has_value());
    // An entry of the old format (one n, no m and k) is no record either.
    const std::string old_format = fresh_cache_dir("old");
    write_file(old_format + "/paths.json", std::string("{\"version\": 1, \"entries\": {\"") + ev.key +
                                               "\": {\"path\": \"native\", \"native_gflops\": 1, "
                                               "\"vendor_gflops\": 1, \"n\": 256}}}");
    CHECK_FALSE(ops::recorded_path_evidence(*d).has_value());

    // Each shape class has a record of its own: a forged record for the
    // skinny class decides that class and leaves 256³'s unrecorded.
    const std::string classes = fresh_cache_dir("classes");
    const ops::GemmShape skinny{4000, 30, 250};
    const auto skinny_ev = ops::path_evidence(*d, skinny);
    CHECK(skinny_ev.shape.m == 4000);  // the call's own sizes measured, not the class's powers of two
    CHECK(skinny_ev.shape.n == 30);
    CHECK(skinny_ev.shape.k == 250);
    CHECK(skinny_ev.key != ev.key);
    CHECK_FALSE(ops::recorded_path_evidence(*d).has_value());
    for (const char* path : {"native", "vendor"}) {
        CAPTURE(path);
        forge_record(std::string("class-") + path, skinny_ev.key, path, 4096, 32, 256);
        const OpPath want = std::string(path) == "native" ? OpPath::native : OpPath::vendor;
        CHECK(ops::resolve_path(*d, Op::matmul, {}, DType::f32, {4096, 30, 256}) == want);
        CHECK(ops::resolve_path(*d, Op::matmul, {}, DType::f32, {3500, 31, 300}) == want);  // same class
    }
    // Each layout has a record of its own: A·Bᵀ (dense's x·Wᵀ) is measured
    // apart from A·B, and a record for it decides dense's calls alone.
    const std::string layouts = fresh_cache_dir("layouts");
    const ops::GemmShape nt{256, 256, 256, false, true};
    const auto nt_ev = ops::path_evidence(*d, nt);
    CHECK(nt_ev.shape.trans_b);
    CHECK_FALSE(nt_ev.shape.trans_a);
    CHECK(nt_ev.key != ev.key);
    CHECK(contains(nt_ev.key, "256x256x256 B^T"));
    CHECK_FALSE(ops::recorded_path_evidence(*d).has_value());  // A·B still unmeasured here
    for (const char* path : {"native", "vendor"}) {
        CAPTURE(path);
        forge_record(std::string("layout-") + path, nt_ev.key, path, 256, 256, 256);
        const OpPath want = std::string(path) == "native" ? OpPath::native : OpPath::vendor;
        CHECK(ops::resolve_path(*d, Op::dense, {}, DType::f32, nt) == want);
        CHECK(ops::resolve_path(*d, Op::matmul, {}, DType::f32, {250, 260, 270, false, true}) == want);
    }
    // Calls remember the decision per device, class and cache file: threads
    // asking at once agree with the record, and a record in another cache
    // folder decides there at once.
    for (const char* path : {"vendor", "native"}) {
        CAPTURE(path);
        forge_record(std::string("threads-") + path, ev.key, path, 256, 256, 256);
        const OpPath want = std::string(path) == "native" ? OpPath::native : OpPath::vendor;
        std::vector<OpPath> got(8);
        std::vector<std::thread> threads;
        for (std::size_t t = 0; t < got.size(); ++t)
            threads.emplace_back([&, t] {
                for (int i = 0; i < 100; ++i) got[t] = ops::resolve_path(*d, Op::matmul);
            });
        for (auto& t : threads) t.join();
        for (OpPath p : got) CHECK(p == want);
    }
    unsetenv("ACCEL_CACHE_DIR");
    std::system(("rm -rf '" + evidence_root() + "'").c_str());
}

TEST_CASE("path_class: powers of two in log scale, at most 512^3 multiply-adds") {
    const auto cls = [](std::size_t m, std::size_t n, std::size_t k) {
        const ops::GemmShape c = ops::path_class({m, n, k});
        return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
    };
    CHECK(cls(256, 256, 256) == "256x256x256");
    CHECK(cls(256, 4096, 30) == "256x4096x32");
    CHECK(cls(256, 4096, 1) == "256x4096x1");
    CHECK(cls(0, 0, 0) == "1x1x1");
    CHECK(cls(181, 182, 3) == "128x256x4");  // √2 · 128 = 181.02: 181 rounds down, 182 up
    CHECK(cls(4096, 4096, 4096) == "512x512x512");
    CHECK(cls(65536, 8, 8192) == "4096x8x4096");  // the largest halved, m before n before k on ties
    const ops::GemmShape t = ops::path_class({300, 20, 7, true, false});  // the layout kept
    CHECK(t.trans_a);
    CHECK_FALSE(t.trans_b);
}
