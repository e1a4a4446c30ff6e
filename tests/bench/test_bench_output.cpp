// accel-bench's output for people and for logs: plots of several files, the
// compact table and its legend, the progress lines on a non-terminal stderr,
// and dense rows in several activations. Run from the test's working
// directory, after bench.run wrote x.json (CTest fixture bench_json).
#include "bench_test.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <regex>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using nlohmann::json;
using namespace bench_test;

namespace {

// The lines of `text` that start with `prefix`.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
    std::vector<std::string> out;
    std::stringstream s(text);
    std::string line;
    while (std::getline(s, line))
        if (line.rfind(prefix, 0) == 0) out.push_back(line);
    return out;
}

}  // namespace

TEST_CASE("plot_two_files") {
    // Two runs of one machine (both hold host:0 rows): one line per file,
    // device, path and dtype, each named with its file; one ceiling per
    // device of each file on the roofline.
    if (!on_path("gnuplot")) {
        MESSAGE("gnuplot is not installed (Debian: gnuplot-nox); skipped");
        std::exit(77);
    }
    json j = load(kResults);
    std::ofstream("a.json") << j.dump(2);
    std::set<std::string> dense_paths, roofline_kinds;  // what each file holds
    for (auto& row : j["rows"]) {
        if (row["op"] == "dense") dense_paths.insert(row["path"].get<std::string>());
        roofline_kinds.insert(row["path"].get<std::string>() + " " + row["dtype"].get<std::string>());
        for (const char* k : {"min", "median", "max"}) row["kernel_ms"][k] = row["kernel_ms"][k].get<double>() * 2;
    }
    std::ofstream("b.json") << j.dump(2);
    REQUIRE(!dense_paths.empty());

    Outcome r = bench("plot a.json b.json -o two.png --op dense");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const std::size_t lines = 2 * dense_paths.size();
    CHECK_MESSAGE(r.output.find(", " + std::to_string(lines) + " line(s):") != std::string::npos, r.output);
    for (const char* file : {"a.json", "b.json"}) {
        CHECK_MESSAGE(lines_starting(r.output, std::string("  ") + file + ": ").size() == dense_paths.size(), r.output);
        for (const auto& path : dense_paths)
            CHECK_MESSAGE(r.output.find(std::string("  ") + file + ": " + j["rows"][0]["device"].get<std::string>() +
                                        " (host:0, " + path + ", f32, sigmoid)") != std::string::npos,
                          r.output);
    }

    r = bench("plot a.json b.json -o two-roofline.png --roofline");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(r.output.find(std::to_string(2 * roofline_kinds.size()) + " series, 2 device ceiling(s):") !=
                      std::string::npos,
                  r.output);
    CHECK_MESSAGE(lines_starting(r.output, "  a.json: host:0 ceilings (").size() == 1, r.output);
    CHECK_MESSAGE(lines_starting(r.output, "  b.json: host:0 ceilings (").size() == 1, r.output);
}

TEST_CASE("table_compact_and_wide") {
    // The table names devices by selector, the legend once by name; --wide
    // puts the name in every row instead, as before.
    Outcome r = bench("--quick --backends host --ops add --add-sizes 1000,2000 --json compact.json");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const json j = load("compact.json");
    const std::string name = j["devices"][0]["name"].get<std::string>();
    const std::string runtime = j["devices"][0]["runtime_version"].get<std::string>();
    CHECK_MESSAGE(r.output.find("devices:\n  host:0  " + name + "; runtime " + runtime) != std::string::npos,
                  r.output);
    const auto rows = lines_starting(r.output, "host:0  add");
    CHECK_MESSAGE(rows.size() == 2, r.output);
    for (const auto& row : rows) CHECK_MESSAGE(row.find(name) == std::string::npos, row);

    r = bench("--quick --backends host --ops add --add-sizes 1000,2000 --wide");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(r.output.find("devices:\n") == std::string::npos, r.output);
    CHECK_MESSAGE(lines_starting(r.output, "host:0  " + name).size() == 3, r.output);  // the device table's and 2 rows
}

TEST_CASE("progress_lines") {
    // stderr to a file (not a terminal): one line per finished row, with its
    // time and rate and the time left, as it finishes; stdout holds the
    // report alone.
    const SplitOutcome r =
        bench_split("--quick --backends host --ops add,matmul --add-sizes 1000,3000 --matmul-sizes 16 --paths "
                    "native --format json");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const json j = json::parse(r.out);  // stdout: the JSON alone
    const auto& rows = j["rows"];
    REQUIRE(rows.size() == 3);
    const auto lines = lines_starting(r.err, "[");
    REQUIRE_MESSAGE(lines.size() == rows.size(), r.err);
    // Rows are sampled in rounds together, so they finish in any order: each
    // line counts the rows done and names one row, each row once.
    std::set<std::size_t> named;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        CHECK_MESSAGE(line.rfind("[" + std::to_string(i + 1) + "/3] ", 0) == 0, line);
        for (std::size_t k = 0; k < rows.size(); ++k) {
            const json& row = rows[k];
            const std::string head = "/3] " + row["op"].get<std::string>() + " " + row["shape"].get<std::string>() +
                                     " f32 native on host:0: ";
            if (line.find(head) != std::string::npos) {
                named.insert(k);
                CHECK_MESSAGE(line.find(row.contains("gflops") ? " GFLOP/s" : " GB/s") != std::string::npos, line);
            }
        }
        CHECK_MESSAGE(line.find(" ms, ") != std::string::npos, line);
        CHECK_MESSAGE(line.find(" s so far") != std::string::npos, line);
        // The time left, from the rows measured so far; none after the last.
        CHECK_MESSAGE((line.find(" s left") != std::string::npos) == (i + 1 < rows.size()), line);
    }
    CHECK_MESSAGE(named.size() == rows.size(), r.err);
    CHECK_MESSAGE(lines_starting(r.err, "ceilings of host:0 measured in ").size() == 1, r.err);
    // --no-progress: nothing on stderr.
    const SplitOutcome quiet = bench_split("--quick --backends host --ops add --add-sizes 1000 --no-progress");
    REQUIRE_MESSAGE(quiet.code == 0, quiet.err);
    CHECK_MESSAGE(quiet.err.empty(), quiet.err);
}

TEST_CASE("activations") {
    // --activations none,relu: two dense rows per size and path, each naming
    // its activation and checked against the oracle; compare never pairs
    // rows of different activations (x.json's dense rows are sigmoid's).
    Outcome r = bench("--quick --backends host --ops add,dense --add-sizes 1000 --dense-shapes 16x64x32,8x16x4 "
                      "--activations none,relu --json act.json");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const json j = load("act.json");
    std::set<std::string> paths;
    std::multiset<std::string> seen;  // shape, path, activation
    for (const auto& row : j["rows"]) {
        if (row["op"] != "dense") continue;
        INFO(row.dump());
        paths.insert(row["path"].get<std::string>());
        seen.insert(row["shape"].get<std::string>() + " " + row["path"].get<std::string>() + " " +
                    row["activation"].get<std::string>());
        CHECK(row["pass"].get<bool>());
        CHECK(row["nmse"].get<double>() <= row["nmse_threshold"].get<double>());
        CHECK(row["nmse"].get<double>() < 1e-10);
    }
    REQUIRE(!paths.empty());
    CHECK(seen.size() == 2 * 2 * paths.size());  // 2 shapes, 2 activations, each path
    for (const char* shape : {"16x64x32", "8x16x4"})
        for (const auto& path : paths)
            for (const char* act : {"none", "relu"})
                CHECK_MESSAGE(seen.count(std::string(shape) + " " + path + " " + act) == 1, shape, path, act);
    CHECK(j["settings"]["dense_activations"] == json({"none", "relu"}));
    for (const char* op : {"dense+none", "dense+relu"}) {  // the table names each row's activation
        std::size_t rows = 0;
        for (const auto& line : lines_starting(r.output, std::string("host:0  ") + op + " "))
            rows += line.size() > 6 && line.compare(line.size() - 6, 6, "  pass") == 0;
        CHECK_MESSAGE(rows == 2 * paths.size(), r.output);
    }

    r = bench("--quick --backends host --ops dense --dense-shapes 8x16x4 --activations relu --paths native --format "
              "csv -o act.csv");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(read_text("act.csv").find(",dense,relu,8x16x4,") != std::string::npos, read_text("act.csv"));

    r = bench("compare " + kResults + " act.json --min-effect 1e6");  // the pairing, not the two runs' times
    CHECK_MESSAGE(r.code == 0, r.output);
    CHECK_MESSAGE(r.output.find("over 1 rows") != std::string::npos, r.output);  // add 1000 alone pairs
    const auto only_new = r.output.find("only in act.json");
    REQUIRE_MESSAGE(only_new != std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find("dense+relu 16x64x32 f32", only_new) != std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find("dense+sigmoid 16x64x32 f32") < only_new, r.output);  // only in x.json

    r = bench("--quick --backends host --activations tanh");
    CHECK_MESSAGE(r.code == 2, r.output);
    CHECK_MESSAGE(r.output.find("valid activations: none, relu, sigmoid") != std::string::npos, r.output);
}

TEST_CASE("ceilings") {
    // Each matmul/dense row is rated against the ceiling of the unit its kernel
    // computes with in its dtype and path: f64 against f64's FMA peak, f32 and
    // the f16/bf16 kernels that accumulate in f32 against f32's, CUDA's
    // f16/bf16 on cuBLAS and, where the device says its native kernel runs on
    // tensor cores, on that kernel, against the matrix engine's (never f32's).
#ifdef ACCEL_EMULATED_PLUGINS
    REQUIRE(setenv("ACCEL_PLUGIN_PATH", ACCEL_EMULATED_PLUGINS, 1) == 0);
    const Outcome r = bench("--quick --backends host,cuda --ops matmul,dense --dtypes f32,f64,f16,bf16 --json c.json");
    unsetenv("ACCEL_PLUGIN_PATH");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const json j = load("c.json");
    const std::map<std::string, const char*> field{{"fma f32", "peak_fma_gflops"},
                                                   {"fma f64", "peak_fma_gflops_f64"},
                                                   {"fma f16", "peak_fma_gflops_f16"},
                                                   {"matrix f16", "peak_matrix_gflops_f16"},
                                                   {"matrix bf16", "peak_matrix_gflops_bf16"}};
    std::map<std::string, json> device;
    for (const auto& d : j["devices"]) device[d["selector"].get<std::string>()] = d;
    int matrix_rows = 0;
    for (const auto& row : j["rows"]) {
        INFO(row.dump());
        const std::string dtype = row["dtype"], path = row["path"], backend = row["backend"];
        const bool half = dtype == "f16" || dtype == "bf16";
        const json& dev = device.at(row["selector"]);
        const bool tensor_cores = dev["extra"].value("f16/bf16 matmul", "").rfind("tensor cores", 0) == 0;
        const bool matrix = half && backend == "cuda" && (path == "vendor" || tensor_cores);
        const std::string want = dtype == "f64" ? "fma f64" : matrix ? "matrix " + dtype : "fma f32";
        REQUIRE(row.contains("ceiling"));
        CHECK(row["ceiling"].get<std::string>() == want);
        matrix_rows += want.rfind("matrix", 0) == 0;
        const double ceiling = dev[field.at(want)].is_number() ? dev[field.at(want)].get<double>() : 0;  // null: none
        if (ceiling > 0) {
            REQUIRE(row.contains("fraction_of_ceiling"));
            CHECK(row["fraction_of_ceiling"].get<double>() == doctest::Approx(row["gflops"].get<double>() / ceiling));
        } else {
            CHECK_FALSE(row.contains("fraction_of_ceiling"));  // an absent ceiling, not another one
        }
    }
    CHECK(matrix_rows >= 4);  // matmul and dense, f16 and bf16, on cuda's vendor path
    // Where the device has no matrix engine (an sm_75 one), its ceiling is
    // absent: "–" in the table, and its native f16 kernel is rated as SIMT.
    REQUIRE(setenv("ACCEL_PLUGIN_PATH", ACCEL_EMULATED_PLUGINS, 1) == 0);
    REQUIRE(setenv("ACCEL_CUDA_EMULATION_FAULTS", "compute_capability=75", 1) == 0);
    const Outcome old = bench("--quick --backends cuda --ops matmul --dtypes f16 --json c75.json");
    unsetenv("ACCEL_CUDA_EMULATION_FAULTS");
    unsetenv("ACCEL_PLUGIN_PATH");
    REQUIRE_MESSAGE(old.code == 0, old.output);
    const auto cuda_rows = lines_starting(old.output, "cuda:0 ");
    CHECK(std::any_of(cuda_rows.begin(), cuda_rows.end(), [](const std::string& l) {
        return l.find(" f16 ") != std::string::npos && l.find(" vendor ") != std::string::npos &&
               l.find("–") != std::string::npos;
    }));
    for (const auto& row : load("c75.json")["rows"])
        CHECK(row["ceiling"].get<std::string>() == (row["path"] == "vendor" ? "matrix f16" : "fma f32"));
#else
    MESSAGE("skipped: no CUDA emulation in this build");
    std::exit(77);
#endif
}

TEST_CASE("committed_results") {
    // No row of a committed result file passes its ceiling (docs/results):
    // each is rated against the unit its kernel computes with; only rows
    // marked cache-resident may pass the DRAM bandwidth.
    const std::string dir = std::string(ACCEL_SOURCE_DIR) + "/docs/results";
    DIR* d = opendir(dir.c_str());
    REQUIRE(d != nullptr);
    int files = 0, rows = 0;
    while (const dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() < 5 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
        const json j = load(dir + "/" + name);
        if (!j.is_object() || !j.contains("rows") || !j.contains("devices")) continue;
        ++files;
        for (const auto& row : j["rows"]) {
            if (!row.contains("fraction_of_ceiling") || row.value("cache_resident", false)) continue;
            ++rows;
            INFO(name << ": " << row.dump());
            CHECK(row["fraction_of_ceiling"].get<double>() <= 1.0);
        }
    }
    closedir(d);
    CHECK(files >= 3);
    CHECK(rows > 100);
}

TEST_CASE("json_figures") {
    // No negative figure anywhere in a run's JSON, and none that was not
    // measured written as 0: such figures are null (shown "–").
    const json j = load(kResults);
    std::vector<std::string> negative;
    std::function<void(const json&, const std::string&)> walk = [&](const json& v, const std::string& at) {
        if (v.is_number() && v.get<double>() < 0) negative.push_back(at + " = " + v.dump());
        if (v.is_object())
            for (auto it = v.begin(); it != v.end(); ++it) walk(it.value(), at + "." + it.key());
        if (v.is_array())
            for (std::size_t i = 0; i < v.size(); ++i) walk(v[i], at + "[" + std::to_string(i) + "]");
    };
    walk(j, "");
    CHECK_MESSAGE(negative.empty(), (negative.empty() ? std::string() : negative.front()));
    for (const auto& d : j["devices"]) {
        INFO(d.dump());
        for (const char* k : {"copy_gbps", "add_probe_gbps", "fma_probe_gflops", "fma_probe_gflops_f64",
                              "bandwidth_ceiling_gbps", "peak_fma_gflops", "peak_fma_gflops_f64", "peak_fma_gflops_f16",
                              "peak_matrix_gflops_f16", "peak_matrix_gflops_bf16", "bare_launch_us", "add1_launch_us",
                              "last_level_cache_bytes", "global_memory_bytes"}) {
            CAPTURE(k);
            REQUIRE(d.contains(k));
            CHECK((d[k].is_null() || d[k].get<double>() > 0));
        }
        // The quick host run measures these; f64 and half ceilings it does not (no such rows).
        for (const char* k : {"copy_gbps", "add_probe_gbps", "peak_fma_gflops", "bare_launch_us", "add1_launch_us"})
            CHECK(d[k].is_number());
        for (const char* k : {"peak_fma_gflops_f64", "peak_fma_gflops_f16", "peak_matrix_gflops_f16"})
            CHECK(d[k].is_null());
        // The overhead over a bare launch: never negative; 0 with a note where add(1) was the cheaper.
        const double bare = d["bare_launch_us"], add1 = d["add1_launch_us"];
        CHECK(d["launch_overhead_us"].get<double>() == doctest::Approx(std::max(0.0, add1 - bare)));
        CHECK(d.contains("launch_overhead_note") == (add1 < bare));
    }
    for (const auto& row : j["rows"]) {
        INFO(row.dump());
        for (const char* k : {"median", "min", "max", "cold_median"}) CHECK(row["kernel_ms"][k].get<double>() > 0);
        for (const auto& x : row["kernel_ms"]["samples"]) CHECK(x.get<double>() > 0);
        CHECK(row["end_to_end_ms"].get<double>() > 0);
        for (const char* k : {"gbps", "gflops"})
            if (row.contains(k)) CHECK(row[k].get<double>() > 0);
    }
}

TEST_CASE("fixed_runs") {
    // --runs N: exactly N samples a row, whatever their spread, said so.
    const Outcome r = bench("--quick --backends host --ops add,matmul --add-sizes 1000 --matmul-sizes 16 --runs 7 "
                            "--json runs7.json");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const json j = load("runs7.json");
    REQUIRE(j["rows"].size() >= 2);
    for (const auto& row : j["rows"]) {
        INFO(row.dump());
        CHECK(row["runs"] == 7);
        CHECK(row["kernel_ms"]["samples"].size() == 7);
        CHECK(row["stopped_by"] == "runs");
    }
    CHECK(j["settings"]["runs"] == 7);
    CHECK(bench("--quick --backends host --runs 0").code == 2);  // a count of at least 1
}

TEST_CASE("stable_selectors") {
    // An OpenCL device is named by its platform in every output (table, JSON,
    // compare), never by an index across platforms (opencl:N), which changes
    // with the runtimes installed.
    const Outcome r = bench("--quick --backends host,opencl:pocl --ops add --add-sizes 1000 --paths native "
                            "--json sel.json");
    if (r.code == 2 && r.output.find("pocl") != std::string::npos) {
        MESSAGE("PoCL unavailable: " << r.output);
        std::exit(77);
    }
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const std::regex index_only("opencl:[0-9]");
    CHECK_MESSAGE(!std::regex_search(r.output, index_only), r.output);
    const json j = load("sel.json");
    CHECK_MESSAGE(!std::regex_search(j.dump(), index_only), j.dump(2));
    std::set<std::string> selectors;
    for (const auto& d : j["devices"]) selectors.insert(d["selector"].get<std::string>());
    CHECK(selectors == std::set<std::string>{"host:0", "opencl:pocl:0"});
    for (const auto& row : j["rows"]) CHECK(selectors.count(row["selector"].get<std::string>()) == 1);
    const Outcome c = bench("compare sel.json sel.json");
    CHECK_MESSAGE(c.code == 0, c.output);
    CHECK_MESSAGE(c.output.find("opencl:pocl:0") != std::string::npos, c.output);
    CHECK_MESSAGE(!std::regex_search(c.output, index_only), c.output);
}
