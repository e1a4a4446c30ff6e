// accel-bench --case-file: a program's calls (a trace or a case file) timed
// on each device, the total weighted by the calls' counts; bad files get
// accel-conformance's line-numbered errors. Run from the test's working
// directory.
#include "bench_test.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

using nlohmann::json;
using namespace bench_test;

namespace {

// A trace as ACCEL_TRACE writes it: one device, on one host thread three
// matmuls of one shape, an add, and a dense whose gemm kernel (inside it,
// on the vendor path) is part of the dense call, no call of its own.
const char* kTrace = R"json({"traceEvents":[
{"ph":"M","name":"process_name","pid":1,"tid":0,"ts":0,"args":{"name":"host:0 (test)"}},
{"ph":"X","cat":"op","name":"matmul","pid":1,"tid":1,"ts":1,"dur":1,"args":{"seq":1,"of_op":1,"dtype":"f32","path":"native","shapes":"a[24,16] b[16,8] -> c[24,8]","trans_a":false,"trans_b":false}},
{"ph":"X","cat":"op","name":"add","pid":1,"tid":1,"ts":3,"dur":1,"args":{"seq":2,"of_op":1,"dtype":"f32","path":"native","shapes":"a[2000] b[2000] -> c[2000]"}},
{"ph":"X","cat":"op","name":"matmul","pid":1,"tid":1,"ts":5,"dur":1,"args":{"seq":3,"of_op":2,"dtype":"f32","path":"native","shapes":"a[24,16] b[16,8] -> c[24,8]","trans_a":false,"trans_b":false}},
{"ph":"X","cat":"composed","name":"dense","pid":1,"tid":1,"ts":7,"dur":3,"args":{"seq":4,"of_op":1,"dtype":"f32","path":"vendor","shapes":"x[8,16] w[4,16] bias[4] -> y[8,4]","activation":"relu"}},
{"ph":"X","cat":"op","name":"gemm","pid":1,"tid":1,"ts":8,"dur":1,"args":{"seq":5,"of_op":1,"dtype":"f32","path":"vendor","shapes":"a[8,16] b[4,16] -> c[8,4]"}},
{"ph":"X","cat":"op","name":"matmul","pid":1,"tid":1,"ts":11,"dur":1,"args":{"seq":6,"of_op":3,"dtype":"f32","path":"native","shapes":"a[24,16] b[16,8] -> c[24,8]","trans_a":false,"trans_b":false}}
],"displayTimeUnit":"ms","otherData":{"accel_trace_format":1}})json";

const std::string kCases = std::string(ACCEL_SOURCE_DIR) + "/tests/conformance/cases/";

}  // namespace

TEST_CASE("case_file_trace") {
    std::ofstream("calls-trace.json") << kTrace;
    const Outcome r = bench("--case-file calls-trace.json --backends host --min-time-ms 2 --no-progress --format json "
                            "-o calls.json");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const json j = load("calls.json");
    INFO(j.dump(2));
    CHECK(j["kind"] == "trace");
    CHECK(j["calls"] == 5);  // the gemm inside dense is no call of the program's
    // The distinct calls, in the order of their first call, each with its count.
    const std::map<std::string, int> want{{"matmul f32 a[24,16] b[16,8] -> c[24,8]", 3},
                                          {"add f32 a[2000] b[2000] -> c[2000]", 1},
                                          {"dense f32 x[8,16] w[4,16] bias[4] -> y[8,4] activation=relu", 1}};
    REQUIRE(j["cases"].size() == want.size());
    CHECK(j["cases"][0]["call"] == "matmul f32 a[24,16] b[16,8] -> c[24,8]");
    double total = 0;
    for (const auto& c : j["cases"]) {
        const std::string call = c["call"];
        REQUIRE_MESSAGE(want.count(call), call);
        CHECK(c["calls"] == want.at(call));
        REQUIRE(c["times"].size() == 1);
        const json& t = c["times"][0];
        CHECK(t["stable_selector"] == "host:0");
        CHECK(t["min_ms"].get<double>() > 0);
        CHECK(t["min_ms"].get<double>() <= t["median_ms"].get<double>());
        CHECK(t["median_ms"].get<double>() <= t["max_ms"].get<double>());
        CHECK(t["samples"].get<int>() >= 5);
        total += c["calls"].get<double>() * t["median_ms"].get<double>();
    }
    // The program's total: each call's median weighted by its count.
    REQUIRE(j["devices"].size() == 1);
    CHECK(j["devices"][0]["calls_timed"] == 5);
    CHECK(j["devices"][0]["total_ms"].get<double>() == doctest::Approx(total).epsilon(1e-9));
}

TEST_CASE("case_file_table") {
    // A case file, two devices side by side: a column each, and the total row.
    std::ofstream("calls.cases") << "# two sigmoids and an add\n"
                                    "sigmoid f32 x[3000] -> y[3000]\n"
                                    "add f32 a[1000] b[1000] -> c[1000]\n"
                                    "sigmoid f32 x[3000] -> y[3000]\n";
    const Outcome r = bench("--case-file calls.cases --backends host,host --min-time-ms 1 --no-progress --json "
                            "calls-table.json");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    CHECK(r.output.find("2 distinct call(s) of 3 call(s)") != std::string::npos);
    CHECK(r.output.find("host:0 µs") != std::string::npos);
    const json j = load("calls-table.json");
    REQUIRE(j["devices"].size() == 2);
    REQUIRE(j["cases"].size() == 2);
    CHECK(j["cases"][0]["call"] == "sigmoid f32 x[3000] -> y[3000]");
    CHECK(j["cases"][0]["calls"] == 2);
    CHECK(j["cases"][0]["origin"] == "calls.cases:2");
    // Each case's line: its text, its count, one time per device; then the total line.
    for (const auto& c : j["cases"])
        CHECK_MESSAGE(r.output.find(c["call"].get<std::string>() + "  ") != std::string::npos, c["call"]);
    const std::size_t at = r.output.find("weighted total (µs)");
    REQUIRE(at != std::string::npos);
    const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
    CHECK_MESSAGE(line.find(" 3 ") != std::string::npos, line);
    for (std::size_t d = 0; d < 2; ++d) {
        const double total = j["devices"][d]["total_ms"];
        CHECK(total > 0);
        CHECK(total == doctest::Approx(2 * j["cases"][0]["times"][d]["median_ms"].get<double>() +
                                       j["cases"][1]["times"][d]["median_ms"].get<double>())
                           .epsilon(1e-9));
    }
}

TEST_CASE("case_file_bad_files") {
    // accel-conformance's messages, naming the file and the line or trace
    // event, exit 2, nothing run.
    Outcome r = bench("--case-file " + kCases + "bad_shape.cases --backends host");
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.output.find("bad_shape.cases:3: matmul: inner dimensions differ: op(a) is [40,30]") !=
                      std::string::npos,
                  r.output);
    CHECK(r.output.find("µs") == std::string::npos);
    r = bench("--case-file " + kCases + "unknown_op.cases --backends host");
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.output.find("unknown_op.cases:3: unknown op 'softmax'; accepted: add, ") != std::string::npos,
                  r.output);
    r = bench("--case-file " + kCases + "bad_events.json --backends host");
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.output.find("bad_events.json: traceEvents[1] (softmax): unknown op 'softmax'") != std::string::npos,
                  r.output);
    CHECK_MESSAGE(r.output.find("bad_events.json: traceEvents[2] (matmul): matmul: inner dimensions differ") !=
                      std::string::npos,
                  r.output);
    r = bench("--case-file no-such-file.cases --backends host");
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.output.find("cannot read no-such-file.cases") != std::string::npos, r.output);
    // Options of the op sweep do not apply: the file names the calls.
    std::ofstream("one.cases") << "add f32 a[10] b[10] -> c[10]\n";
    r = bench("--case-file one.cases --backends host --ops add");
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.output.find("--ops does not apply with --case-file") != std::string::npos, r.output);
}

TEST_CASE("case_file_mlp") {
    // mlp_train's own trace (tests/CMakeLists.txt's fixture): its 19
    // distinct calls, the weighted total over every call it made.
    const char* trace = std::getenv("BENCH_MLP_TRACE");
    if (!trace || !exists(trace)) {
        MESSAGE("no mlp_train trace (the fixture conformance.case-file.trace writes it); skipped");
        std::exit(77);
    }
    const Outcome r = bench(std::string("--case-file ") + trace + " --backends host --min-time-ms 1 --no-progress "
                                                                   "--format json -o calls-mlp.json");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const json j = load("calls-mlp.json");
    CHECK(j["cases"].size() == 19);
    std::size_t calls = 0;
    for (const auto& c : j["cases"]) calls += c["calls"].get<std::size_t>();
    CHECK(calls == j["calls"].get<std::size_t>());
    CHECK(j["devices"][0]["calls_timed"] == j["calls"]);
}

TEST_CASE("case_file_unsupported") {
    // A call a device cannot run (the test backend `faulty` with f32 kernels
    // only, FAULTY_DTYPES=f32): its cell "–" with a note, the device's total
    // over the calls it ran, marked, and exit 1.
    if (!std::getenv("FAULTY_DTYPES")) {
        MESSAGE("the test backend faulty is not built; skipped");
        std::exit(77);
    }
    std::ofstream("unsupported.cases") << "add f64 a[100] b[100] -> c[100]\n"
                                          "add f32 a[100] b[100] -> c[100]\n"
                                          "add f32 a[100] b[100] -> c[100]\n";
    const Outcome r = bench("--case-file unsupported.cases --backends host,faulty --min-time-ms 1 --no-progress "
                            "--json calls-unsupported.json");
    CHECK(r.code == 1);
    CHECK(r.output.find("* faulty:0: 2 of the 3 calls") != std::string::npos);
    CHECK(r.output.find("note: add f64 a[100] b[100] -> c[100] on faulty:0: add: faulty:0") != std::string::npos);
    const json j = load("calls-unsupported.json");
    REQUIRE(j["cases"].size() == 2);
    CHECK(j["cases"][0]["times"][0].contains("median_ms"));  // host runs f64
    CHECK(j["cases"][0]["times"][1].contains("error"));
    CHECK(!j["cases"][0]["times"][1].contains("median_ms"));
    CHECK(j["devices"][0]["calls_timed"] == 3);
    CHECK(j["devices"][1]["calls_timed"] == 2);
    CHECK(j["devices"][1]["total_ms"].get<double>() ==
          doctest::Approx(2 * j["cases"][1]["times"][1]["median_ms"].get<double>()).epsilon(1e-9));
}
