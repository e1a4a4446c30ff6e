// accel-bench end to end. Run from the test's working directory; `run` writes
// x.json, which the other cases read (CTest fixture bench_json).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

using nlohmann::json;

const std::string kBench = ACCEL_BENCH_EXE;
const std::string kResults = "x.json";

struct Outcome {
    int code;
    std::string output;  // stdout and stderr together
};

// Runs accel-bench with `args` (shell words), capturing its output.
Outcome bench(const std::string& args) {
    const std::string log = "bench-output.txt";
    const int status = std::system(("'" + kBench + "' " + args + " > " + log + " 2>&1").c_str());
    std::ifstream f(log);
    std::stringstream s;
    s << f.rdbuf();
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    INFO("accel-bench " << args << " exited " << code << ":\n" << s.str());
    return {code, s.str()};
}

json load(const std::string& path) {
    std::ifstream f(path);
    REQUIRE_MESSAGE(f.good(), path << " is missing; the bench.run test writes it");
    return json::parse(f);
}

bool on_path(const std::string& name) {
    std::stringstream dirs(std::getenv("PATH") ? std::getenv("PATH") : "");
    std::string dir;
    while (std::getline(dirs, dir, ':'))
        if (access((dir + "/" + name).c_str(), X_OK) == 0) return true;
    return false;
}

}  // namespace

TEST_CASE("run") {
    const Outcome r = bench("--quick --backends host --format json -o " + kResults);
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const json j = load(kResults);
    CHECK(j["accel_version"].is_string());
    for (const char* k : {"cpu", "os", "hostname"}) CHECK(j["machine"].contains(k));
    REQUIRE(j["devices"].size() == 1);
    CHECK(j["devices"][0]["timer"].is_string());
    CHECK(j["devices"][0]["copy_gbps"].get<double>() > 0);
    CHECK(j["devices"][0]["peak_fma_gflops"].get<double>() > 0);
    REQUIRE(j["rows"].size() > 0);
    for (const auto& row : j["rows"]) {
        INFO(row.dump());
        for (const char* k : {"backend", "device", "op", "shape", "path", "kernel_ms", "end_to_end_ms", "nmse"})
            CHECK(row.contains(k));
        CHECK((row.contains("gbps") || row.contains("gflops")));
        CHECK(row["kernel_ms"]["cold_median"].get<double>() > 0);
        CHECK(row["flops"].get<double>() >= 0);
        CHECK(row["bytes"].get<double>() > 0);
        CHECK(row["dtype"] == "f32");
        CHECK(row["pass"].get<bool>());
        CHECK(row["nmse"].get<double>() <= row["nmse_threshold"].get<double>());
    }
}

TEST_CASE("compare_same") {
    const Outcome r = bench("compare " + kResults + " " + kResults);
    CHECK_MESSAGE(r.code == 0, r.output);
    CHECK(r.output.find("1.00") != std::string::npos);
    CHECK(r.output.find("SLOWER") == std::string::npos);
}

TEST_CASE("compare_slower") {
    json j = load(kResults);
    json& row = j["rows"][0];
    row["kernel_ms"]["median"] = row["kernel_ms"]["median"].get<double>() * 2;
    std::ofstream("slower.json") << j.dump(2);
    const Outcome r = bench("compare " + kResults + " slower.json");
    CHECK_MESSAGE(r.code == 1, r.output);
    const std::string name = row["op"].get<std::string>() + " " + row["shape"].get<std::string>();
    CHECK_MESSAGE(r.output.find("slower than") != std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find(name) != std::string::npos, r.output);
    CHECK(r.output.find("2.00x the base time") != std::string::npos);
}

TEST_CASE("compare_devices") {
    // Two runs of one device each (another vendor, another GPU) pair op by op
    // by default, whatever the devices are called.
    json j = load(kResults);
    for (auto& row : j["rows"]) {
        row["device"] = "another vendor's device";
        row["selector"] = "opencl:3";
        row["backend"] = "opencl";
    }
    std::ofstream("other_device.json") << j.dump(2);
    Outcome r = bench("compare " + kResults + " other_device.json");
    CHECK_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(r.output.find("over " + std::to_string(j["rows"].size()) + " rows") != std::string::npos, r.output);
    // Forced to match by device, nothing pairs: that is an error, not a pass.
    r = bench("compare " + kResults + " other_device.json --by device");
    CHECK_MESSAGE(r.code == 2, r.output);
    CHECK(r.output.find("no rows in common") != std::string::npos);
}

TEST_CASE("plot") {
    if (!on_path("gnuplot")) {
        MESSAGE("gnuplot is not installed (Debian: gnuplot-nox); skipped");
        std::exit(77);
    }
    std::remove("x.png");
    const Outcome r = bench("plot " + kResults + " -o x.png --op add");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    std::ifstream png("x.png", std::ios::binary);
    char magic[4] = {};
    png.read(magic, 4);
    CHECK(std::string(magic + 1, 3) == "PNG");
    struct stat st {};
    CHECK(stat("x.png", &st) == 0);
    CHECK(st.st_size > 1000);
}

TEST_CASE("roofline") {
    if (!on_path("gnuplot")) {
        MESSAGE("gnuplot is not installed (Debian: gnuplot-nox); skipped");
        std::exit(77);
    }
    std::remove("roofline.png");
    const Outcome r = bench("plot " + kResults + " -o roofline.png --roofline");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    CHECK(r.output.find("1 device ceiling") != std::string::npos);
    struct stat st {};
    CHECK(stat("roofline.png", &st) == 0);
    CHECK(st.st_size > 1000);
}

TEST_CASE("dtypes_and_shapes") {
    // Each problem in each dtype, an M×N×K matmul beside the N×N×N ones; the
    // oracle sees the inputs as stored, so every dtype passes its own threshold.
    const Outcome r = bench("--quick --backends host --ops matmul --matmul-sizes 48 --matmul-shapes 257x10x30 "
                            "--paths native --dtypes f32,bf16,f64 --format json -o dtypes.json");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const json j = load("dtypes.json");
    std::set<std::string> seen;
    for (const auto& row : j["rows"]) {
        INFO(row.dump());
        seen.insert(row["shape"].get<std::string>() + " " + row["dtype"].get<std::string>());
        CHECK(row["pass"].get<bool>());
        if (row["dtype"] == "bf16") CHECK(row["nmse_threshold"].get<double>() > 1e-6);
    }
    for (const char* want : {"48x48x48 f32", "48x48x48 bf16", "48x48x48 f64", "257x10x30 f32", "257x10x30 bf16"})
        CHECK_MESSAGE(seen.count(want), want);
    CHECK(bench("--quick --backends host --ops add --dtypes f32,f8").code == 2);
    CHECK(bench("--quick --backends host --ops matmul --matmul-shapes 2x3").code == 2);
}

TEST_CASE("errors") {
    Outcome r = bench("--ops add,nosuch --backends host --quick");
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.output.find("valid ops: add, sigmoid") != std::string::npos, r.output);
    r = bench("--backends nosuch --quick");
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.output.find("unknown backend 'nosuch'") != std::string::npos, r.output);
    r = bench("--backends host:5 --quick");  // a named device that does not exist
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.output.find("out of range") != std::string::npos, r.output);
    r = bench("--format xml --quick");
    CHECK(r.code == 2);
    CHECK(r.output.find("valid formats") != std::string::npos);
    r = bench("compare " + kResults);
    CHECK(r.code == 2);
    r = bench("--quick --backends host -o no-such-folder/out.txt");  // fails before running
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.output.find("cannot open 'no-such-folder/out.txt'") != std::string::npos, r.output);
    CHECK(r.output.find("host:0") == std::string::npos);
}

TEST_CASE("table_and_json") {
    // One run: the table on stdout and the JSON record in a file, the same rows.
    const Outcome r = bench("--quick --backends host --ops add,matmul --json both.json");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    CHECK(r.output.find("warm ms") != std::string::npos);
    CHECK(r.output.find("cold ms") != std::string::npos);
    const json j = load("both.json");
    std::size_t table_rows = 0;
    for (std::size_t at = 0; (at = r.output.find(" pass\n", at)) != std::string::npos; ++at) ++table_rows;
    CHECK(j["rows"].size() == table_rows);
    CHECK(table_rows > 0);
}

TEST_CASE("timer_check") {
    // A device timer that does not advance, or reads 1000 times the host
    // clock, is rejected and host time used; a right one is kept.
#ifdef ACCEL_EMULATED_PLUGINS
    const std::string args = "--quick --backends cuda --ops add,matmul --add-sizes 1e5 --matmul-sizes 64 --format json -o t.json";
    for (const char* percent : {"0", "100000", "100"}) {
        CAPTURE(percent);
        const bool right = std::string(percent) == "100";
        REQUIRE(setenv("ACCEL_CUDA_EMULATION_FAULTS", (std::string("event_time_percent=") + percent).c_str(), 1) == 0);
        REQUIRE(setenv("ACCEL_PLUGIN_PATH", ACCEL_EMULATED_PLUGINS, 1) == 0);
        const Outcome r = bench(args);
        unsetenv("ACCEL_CUDA_EMULATION_FAULTS");
        unsetenv("ACCEL_PLUGIN_PATH");
        REQUIRE_MESSAGE(r.code == 0, r.output);
        const json j = load("t.json");
        REQUIRE(j["devices"].size() == 1);
        CHECK(j["devices"][0]["device_timer_ok"].get<bool>() == right);
        CHECK(j["devices"][0].contains("timer_note") == !right);
        for (const auto& row : j["rows"]) {
            INFO(row.dump());
            CHECK((row["timer"].get<std::string>().rfind("host clock", 0) == 0) == !right);
            CHECK(row["kernel_ms"]["median"].get<double>() > 0);
        }
    }
#else
    MESSAGE("no emulated CUDA plugin in this build: nothing to check");
#endif
}

TEST_CASE("side_by_side") {
    // Two devices in one run: one table with a rate column per device.
    const Outcome r = bench("--quick --backends host,opencl --ops add,matmul --add-sizes 1e5 --matmul-sizes 64");
    if (r.code == 2 && r.output.find("opencl") != std::string::npos) {
        MESSAGE("opencl unavailable: " << r.output);
        std::exit(77);
    }
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const auto at = r.output.find("side by side");
    REQUIRE_MESSAGE(at != std::string::npos, r.output);
    const std::string table = r.output.substr(at);
    CHECK(table.find("host:0") != std::string::npos);
    CHECK(table.find("opencl:") != std::string::npos);
    CHECK(table.find(" / host:0") != std::string::npos);
    for (const char* line : {"add     100000", "matmul  64x64x64"}) CHECK_MESSAGE(table.find(line) != std::string::npos, line);
}

namespace {

std::string read_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

bool exists(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0;
}

// Files in the working directory whose name starts with `prefix` (temporary files left behind).
int files_starting_with(const std::string& prefix) {
    int n = 0;
    if (DIR* d = opendir(".")) {
        while (const dirent* e = readdir(d)) n += std::string(e->d_name).rfind(prefix, 0) == 0;
        closedir(d);
    }
    return n;
}

}  // namespace

TEST_CASE("failed_run_writes_no_file") {
    // A run that fails (a named device that does not exist) leaves no output
    // file, and an existing one as it was.
    std::remove("failed.json");
    Outcome r = bench("--quick --backends host:5 --format json -o failed.json");
    CHECK(r.code == 2);
    CHECK_MESSAGE(!exists("failed.json"), "a failed run left failed.json behind");
    std::ofstream("kept.json") << "the previous run\n";
    r = bench("--quick --backends host:5 --format json -o kept.json --json kept.json");
    CHECK(r.code == 2);
    CHECK(read_text("kept.json") == "the previous run\n");
    CHECK(files_starting_with(".kept.json.tmp") == 0);
    CHECK(files_starting_with(".failed.json.tmp") == 0);
}

TEST_CASE("plot_failure_keeps_file") {
    // A gnuplot that writes half a picture and fails: the PNG named by -o is
    // neither replaced nor removed, and no temporary file stays behind.
    mkdir("fake-gnuplot", 0755);
    std::ofstream("fake-gnuplot/gnuplot") << "#!/bin/sh\n"
                                             "out=$(sed -n 's/^set output \"\\(.*\\)\"$/\\1/p' \"$1\")\n"
                                             "printf half > \"$out\"\n"
                                             "echo 'fake gnuplot: failed' >&2\n"
                                             "exit 1\n";
    REQUIRE(chmod("fake-gnuplot/gnuplot", 0755) == 0);
    std::ofstream("kept.png") << "the previous picture";
    const char* path = std::getenv("PATH");
    const std::string saved = path ? path : "";
    char cwd[4096];
    REQUIRE(getcwd(cwd, sizeof cwd) != nullptr);
    REQUIRE(setenv("PATH", (std::string(cwd) + "/fake-gnuplot:" + saved).c_str(), 1) == 0);
    const Outcome r = bench("plot " + kResults + " -o kept.png --op add");
    setenv("PATH", saved.c_str(), 1);
    CHECK_MESSAGE(r.code == 2, r.output);
    CHECK_MESSAGE(r.output.find("fake gnuplot: failed") != std::string::npos, r.output);
    CHECK(read_text("kept.png") == "the previous picture");
    CHECK(files_starting_with(".kept.png.tmp") == 0);
}

TEST_CASE("compare_bad_files") {
    // Empty, truncated, non-JSON and non-accel files: exit 2, the file named
    // with what is wrong, none of the JSON library's own text.
    const std::string whole = read_text(kResults);
    REQUIRE(whole.size() > 100);
    std::ofstream("empty.json").flush();
    std::ofstream("truncated.json") << whole.substr(0, whole.size() / 2);
    std::ofstream("not-json.json") << "hello, world\n";
    std::ofstream("other.json") << R"({"name": "a JSON file of something else"})";
    std::ofstream("bad-rows.json") << R"({"rows": [1, 2]})";
    const std::pair<const char*, const char*> cases[] = {
        {"empty.json", "empty file (0 bytes)"}, {"truncated.json", "truncated JSON"},
        {"not-json.json", "not JSON"},          {"other.json", "JSON without a \"rows\" array"},
        {"bad-rows.json", "row 0 is not a JSON object"}};
    for (const auto& c : cases) {
        const char* const file = c.first;  // not a structured binding: CAPTURE's lambda takes it (C++17)
        const char* const what = c.second;
        CAPTURE(file);
        for (const std::string& args : {kResults + " " + file, std::string(file) + " " + kResults}) {
            const Outcome r = bench("compare " + args);
            CHECK_MESSAGE(r.code == 2, r.output);
            CHECK_MESSAGE(r.output.find(std::string("accel-bench compare: ") + file + ": " + what) != std::string::npos,
                          r.output);
            CHECK_MESSAGE(r.output.find("not an accel-bench JSON report") != std::string::npos, r.output);
            CHECK_MESSAGE(r.output.find("json.exception") == std::string::npos, r.output);
        }
    }
}

TEST_CASE("compare_names_devices") {
    // Rows paired by op across two devices: every listed row names both
    // devices (base -> new), none an empty one.
    json j = load(kResults);
    for (auto& row : j["rows"]) {
        row["device"] = "another vendor's device";
        row["selector"] = "opencl:3";
        row["backend"] = "opencl";
    }
    json& row = j["rows"][0];
    row["kernel_ms"]["median"] = row["kernel_ms"]["median"].get<double>() * 3;
    std::ofstream("other_slower.json") << j.dump(2);
    const Outcome r = bench("compare " + kResults + " other_slower.json");
    CHECK_MESSAGE(r.code == 1, r.output);
    const std::string line = row["op"].get<std::string>() + " " + row["shape"].get<std::string>() + " f32 " +
                             row["path"].get<std::string>() + " on host:0 (";
    const auto at = r.output.find(line);
    REQUIRE_MESSAGE(at != std::string::npos, r.output);
    const std::string rest = r.output.substr(at, r.output.find('\n', at) - at);
    CHECK_MESSAGE(rest.find(") -> opencl:3 (another vendor's device) (3.00x the base time)") != std::string::npos, rest);
    CHECK_MESSAGE(r.output.find(" on  ") == std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find("host:0 -> opencl:3") != std::string::npos, r.output);  // the table's device column
}
