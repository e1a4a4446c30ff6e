// ACCEL_TRACE / accel::trace on the device under test: the file is a valid
// Chrome trace, and its events are the calls made, with their shapes.
#include "support/check.hpp"
#include "trace/trace_format.hpp"

#include <unistd.h>

#include <set>
#include <thread>

using namespace accel;
using accel_test::device;
using nlohmann::json;

namespace {

std::string temp_path(const std::string& what) {
    return std::string(TRACE_TEST_TMPDIR) + "/" + what + "-" + std::to_string(::getpid()) + ".json";
}

// The op events (host side) of `name` in the trace.
std::vector<json> ops_named(const json& t, const std::string& name) {
    std::vector<json> out;
    for (const json& e : trace_format::complete_events(t, "op"))
        if (e["name"] == name && !e["args"].contains("device_ms")) out.push_back(e);
    return out;
}

void expect_valid(const json& t) {
    const auto problems = trace_format::problems(t);
    for (const auto& p : problems) MESSAGE(p);
    CHECK(problems.empty());
}

}  // namespace

TEST_CASE("a trace holds every op called, with its shapes, dtype, path and device time") {
    if (!accel_test::runs({Op::add, Op::matmul, Op::dense, Op::sigmoid})) return;
    auto g = accel_test::rng(61);
    auto& d = device();
    const std::string file = temp_path("ops");
    trace::start(file);
    REQUIRE(trace::active());
    CHECK(trace::path() == file);
    Tensor a = Tensor::from_host(d, Shape{1000}, accel_test::uniform(g, 1000));
    Tensor b = Tensor::from_host(d, Shape{1000}, accel_test::uniform(g, 1000));
    Tensor c(d, Shape{1000});
    ops::add(a, b, c);
    Tensor x = Tensor::from_host(d, Shape{7, 5}, accel_test::uniform(g, 35));
    Tensor w = Tensor::from_host(d, Shape{3, 5}, accel_test::uniform(g, 15));
    Tensor wt = Tensor::from_host(d, Shape{5, 3}, accel_test::uniform(g, 15));
    Tensor bias = Tensor::from_host(d, Shape{3}, accel_test::uniform(g, 3));
    Tensor y(d, Shape{7, 3});
    ops::Options native;
    native.path = ops::PathChoice::native;
    ops::matmul(x, wt, y, {}, native);
    ops::dense(x, w, bias, y, Activation::relu, native);
    auto stream = d->create_stream();
    ops::Options on_stream;
    on_stream.stream = stream.get();
    ops::sigmoid(a, c, on_stream);
    stream->synchronize();
    const std::vector<float> back = c.download();
    trace::stop();
    CHECK_FALSE(trace::active());

    const json t = trace_format::read(file);
    expect_valid(t);
    const auto adds = ops_named(t, "add"), matmuls = ops_named(t, "matmul"), denses = ops_named(t, "dense"),
               sigmoids = ops_named(t, "sigmoid");
    REQUIRE(adds.size() == 1);
    REQUIRE(matmuls.size() == 1);
    REQUIRE(denses.size() == 1);
    REQUIRE(sigmoids.size() == 1);
    CHECK(adds[0]["args"]["shapes"] == "a[1000] b[1000] -> c[1000]");
    CHECK(adds[0]["args"]["dtype"] == "f32");
    CHECK(adds[0]["args"]["bytes"].get<double>() == 12000.0);
    CHECK(matmuls[0]["args"]["shapes"] == "a[7,5] b[5,3] -> c[7,3]");
    CHECK(matmuls[0]["args"]["path"] == "native");
    CHECK(matmuls[0]["args"]["flops"].get<double>() == 2.0 * 7 * 3 * 5);
    CHECK(denses[0]["args"]["shapes"] == "x[7,5] w[3,5] bias[3] -> y[7,3]");
    CHECK(denses[0]["args"]["activation"] == "relu");
    CHECK(denses[0]["args"]["bias"] == true);
    CHECK(matmuls[0]["args"]["trans_a"] == false);
    CHECK(matmuls[0]["args"]["trans_b"] == false);
    CHECK(adds[0]["args"]["stream"] == "stream 0");
    CHECK(sigmoids[0]["args"]["stream"] != "stream 0");
    // Numbered in call order on the device; all four on one device (process).
    const auto seq = [](const json& e) { return e["args"]["seq"].get<unsigned long long>(); };
    CHECK(seq(adds[0]) < seq(matmuls[0]));
    CHECK(seq(matmuls[0]) + 1 == seq(denses[0]));
    CHECK(seq(denses[0]) + 1 == seq(sigmoids[0]));
    CHECK(adds[0]["pid"] == sigmoids[0]["pid"]);
    CHECK(trace_format::process_name(t, adds[0]["pid"]).find(d->selector()) != std::string::npos);
    // Every op's device time, on its stream's track.
    std::set<unsigned long long> timed;
    for (const json& e : trace_format::complete_events(t, "op"))
        if (e["args"].contains("device_ms")) {
            CHECK(e["tid"].get<int>() >= 1000);
            CHECK(e["args"]["device_ms"].get<double>() >= 0);
            timed.insert(seq(e));
        }
    for (const auto& e : {adds[0], matmuls[0], denses[0], sigmoids[0]}) CHECK(timed.count(seq(e)) == 1);
    // Copies, synchronizes and the memory counter.
    bool upload = false, sync = false, counter = false;
    for (const json& e : t["traceEvents"]) {
        if (e["ph"] == "X" && e["name"] == "copy_host_to_device" && e["args"]["bytes"] == 4000) upload = true;
        if (e["ph"] == "X" && e["name"] == "synchronize") sync = true;
        if (e["ph"] == "C" && e["name"] == "memory in use" && e["args"]["bytes"].get<double>() >= 8000) counter = true;
    }
    CHECK(upload);
    CHECK(sync);
    CHECK(counter);
    std::remove(file.c_str());
}

TEST_CASE("a composed op's event encloses its kernels' events") {
    auto& d = device();
    if (!d->kernel_table().supports(Op::dense, DType::f32, OpPath::vendor)) {
        MESSAGE(d->selector() << " has no vendor dense: nothing composed to trace");
        return;
    }
    auto g = accel_test::rng(62);
    const std::string file = temp_path("composed");
    trace::start(file);
    Tensor x = Tensor::from_host(d, Shape{4, 6}, accel_test::uniform(g, 24));
    Tensor w = Tensor::from_host(d, Shape{5, 6}, accel_test::uniform(g, 30));
    Tensor y(d, Shape{4, 5});
    ops::Options vendor;
    vendor.path = ops::PathChoice::vendor;
    ops::dense(x, w, std::nullopt, y, Activation::sigmoid, vendor);
    (void)y.download();
    trace::stop();
    const json t = trace_format::read(file);
    expect_valid(t);
    const auto composed = trace_format::complete_events(t, "composed");
    REQUIRE(composed.size() == 1);
    CHECK(composed[0]["name"] == "dense");
    const auto gemms = ops_named(t, "gemm"), epilogues = ops_named(t, "bias_activation");
    REQUIRE(gemms.size() == 1);
    REQUIRE(epilogues.size() == 1);
    CHECK(gemms[0]["args"]["shapes"] == "a[4,6] b[5,6] -> c[4,5]");
    CHECK(epilogues[0]["args"]["shapes"] == "-> y[4,5]");
    CHECK(epilogues[0]["args"]["bias"] == false);
    CHECK(gemms[0]["args"]["trans_b"] == true);
    // The composed call carries the call as the program made it (accel-conformance --case-file reads it).
    const json& call = composed[0]["args"];
    CHECK(call["dtype"] == "f32");
    CHECK(call["path"] == "vendor");
    CHECK(call["shapes"] == "x[4,6] w[5,6] -> y[4,5]");
    CHECK(call["activation"] == "sigmoid");
    CHECK(call["bias"] == false);
    for (const json& inner : {gemms[0], epilogues[0]}) {
        CHECK(inner["tid"] == composed[0]["tid"]);
        CHECK(inner["ts"].get<double>() >= composed[0]["ts"].get<double>());
        CHECK(inner["ts"].get<double>() + inner["dur"].get<double>() <=
              composed[0]["ts"].get<double>() + composed[0]["dur"].get<double>() + 1e-3);
    }
    std::remove(file.c_str());
}

TEST_CASE("a graph's replay is one event holding its ops' names and enclosing their kernels' events") {
    auto& d = device();
    auto g = accel_test::rng(63);
    const std::size_t n = 1000;
    Tensor a = Tensor::from_host(d, Shape{n}, accel_test::uniform(g, n)), b(d, Shape{n}), c(d, Shape{n});
    const std::string file = temp_path("graph");
    trace::start(file);
    const Graph graph = capture(d->default_stream(), [&] {
        ops::add(a, a, b);
        ops::relu(b, c);
    });
    graph.launch();
    graph.launch();
    (void)c.download();
    trace::stop();
    const json t = trace_format::read(file);
    expect_valid(t);
    std::vector<json> replays;
    for (const json& e : trace_format::complete_events(t, "graph"))
        if (!e["args"].contains("device_ms")) replays.push_back(e);
    REQUIRE(replays.size() == 2);
    for (const json& e : replays) {
        CHECK(e["name"] == "graph");
        CHECK(e["args"]["ops"] == "add,relu");
        CHECK(e["args"]["calls"] == 2);
    }
    // The capture runs (and traces) no kernel; each replay's kernels are inside its event.
    for (const char* op : {"add", "relu"}) {
        const auto kernels = ops_named(t, op);
        REQUIRE(kernels.size() == 2);
        for (std::size_t i = 0; i < 2; ++i) {
            CHECK(kernels[i]["tid"] == replays[i]["tid"]);
            CHECK(kernels[i]["ts"].get<double>() >= replays[i]["ts"].get<double>());
            CHECK(kernels[i]["ts"].get<double>() + kernels[i]["dur"].get<double>() <=
                  replays[i]["ts"].get<double>() + replays[i]["dur"].get<double>() + 1e-3);
        }
    }
    std::remove(file.c_str());
}

TEST_CASE("threads on their own streams are traced on their own tracks, each call numbered once") {
    if (!accel_test::runs({Op::add})) return;
    auto& d = device();
    const std::string file = temp_path("threads");
    trace::start(file);
    constexpr int kThreads = 3, kOps = 40;
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
        threads.emplace_back([&d] {
            auto s = d->create_stream();
            ops::Options o;
            o.stream = s.get();
            Tensor a = Tensor::from_host(d, Shape{257}, std::vector<float>(257, 1.0f));
            Tensor c(d, Shape{257});
            for (int k = 0; k < kOps; ++k) ops::add(a, a, c, o);
            s->synchronize();
        });
    for (auto& th : threads) th.join();
    trace::stop();
    const json t = trace_format::read(file);
    expect_valid(t);
    const auto adds = ops_named(t, "add");
    CHECK(adds.size() == kThreads * kOps);
    std::set<unsigned long long> seqs;
    std::set<int> tids, streams;
    for (const json& e : adds) {
        seqs.insert(e["args"]["seq"].get<unsigned long long>());
        tids.insert(e["tid"].get<int>());
        streams.insert(std::stoi(e["args"]["stream"].get<std::string>().substr(7)));
    }
    CHECK(seqs.size() == adds.size());  // unique
    CHECK(*seqs.rbegin() - *seqs.begin() + 1 == adds.size());  // none skipped
    CHECK(tids.size() == kThreads);
    CHECK(streams.size() == kThreads);
    std::remove(file.c_str());
}

TEST_CASE("a trace that cannot be written is a clear error, and tracing stays off") {
    CHECK_THROWS_WITH_AS(trace::start("/nonexistent-folder/t.json"),
                         doctest::Contains("cannot create '/nonexistent-folder/t.json'"), InvalidArgument);
    CHECK_FALSE(trace::active());
    CHECK_THROWS_AS(trace::start(""), InvalidArgument);
}
