// accel-bench end to end. Run from the test's working directory; `run` writes
// x.json, which the other cases read (CTest fixture bench_json).
#include "bench_test.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <set>
#include <string>
#include <vector>

using nlohmann::json;
using namespace bench_test;

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
        // Every timed sample is kept, and the statistics are theirs.
        const json& ms = row["kernel_ms"];
        REQUIRE(ms["samples"].is_array());
        std::vector<double> samples = ms["samples"].get<std::vector<double>>();
        CHECK(samples.size() == row["runs"].get<std::size_t>());
        CHECK(samples.size() >= 4);
        std::sort(samples.begin(), samples.end());
        CHECK(ms["min"].get<double>() == samples.front());
        CHECK(ms["max"].get<double>() == samples.back());
        const std::size_t h = samples.size() / 2;
        CHECK(ms["median"].get<double>() ==
              doctest::Approx(samples.size() % 2 ? samples[h] : (samples[h - 1] + samples[h]) / 2));
        CHECK(ms["launches_per_sample"].get<int>() >= 1);
        const std::string stop = row["stopped_by"];
        CHECK((stop == "target" || stop == "time cap" || stop == "sample cap"));
        if (stop == "target") {  // the median's 95 % interval within ±3 %
            REQUIRE(ms["median_ci95"].is_array());
            CHECK(ms["median_ci95"][0].get<double>() >= ms["median"].get<double>() * 0.97 * (1 - 1e-12));
            CHECK(ms["median_ci95"][1].get<double>() <= ms["median"].get<double>() * 1.03 * (1 + 1e-12));
        }
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
    CHECK(r.output.find("slower beyond") == std::string::npos);
}

// The quick run with its first row's 10 samples all at its median (a steady
// row), written to base.json; and a copy with that row's samples `factor`
// times as long, returned. A difference there is past any spread.
json steady_first_row(double factor) {
    json j = load(kResults);
    auto& ms = j["rows"][0]["kernel_ms"];
    ms["min"] = ms["max"] = ms["median"];
    ms["samples"] = std::vector<double>(10, ms["median"].get<double>());
    std::ofstream("base.json") << j.dump(2);
    for (const char* k : {"min", "median", "max"}) ms[k] = ms[k].get<double>() * factor;
    ms["samples"] = std::vector<double>(10, ms["median"].get<double>());
    return j;
}

TEST_CASE("compare_slower") {
    json j = steady_first_row(2);
    const json& row = j["rows"][0];
    std::ofstream("slower.json") << j.dump(2);
    const Outcome r = bench("compare base.json slower.json");
    CHECK_MESSAGE(r.code == 1, r.output);
    const std::string name = row["op"].get<std::string>() + " " + row["shape"].get<std::string>();
    CHECK_MESSAGE(r.output.find("slower beyond") != std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find(name) != std::string::npos, r.output);
    CHECK(r.output.find("2.00x the base time") != std::string::npos);
}

TEST_CASE("compare_devices") {
    // Two runs of one device each (another vendor, another GPU) pair op by op
    // by default, whatever the devices are called.
    json j = load(kResults);
    for (auto& row : j["rows"]) {
        row["device"] = "another vendor's device";
        row["selector"] = row["stable_selector"] = "opencl:intel:0";
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

// `accel-bench plot ARGS -o png` on the quick run's results: exits 0 and
// writes a PNG of more than 1000 bytes; returns the output. Skips the test
// case (exit 77) where gnuplot is not installed.
std::string plot_to_png(const std::string& args, const char* png) {
    if (!on_path("gnuplot")) {
        MESSAGE("gnuplot is not installed (Debian: gnuplot-nox); skipped");
        std::exit(77);
    }
    std::remove(png);
    const Outcome r = bench("plot " + kResults + " -o " + png + " " + args);
    REQUIRE_MESSAGE(r.code == 0, r.output);
    std::ifstream file(png, std::ios::binary);
    char magic[4] = {};
    file.read(magic, 4);
    CHECK(std::string(magic + 1, 3) == "PNG");
    struct stat st {};
    CHECK(stat(png, &st) == 0);
    CHECK(st.st_size > 1000);
    return r.output;
}

TEST_CASE("plot") { plot_to_png("--op add", "x.png"); }

TEST_CASE("roofline") {
    CHECK(plot_to_png("--roofline", "roofline.png").find("1 device ceiling") != std::string::npos);
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
    std::ofstream("bad-samples.json") << R"({"rows": [{"op": "add", "kernel_ms": {"median": 1, "samples": [1, -2]}}]})";
    const std::pair<const char*, const char*> cases[] = {
        {"empty.json", "empty file (0 bytes)"}, {"truncated.json", "truncated JSON"},
        {"not-json.json", "not JSON"},          {"other.json", "JSON without a \"rows\" array"},
        {"bad-rows.json", "row 0 is not a JSON object"},
        {"bad-samples.json", "row 0: kernel_ms.samples is not an array of positive times (ms)"}};
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
    json j = steady_first_row(3);
    for (auto& row : j["rows"]) {
        row["device"] = "another vendor's device";
        row["selector"] = row["stable_selector"] = "opencl:intel:0";
        row["backend"] = "opencl";
    }
    const json& row = j["rows"][0];
    std::ofstream("other_slower.json") << j.dump(2);
    const Outcome r = bench("compare base.json other_slower.json");
    CHECK_MESSAGE(r.code == 1, r.output);
    const std::string line = row["op"].get<std::string>() + " " + row["shape"].get<std::string>() + " f32 " +
                             row["path"].get<std::string>() + " on host:0 (";
    const auto at = r.output.find(line);
    REQUIRE_MESSAGE(at != std::string::npos, r.output);
    const std::string rest = r.output.substr(at, r.output.find('\n', at) - at);
    CHECK_MESSAGE(rest.find(") -> opencl:intel:0 (another vendor's device) (3.00x the base time,") != std::string::npos, rest);
    CHECK_MESSAGE(r.output.find(" on  ") == std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find("host:0 -> opencl:intel:0") != std::string::npos, r.output);  // the table's device column
}

// Fresh samples of a row's kernel time: `n` draws of median·e^(sigma·Z)
// times `factor`, Z standard normal, from a generator seeded with `seed`.
std::vector<double> draws(std::uint64_t seed, std::size_t n, double median, double sigma, double factor = 1) {
    std::mt19937_64 rng(seed);
    std::lognormal_distribution<double> d(std::log(median * factor), sigma);
    std::vector<double> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

// The quick run's first row with `samples` (and their median, min and max)
// written to `file`; every other row as the run had it.
void write_first_row(const std::string& file, const std::vector<double>& samples) {
    json j = load(kResults);
    auto& ms = j["rows"][0]["kernel_ms"];
    std::vector<double> v(samples);
    std::sort(v.begin(), v.end());
    ms["samples"] = samples;
    ms["min"] = v.front();
    ms["max"] = v.back();
    ms["median"] = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    j["rows"][0]["runs"] = samples.size();
    std::ofstream(file) << j.dump(2);
}

// The verdict compare prints in the first row's line of its table.
std::string first_row_verdict(const std::string& output) {
    const json j = load(kResults);
    const json& row = j["rows"][0];
    const std::string head = row["op"].get<std::string>() + " ";
    std::stringstream s(output);
    std::string line;
    while (std::getline(s, line))
        if (line.rfind(head, 0) == 0 && line.find(" " + row["shape"].get<std::string>() + " ") != std::string::npos) {
            for (const char* v : {"SLOWER", "faster", "small", "same", "no verdict", "no test"})
                if (line.size() >= std::strlen(v) && line.compare(line.size() - std::strlen(v), std::strlen(v), v) == 0)
                    return v;
            return "(none)";
        }
    return "(row not found)";
}

TEST_CASE("compare_outlier") {
    // A row made 2x slower in every statistic, with one outlier in the base
    // (a run 30x the median: a lost time slice) that widens the base's
    // min..max over the new one: SLOWER, exit 1.
    std::vector<double> base = draws(101, 11, 0.1, 0.05);
    base[4] = 3.0;
    std::vector<double> next(base);
    for (double& x : next) x *= 2;
    write_first_row("outlier_base.json", base);
    write_first_row("outlier_new.json", next);
    const Outcome r = bench("compare outlier_base.json outlier_new.json");
    CHECK_MESSAGE(r.code == 1, r.output);
    CHECK_MESSAGE(first_row_verdict(r.output) == "SLOWER", r.output);
    CHECK_MESSAGE(r.output.find("2.00x the base time") != std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find("slower beyond the 5 % minimum effect (1)") != std::string::npos, r.output);
}

TEST_CASE("compare_shift") {
    // Clean samples (2 % spread) of a row 1.2x slower: found (SLOWER, exit 1),
    // with the ratio's interval around 1.2; the same distribution drawn
    // afresh: same, exit 0; 1.02x: below the 5 % minimum effect, exit 0;
    // --min-effect 0.3 lets 1.2x pass; --alpha 1e-9 cannot be reached by 12 + 12 samples.
    write_first_row("shift_base.json", draws(201, 12, 0.1, 0.02));
    write_first_row("shift_slower.json", draws(202, 12, 0.1, 0.02, 1.2));
    write_first_row("shift_same.json", draws(203, 12, 0.1, 0.02));
    write_first_row("shift_tiny.json", draws(204, 40, 0.1, 0.005, 1.02));
    Outcome r = bench("compare shift_base.json shift_slower.json");
    CHECK_MESSAGE(r.code == 1, r.output);
    CHECK_MESSAGE(first_row_verdict(r.output) == "SLOWER", r.output);
    r = bench("compare shift_base.json shift_same.json");
    CHECK_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(first_row_verdict(r.output) == "same", r.output);
    r = bench("compare shift_base.json shift_tiny.json");
    CHECK_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE((first_row_verdict(r.output) == "small" || first_row_verdict(r.output) == "same"), r.output);
    r = bench("compare shift_base.json shift_slower.json --min-effect 0.3");
    CHECK_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(first_row_verdict(r.output) == "small", r.output);
    r = bench("compare shift_base.json shift_slower.json --alpha 1e-9");
    CHECK_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(first_row_verdict(r.output) == "no verdict", r.output);
}

TEST_CASE("compare_runs") {
    // Five runs a side whose samples are tight (1 %) but whose runs moved
    // between 0.9x and 1.15x, as a shared machine's runs do. One file a side:
    // two runs 10 % apart are SLOWER (the samples cannot see the runs'
    // variation). The runs as the unit: the same five-and-five are "same";
    // the new runs made 1.5x slower are SLOWER, exit 1; 1 file against 3 is a
    // usage error.
    const double base_runs[] = {1.00, 1.15, 0.90, 1.10, 0.95}, new_runs[] = {1.10, 0.92, 1.05, 0.97, 1.12};
    std::string base_list, new_list, slower_list;
    for (int i = 0; i < 5; ++i) {
        const std::string b = "runs_base" + std::to_string(i) + ".json", n = "runs_new" + std::to_string(i) + ".json",
                          sl = "runs_slower" + std::to_string(i) + ".json";
        write_first_row(b, draws(500 + i, 12, 0.1, 0.01, base_runs[i]));
        write_first_row(n, draws(600 + i, 12, 0.1, 0.01, new_runs[i]));
        write_first_row(sl, draws(700 + i, 12, 0.1, 0.01, 1.5 * new_runs[i]));
        base_list += (i ? "," : "") + b;
        new_list += (i ? "," : "") + n;
        slower_list += (i ? "," : "") + sl;
    }
    Outcome r = bench("compare runs_base0.json runs_new0.json");
    CHECK_MESSAGE(r.code == 1, r.output);
    CHECK_MESSAGE(first_row_verdict(r.output) == "SLOWER", r.output);
    r = bench("compare " + base_list + " " + new_list);
    CHECK_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(first_row_verdict(r.output) == "same", r.output);
    CHECK_MESSAGE(r.output.find("the run is the unit") != std::string::npos, r.output);
    r = bench("compare " + base_list + " " + slower_list);
    CHECK_MESSAGE(r.code == 1, r.output);
    CHECK_MESSAGE(first_row_verdict(r.output) == "SLOWER", r.output);
    r = bench("compare runs_base0.json runs_new0.json,runs_new1.json,runs_new2.json");
    CHECK_MESSAGE(r.code == 2, r.output);
    CHECK_MESSAGE(r.output.find("BASE has 1 file(s) and NEW 3") != std::string::npos, r.output);
}

TEST_CASE("compare_few_samples") {
    // 3 + 3 samples cannot reach p < 0.05 however far apart: no verdict, never
    // "same"; exit 0 (not counted).
    write_first_row("few_base.json", draws(301, 3, 0.1, 0.01));
    write_first_row("few_new.json", draws(302, 3, 0.1, 0.01, 3));
    const Outcome r = bench("compare few_base.json few_new.json");
    CHECK_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(first_row_verdict(r.output) == "no verdict", r.output);
    CHECK_MESSAGE(r.output.find("no verdict: too few samples (not counted) (1)") != std::string::npos, r.output);
}

TEST_CASE("compare_no_samples") {
    // A file written before rows kept their samples: the ratio of the medians,
    // and no test (exit 0 even at 2x).
    json j = load(kResults);
    for (auto& row : j["rows"])
        if (row.contains("kernel_ms")) row["kernel_ms"].erase("samples");
    std::ofstream("old.json") << j.dump(2);
    json slow = steady_first_row(2);
    std::ofstream("new_slow.json") << slow.dump(2);
    const Outcome r = bench("compare old.json new_slow.json");
    CHECK_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(first_row_verdict(r.output) == "no test", r.output);
    CHECK_MESSAGE(r.output.find("no samples in BASE") != std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find("no test possible (not counted) (" + std::to_string(j["rows"].size()) + ")") !=
                      std::string::npos,
                  r.output);
}

TEST_CASE("compare_drift") {
    // Every row of a device 1.3x slower: called SLOWER row by row, with a
    // note that the whole device moved (the machine's state, likely); one
    // row alone moving gets no such note.
    json j = load(kResults);
    for (auto& row : j["rows"]) {
        if (!row.contains("kernel_ms")) continue;
        auto& ms = row["kernel_ms"];
        for (const char* k : {"min", "median", "max"}) ms[k] = ms[k].get<double>() * 1.3;
        for (auto& x : ms["samples"]) x = x.get<double>() * 1.3;
    }
    std::ofstream("drift.json") << j.dump(2);
    Outcome r = bench("compare " + kResults + " drift.json");
    CHECK_MESSAGE(r.code == 1, r.output);
    CHECK_MESSAGE(r.output.find(" rows on host:0 moved the same way (geometric mean new/base 1.30)") !=
                      std::string::npos,
                  r.output);
    write_first_row("one_row.json", draws(401, 12, 0.1, 0.02, 1.3));
    write_first_row("one_row_base.json", draws(402, 12, 0.1, 0.02));
    r = bench("compare one_row_base.json one_row.json");
    CHECK_MESSAGE(r.code == 1, r.output);
    CHECK_MESSAGE(r.output.find("moved the same way") == std::string::npos, r.output);
}

TEST_CASE("compare_ambiguous") {
    // --by op on a file with two devices pairs one row with two: an error
    // naming the rows, not a silent pick.
    json j = load(kResults);
    json copy = j["rows"][0];
    copy["selector"] = copy["stable_selector"] = "opencl:intel:0";
    copy["backend"] = "opencl";
    copy["device"] = "another vendor's device";
    j["rows"].push_back(copy);
    std::ofstream("two_devices.json") << j.dump(2);
    const Outcome r = bench("compare " + kResults + " two_devices.json --by op");
    CHECK_MESSAGE(r.code == 2, r.output);
    CHECK_MESSAGE(r.output.find("pairs more than one row of two_devices.json") != std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find("opencl:intel:0 (another vendor's device)") != std::string::npos, r.output);
    // auto picks a pairing that is one to one.
    CHECK_MESSAGE(bench("compare " + kResults + " two_devices.json").code == 0, r.output);
}

TEST_CASE("compare_old_dense") {
    // Dense rows name their activation ("activation": "sigmoid"; tables say
    // dense+sigmoid); files from before that hold sigmoid dense rows without
    // the key, and still pair with new ones.
    json j = load(kResults);
    std::size_t dense = 0;
    for (auto& row : j["rows"]) {
        if (row["op"] != "dense") {
            CHECK_FALSE(row.contains("activation"));
            continue;
        }
        ++dense;
        CHECK(row["activation"] == "sigmoid");
        row.erase("activation");
    }
    REQUIRE_MESSAGE(dense > 0, "the quick run has no dense rows");
    std::ofstream("old_dense.json") << j.dump(2);
    const Outcome r = bench("compare old_dense.json " + kResults + " --threshold 1e6");
    CHECK_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(r.output.find("over " + std::to_string(j["rows"].size()) + " rows") != std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find("dense+sigmoid") != std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find("only in") == std::string::npos, r.output);
}

// ---- accel-bench mlp -------------------------------------------------------

namespace {

// Checks an `accel-bench mlp --format json` document: `devices` rows per
// configuration, each with finite positive timings, a finite loss that
// agrees with the first device's within the row's tolerance, and the steps
// its epochs take.
void check_mlp_rows(const json& j, std::size_t devices, std::size_t hidden, std::size_t epochs) {
    REQUIRE(j["command"] == "mlp");
    REQUIRE(j["rows"].size() == devices);
    const std::size_t samples = j["problem"]["train_samples"].get<std::size_t>();
    CHECK(samples > 0);
    const double first = j["rows"][0]["final_loss"].get<double>();
    for (const auto& row : j["rows"]) {
        INFO(row.dump());
        REQUIRE_FALSE(row.contains("error"));
        CHECK(row["pass"].get<bool>());
        CHECK(row["agrees"].get<bool>());
        CHECK(row["hidden"].get<std::size_t>() == hidden);
        CHECK(row["in"].get<std::size_t>() == 30);
        CHECK(row["epochs"].get<std::size_t>() == epochs);
        // The first epoch apart (kernel builds), then the steady ones: every
        // timed epoch (the first was a warm-up one), under both names.
        const json& ms = row["epoch_ms"];
        const double median = ms["median"].get<double>(), lo = ms["min"].get<double>(), hi = ms["max"].get<double>();
        CHECK(row["first_epoch_ms"].get<double>() > 0);
        CHECK(ms["epochs"].get<std::size_t>() == epochs * j["settings"]["rounds"].get<std::size_t>());
        CHECK(std::isfinite(median));
        CHECK(lo > 0);
        CHECK(lo <= median);
        CHECK(median <= hi);
        CHECK(std::isfinite(hi));
        for (const char* k : {"median", "min", "max"}) CHECK(row["ms_per_epoch"][k] == ms[k]);
        CHECK(row["samples_per_s"].get<double>() == doctest::Approx(double(samples) / (median / 1000)));
        const std::size_t batch = row["batch"].get<std::size_t>();
        CHECK(row["steps"].get<std::size_t>() == epochs * ((samples + batch - 1) / batch));
        const double loss = row["final_loss"].get<double>();
        CHECK(std::isfinite(loss));
        CHECK(loss > 0);
        // The document's own verdict, recomputed.
        const double rel = std::fabs(loss - first) / std::fabs(first);
        CHECK(rel <= row["loss_tolerance"].get<double>());
        CHECK(row["loss_rel_diff"].get<double>() == doctest::Approx(rel).epsilon(1e-9));
    }
}

// The quick run on host and `backend`; exits 77 (skipped) when `backend` is unavailable here.
void mlp_two_devices(const std::string& backend) {
    const std::string file = "mlp-" + backend + ".json";
    std::remove(file.c_str());
    const Outcome r = bench("mlp --quick --backends host," + backend + " --format json -o " + file);
    if (r.code == 2 && r.output.find(backend) != std::string::npos) {
        MESSAGE(backend << " unavailable: " << r.output);
        std::exit(77);
    }
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const json j = load(file);
    check_mlp_rows(j, 2, 64, 3);
    CHECK(j["rows"][1]["backend"] == backend);
}

// Lines of `text` (each ending in '\n').
std::size_t lines(const std::string& text) { return std::size_t(std::count(text.begin(), text.end(), '\n')); }

}  // namespace

TEST_CASE("mlp_quick") {
    std::remove("mlp.json");
    const Outcome r = bench("mlp --quick --backends host --format json -o mlp.json");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const json j = load("mlp.json");
    check_mlp_rows(j, 1, 64, 3);
    CHECK(j["rows"][0]["reference"] == j["rows"][0]["stable_selector"]);
    CHECK(j["rows"][0]["loss_rel_diff"].get<double>() == 0);
    CHECK(j["settings"]["rounds"] == 1);
    CHECK(j["max_loss_rel_diff"]["f32"].get<double>() == 0);
    // compare and plot take reports of ops: an mlp report is refused, saying what it is.
    const Outcome c = bench("compare mlp.json mlp.json");
    CHECK_MESSAGE(c.code == 2, c.output);
    CHECK_MESSAGE(c.output.find("mlp.json: an `accel-bench mlp` report") != std::string::npos, c.output);
    // Every round trains the same model from the same weights and batches: the same loss again.
    const Outcome again = bench("mlp --quick --backends host --format json --rounds 2 --hidden 64,32 -o mlp2.json");
    REQUIRE_MESSAGE(again.code == 0, again.output);
    const json k = load("mlp2.json");
    REQUIRE(k["rows"].size() == 2);
    CHECK(k["rows"][0]["final_loss"].get<double>() == j["rows"][0]["final_loss"].get<double>());
    CHECK(k["rows"][0]["ms_per_epoch"]["rounds"].size() == 2);
    CHECK(k["rows"][1]["hidden"] == 32);
}

TEST_CASE("mlp_graph") {
    // --graph: an eager and a graph row per device, interleaved, the same final loss bit for bit.
    std::remove("mlp-graph.json");
    const Outcome r = bench("mlp --quick --backends host,kokkos --graph --rounds 2 --format json -o mlp-graph.json");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const json j = load("mlp-graph.json");
    CHECK(j["settings"]["graph"] == true);
    REQUIRE(j["rows"].size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
        CHECK(j["rows"][i]["step"] == (i % 2 ? "graph" : "eager"));
        CHECK(j["rows"][i]["ms_per_epoch"]["rounds"].size() == 2);
    }
    for (std::size_t i = 0; i < 4; i += 2) {
        CHECK(j["rows"][i]["stable_selector"] == j["rows"][i + 1]["stable_selector"]);
        CHECK(j["rows"][i]["final_loss"].get<double>() == j["rows"][i + 1]["final_loss"].get<double>());
    }
    const Outcome t = bench("mlp --quick --backends host --graph --wide");
    REQUIRE_MESSAGE(t.code == 0, t.output);
    CHECK_MESSAGE(t.output.find("graph step on host:0 (hidden 64, f32): ") != std::string::npos, t.output);
    CHECK_MESSAGE(t.output.find("the same final loss, bit for bit") != std::string::npos, t.output);
}

TEST_CASE("mlp_kokkos") { mlp_two_devices("kokkos"); }

TEST_CASE("mlp_opencl") { mlp_two_devices("opencl"); }

TEST_CASE("mlp_table_and_csv") {
    Outcome r = bench("mlp --quick --backends host --hidden 16,32 --dtype f32,f64");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    for (const char* want : {"first ms", "ms/epoch", "samples/s", "final loss", "rel diff",
                             "largest relative difference", "(f32)", "(f64)", "devices:\n  host:0  "})
        CHECK_MESSAGE(r.output.find(want) != std::string::npos, want);
    std::size_t ok_rows = 0;  // one per hidden size and dtype
    for (std::size_t at = 0; (at = r.output.find("\nhost:0 ", at)) != std::string::npos; ++at)
        ok_rows += r.output.compare(r.output.find('\n', at + 1) - 4, 4, "  ok") == 0;
    CHECK(ok_rows == 4);
    r = bench("mlp --quick --backends host --hidden 16 --format csv -o mlp.csv");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const std::string csv = read_text("mlp.csv");
    CHECK(lines(csv) == 2);
    CHECK(csv.rfind("backend,device,selector,", 0) == 0);
    CHECK(csv.find(",16,256,f32,") != std::string::npos);
    CHECK(csv.find(",true,\"\",eager\n") != std::string::npos);
}

TEST_CASE("mlp_save_problem") {
    // What another framework needs to train the same model on the same
    // batches: the training set, every epoch's order, the initial weights.
    std::remove("problem.json");
    const Outcome r = bench("mlp --quick --backends host --hidden 8,5 --warmup 2 --batch 100 --save-problem problem.json");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const json p = load("problem.json");
    CHECK(p["format"] == "accel-bench mlp problem");
    CHECK(p["version"] == 1);
    CHECK(p["batch"] == 100);
    CHECK(p["warmup_epochs"] == 2);
    CHECK(p["epochs"] == 3);
    const std::size_t n = p["train"]["x"].size();
    REQUIRE(n > 100);
    CHECK(p["train"]["y"].size() == n);
    double mean0 = 0;
    for (const auto& x : p["train"]["x"]) {
        REQUIRE(x.size() == 30);
        mean0 += x[0].get<double>();
    }
    CHECK(std::fabs(mean0 / double(n)) < 1e-5);  // standardized
    REQUIRE(p["epoch_orders"].size() == 5);
    std::set<std::vector<std::size_t>> distinct;
    for (const auto& order : p["epoch_orders"]) {
        std::vector<std::size_t> o = order.get<std::vector<std::size_t>>();
        distinct.insert(o);
        std::sort(o.begin(), o.end());
        for (std::size_t i = 0; i < n; ++i) REQUIRE(o[i] == i);  // a permutation of the samples
    }
    CHECK(distinct.size() == 5);
    REQUIRE(p["init"].size() == 2);
    CHECK(p["init"][0]["hidden"] == 8);
    CHECK(p["init"][0]["w1"].size() == 8);
    CHECK(p["init"][0]["w1"][0].size() == 30);
    CHECK(p["init"][0]["b1"].size() == 8);
    CHECK(p["init"][0]["w2"].size() == 1);
    CHECK(p["init"][0]["w2"][0].size() == 8);
    CHECK(p["init"][0]["b2"].size() == 1);
    CHECK(p["init"][1]["hidden"] == 5);
}

TEST_CASE("mlp_usage") {
    // A malformed command line: exit 2, one line naming what is wrong, before any work.
    const std::pair<const char*, const char*> cases[] = {
        {"--batch 0", "--batch: '0' is not a positive whole number"},
        {"--hidden abc", "--hidden: 'abc' is not a positive whole number"},
        {"--hidden 64,-3", "--hidden: '-3' is not a positive whole number"},
        {"--epochs 0", "--epochs: '0'"},
        {"--rounds 2.5", "--rounds: '2.5'"},
        {"--dtype f8", "dtype 'f8'"},
        {"--format xml", "valid formats: table, csv, json"},
        {"--seed x", "--seed: 'x' is not a whole number"},
        {"--backends ,", "names no device"},
        {"--frob", "unknown option '--frob'"}};
    for (const auto& c : cases) {
        const std::string args = c.first;
        const char* const want = c.second;
        CAPTURE(args);
        const Outcome r = bench("mlp " + (args.find("--backends") == 0 ? "" : std::string("--backends host ")) + args);
        CHECK_MESSAGE(r.code == 2, r.output);
        CHECK_MESSAGE(lines(r.output) == 1, r.output);
        CHECK_MESSAGE(r.output.rfind("accel-bench mlp: ", 0) == 0, r.output);
        CHECK_MESSAGE(r.output.find(want) != std::string::npos, r.output);
    }
    const Outcome r = bench("mlp --backends host --quick --data no-such.csv");
    CHECK_MESSAGE(r.code == 2, r.output);
    CHECK_MESSAGE(r.output.find("no-such.csv") != std::string::npos, r.output);
}

TEST_CASE("mlp_failed_run_writes_no_file") {
    // A run that fails (a named device that does not exist, an unreadable
    // data set) leaves neither output file, and keeps existing ones as they were.
    std::remove("mlp-failed.json");
    std::remove("mlp-problem-failed.json");
    for (const char* args : {"--backends host:5", "--backends host --data no-such.csv"}) {
        CAPTURE(args);
        const Outcome r = bench(std::string("mlp --quick ") + args +
                                " --format json -o mlp-failed.json --save-problem mlp-problem-failed.json");
        CHECK_MESSAGE(r.code == 2, r.output);
        CHECK_MESSAGE(!exists("mlp-failed.json"), "a failed run left mlp-failed.json behind");
        CHECK_MESSAGE(!exists("mlp-problem-failed.json"), "a failed run left mlp-problem-failed.json behind");
    }
    std::ofstream("mlp-kept.json") << "the previous run\n";
    const Outcome r = bench("mlp --quick --backends host:5 -o mlp-kept.json");
    CHECK(r.code == 2);
    CHECK(read_text("mlp-kept.json") == "the previous run\n");
    CHECK(files_starting_with(".mlp-kept.json.tmp") == 0);
    CHECK(files_starting_with(".mlp-failed.json.tmp") == 0);
    CHECK(files_starting_with(".mlp-problem-failed.json.tmp") == 0);
}

TEST_CASE("mlp_failed_row") {
    // A device whose kernels fail: its row carries the error, the others still
    // run and the output is written, and the exit status is 1.
#ifdef ACCEL_EMULATED_PLUGINS
    std::remove("mlp-failed-row.json");
    REQUIRE(setenv("ACCEL_CUDA_EMULATION_FAULTS", "launch_error=700", 1) == 0);
    REQUIRE(setenv("ACCEL_PLUGIN_PATH", ACCEL_EMULATED_PLUGINS, 1) == 0);
    const Outcome r = bench("mlp --quick --backends host,cuda --format json -o mlp-failed-row.json");
    unsetenv("ACCEL_CUDA_EMULATION_FAULTS");
    unsetenv("ACCEL_PLUGIN_PATH");
    CHECK_MESSAGE(r.code == 1, r.output);
    CHECK_MESSAGE(r.output.find("FAIL: mlp hidden 64 batch 256 f32 on cuda:0") != std::string::npos, r.output);
    const json j = load("mlp-failed-row.json");
    REQUIRE(j["rows"].size() == 2);
    CHECK(j["rows"][0]["pass"].get<bool>());
    CHECK_FALSE(j["rows"][1]["pass"].get<bool>());
    CHECK(j["rows"][1]["error"].is_string());
    CHECK_FALSE(j["rows"][1].contains("ms_per_epoch"));
#else
    MESSAGE("no emulated CUDA plugin in this build: nothing to check");
#endif
}
