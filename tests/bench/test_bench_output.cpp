// accel-bench's output for people and for logs: plots of several files, the
// compact table and its legend, the progress lines on a non-terminal stderr,
// dense rows in several activations, and the tools' width (100 columns by
// default, wider with COLUMNS, whole with --wide). Run from the test's working
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

// Columns of the widest line of `text` (UTF-8 code points), and that line.
// A line that is one word after its indent (a long path on its own line) is
// passed over: no wrap can shorten it, and breaking it would spoil a copy.
std::pair<std::size_t, std::string> widest_line(const std::string& text) {
    std::pair<std::size_t, std::string> widest{0, ""};
    std::stringstream s(text);
    std::string line;
    while (std::getline(s, line)) {
        const auto first = line.find_first_not_of(' ');
        if (first != std::string::npos && line.find(' ', first) == std::string::npos) continue;
        const auto n = std::size_t(
            std::count_if(line.begin(), line.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
        if (n > widest.first) widest = {n, line};
    }
    return widest;
}

// The header line of the table whose rows start with `row_prefix`: the line
// before its rule of dashes.
std::string table_header(const std::string& text, const std::string& row_prefix) {
    std::stringstream s(text);
    std::string previous, before, line;
    while (std::getline(s, line)) {
        if (line.rfind(row_prefix, 0) == 0 && previous.rfind("---", 0) == 0) return before;
        before = previous;
        previous = line;
    }
    return "";
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
    // Host-device transfers: both directions at the quick sizes, from
    // pageable memory everywhere and page-locked memory where the device has
    // it (the emulated CUDA device, not the host), each checked and rated.
    for (const auto& [selector, dev] : device) {
        CAPTURE(selector);
        const bool locked = dev["backend"] == "cuda";
        REQUIRE(dev["transfers"].is_array());
        CHECK(dev["transfers"].size() == (locked ? 8u : 4u));
        CHECK(dev.contains("page_locked_unavailable") == !locked);
        std::set<std::string> kinds;
        for (const auto& t : dev["transfers"]) {
            INFO(t.dump());
            CHECK(t["ok"].get<bool>());
            CHECK(t["gbps"].get<double>() > 0);
            CHECK(t["samples_ms"].size() >= 3);
            CHECK((t["bytes"] == 65536 || t["bytes"] == 1048576));
            kinds.insert(t["direction"].get<std::string>() + " " + t["memory"].get<std::string>());
        }
        CHECK(kinds.size() == (locked ? 4u : 2u));
        CHECK(kinds.count("host_to_device pageable") == 1);
        CHECK(kinds.count("device_to_host pageable") == 1);
        CHECK(kinds.count("host_to_device page_locked") == (locked ? 1u : 0u));
    }
    CHECK(r.output.find("host-device transfers") != std::string::npos);
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

namespace {

// The colour (lc rgb "#rrggbb") of the first plot-command line of `script` that holds `text`; "" when none.
std::string colour_of(const std::string& script, const std::string& text) {
    std::stringstream s(script);
    std::string line;
    while (std::getline(s, line)) {
        if (line.find(text) == std::string::npos) continue;
        const std::size_t at = line.find("lc rgb \"");
        if (at != std::string::npos) return line.substr(at + 8, 7);
    }
    return "";
}

// The value after `key` (" dt ", " lw ") on the first line of `script` that holds `text`; -1 when none.
double style_of(const std::string& script, const std::string& text, const std::string& key) {
    std::stringstream s(script);
    std::string line;
    while (std::getline(s, line)) {
        if (line.find(text) == std::string::npos) continue;
        const std::size_t at = line.find(key);
        if (at != std::string::npos) return std::atof(line.c_str() + at + key.size());
    }
    return -1;
}

// The rows of inline data block `$name` of `script`: x, y, y_low, y_high.
std::vector<std::vector<double>> data_of(const std::string& script, const std::string& name) {
    std::vector<std::vector<double>> rows;
    const std::size_t at = script.find("$" + name + " << EOD\n");
    if (at == std::string::npos) return rows;
    std::stringstream s(script.substr(script.find('\n', at) + 1));
    std::string line;
    while (std::getline(s, line) && line != "EOD") {
        std::stringstream v(line);
        std::vector<double> row;
        for (double x; v >> x;) row.push_back(x);
        rows.push_back(row);
    }
    return rows;
}

// How many lines of `script` hold every one of `parts`.
int lines_with(const std::string& script, const std::vector<std::string>& parts) {
    std::stringstream s(script);
    int n = 0;
    for (std::string line; std::getline(s, line);)
        n += std::all_of(parts.begin(), parts.end(), [&](const std::string& p) { return line.find(p) != std::string::npos; });
    return n;
}

// Renders `args` to a PNG and returns its gnuplot script (plot --script).
std::string plot_script(const std::string& args, const std::string& name) {
    const Outcome r = bench("plot " + args + " -o " + name + ".png --script " + name + ".gp");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    CHECK(exists(name + ".png"));
    return read_text(name + ".gp");
}

}  // namespace

TEST_CASE("plot_styles") {
    // Two files: host:0's run, and the same rows (2× slower) as another
    // device with the same ceilings. Colour follows the device, the same in
    // every plot; line style the file; error bars the rows' min..max; the
    // roofline labels both devices' ceilings apart and rings and explains
    // the cache-resident rows.
    if (!on_path("gnuplot")) {
        MESSAGE("gnuplot is not installed (Debian: gnuplot-nox); skipped");
        std::exit(77);
    }
    json a = load(kResults);
    for (auto& row : a["rows"])
        if (row["op"] == "add") row["cache_resident"] = true;
    std::ofstream("styles-a.json") << a.dump(2);
    json b = a;
    for (auto* list : {&b["rows"], &b["devices"]})
        for (auto& item : *list) item["selector"] = item["stable_selector"] = "opencl:pocl:0";
    for (auto& row : b["rows"])
        for (const char* k : {"min", "median", "max"}) row["kernel_ms"][k] = row["kernel_ms"][k].get<double>() * 2;
    std::ofstream("styles-b.json") << b.dump(2);

    const std::string two = plot_script("styles-a.json styles-b.json --op add", "styles-time");
    // The key: one entry per device (its colour), marker and file (its dashes).
    const std::string host = colour_of(two, "title \"host:0"), other = colour_of(two, "title \"opencl:pocl:0");
    CHECK(host.size() == 7);
    CHECK(other.size() == 7);
    CHECK(host != other);
    CHECK(style_of(two, "title \"file styles-a.json\"", " dt ") == 1);
    CHECK(style_of(two, "title \"file styles-b.json\"", " dt ") == 2);
    CHECK(lines_with(two, {"title \"native f32\"", " pt 7 "}) == 1);
    // Each line: its device's colour, its file's dashes, the native f32 marker, error bars.
    CHECK(lines_with(two, {"yerrorlines", "lc rgb \"" + host + "\" pt 7 dt 1 notitle"}) == 1);
    CHECK(lines_with(two, {"yerrorlines", "lc rgb \"" + other + "\" pt 7 dt 2 notitle"}) == 1);
    // The device keeps its colour alone, and with the files the other way round.
    CHECK(colour_of(plot_script("styles-a.json --op add", "styles-one"), "title \"host:0") == host);
    CHECK(colour_of(plot_script("styles-b.json styles-a.json --op add", "styles-swapped"), "title \"host:0") == host);
    CHECK(colour_of(plot_script("styles-b.json --op add", "styles-other"), "title \"opencl:pocl:0") == other);
    // Error bars: each point is its row's median, from its min to its max.
    std::map<double, std::vector<double>> want;  // size -> median, min, max of host:0's native f32 add rows
    for (const auto& row : a["rows"])
        if (row["op"] == "add" && row["path"] == "native" && row.value("dtype", "f32") == "f32" &&
            row.value("default_geometry", true))
            want[row["size"].get<double>()] = {row["kernel_ms"]["median"], row["kernel_ms"]["min"],
                                               row["kernel_ms"]["max"]};
    REQUIRE(!want.empty());
    const auto points = data_of(two, "series0");
    REQUIRE(points.size() == want.size());
    for (const auto& p : points) {
        REQUIRE(p.size() == 4);
        REQUIRE(want.count(p[0]));
        for (int k = 0; k < 3; ++k) CHECK(p[k + 1] == doctest::Approx(want[p[0]][k]).epsilon(1e-6));
    }
    // The rate's spread is the rate of the slowest and of the fastest run.
    const std::string rate = plot_script("styles-a.json styles-b.json --op add --metric rate", "styles-rate");
    CHECK(rate.find("with yerrorlines") != std::string::npos);
    for (const auto& p : data_of(rate, "series0")) {
        const auto& t = want[p[0]];
        CHECK(p[2] == doctest::Approx(p[1] * t[0] / t[2]).epsilon(1e-6));
        CHECK(p[3] == doctest::Approx(p[1] * t[0] / t[1]).epsilon(1e-6));
    }

    const std::string roof = plot_script("styles-a.json styles-b.json --roofline", "styles-roofline");
    CHECK(roof.find("with yerrorbars") != std::string::npos);
    CHECK(roof.find("$cache_resident using 1:2 with points") != std::string::npos);
    CHECK(roof.find("title \"ringed: cache-resident (in the last-level cache)\"") != std::string::npos);
    std::size_t cached = 0;  // rows on the roofline marked cache-resident, in both files
    for (const auto& row : a["rows"])
        cached += row.value("cache_resident", false) && row.value("flops", 0.0) > 0 && row.value("bytes", 0.0) > 0 ? 2 : 0;
    CHECK(cached > 0);
    CHECK(data_of(roof, "cache_resident").size() == cached);
    // Both ceilings labelled, in their device's colour, the second stacked over the first.
    std::vector<std::string> labels = lines_starting(roof, "set label ");
    REQUIRE(labels.size() == 2);
    CHECK(labels[0].find("styles-a.json: host:0 ceilings") != std::string::npos);
    CHECK(labels[0].find(host) != std::string::npos);
    CHECK(labels[1].find("styles-b.json: opencl:pocl:0 ceilings") != std::string::npos);
    CHECK(labels[1].find(other) != std::string::npos);
    CHECK(labels[0].find("char 0.7 ") != std::string::npos);
    CHECK(labels[1].find("char 1.8 ") != std::string::npos);
    // The line drawn under the equal one is wider, so both show.
    CHECK(colour_of(roof, "roof0(x) with lines") == host);
    CHECK(colour_of(roof, "roof1(x) with lines") == other);
    CHECK(style_of(roof, "roof0(x) with lines", " lw ") > style_of(roof, "roof1(x) with lines", " lw "));
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
        // The front-end's own time per op: add(1) less the host's add kernel called directly.
        REQUIRE(d["kernel1_launch_us"].is_number());
        const double direct = d["kernel1_launch_us"];
        CHECK(direct > 0);
        CHECK(d["front_end_us"].get<double>() == doctest::Approx(std::max(0.0, add1 - direct)));
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

TEST_CASE("default_width") {
    // With COLUMNS unset and stdout not a terminal, what each tool prints for
    // people keeps within 100 columns: optional columns are left out (and
    // named), prose is wrapped. A wider COLUMNS keeps more; --wide keeps all.
    const std::string unset = "env -u COLUMNS ";
    Outcome r = bench_env(unset, "--quick --backends host --json width.json --no-progress");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    auto widest = widest_line(r.output);
    CHECK_MESSAGE(widest.first <= 100, widest.second);
    std::string header = table_header(r.output, "host:0  copy");  // the default run's first op
    CHECK_MESSAGE(header.find("warm ms") != std::string::npos, header);
    CHECK_MESSAGE(header.find("limit") == std::string::npos, header);
    CHECK_MESSAGE(r.output.find("(left out to fit 100 columns: limit, block") != std::string::npos, r.output);

    r = bench_env("COLUMNS=200 ", "--quick --backends host --ops add --add-sizes 1000 --no-progress");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    widest = widest_line(r.output);
    CHECK_MESSAGE(widest.first <= 200, widest.second);
    header = table_header(r.output, "host:0  add");
    for (const char* column : {"block", "min", "max", "cold ms", "e2e ms", "nmse", "limit"})
        CHECK_MESSAGE(header.find(column) != std::string::npos, column << " missing at 200 columns: " << header);

    r = bench_env(unset, "--quick --backends host --ops add --add-sizes 1000 --no-progress --wide");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    CHECK(widest_line(r.output).first > 100);  // the legend's prose, whole
    CHECK(r.output.find("(left out") == std::string::npos);

    r = bench_env(unset, "compare width.json width.json");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    widest = widest_line(r.output);
    CHECK_MESSAGE(widest.first <= 100, widest.second);
    CHECK_MESSAGE(table_header(r.output, "copy").find("new/base") != std::string::npos, r.output);

    r = bench_env(unset, "mlp --quick --backends host");
    REQUIRE_MESSAGE(r.code == 0, r.output);
    widest = widest_line(r.output);
    CHECK_MESSAGE(widest.first <= 100, widest.second);

    // accel-info beside accel-bench: its long facts wrapped, --wide whole.
    const std::string info = "'" + kBench.substr(0, kBench.rfind('/') + 1) + "accel-info'";
    r = run_env(unset, info);
    REQUIRE_MESSAGE((r.code == 0 || r.code == 1), r.output);  // 1: a listed device failed to open (its line says why)
    REQUIRE_MESSAGE(r.output.find("\nselectors: ") != std::string::npos, r.output);
    widest = widest_line(r.output);
    CHECK_MESSAGE(widest.first <= 100, widest.second);
    r = run_env(unset, info + " --wide");
    CHECK_MESSAGE(widest_line(r.output).first > 100, r.output);  // the plugin folders and kernel texts, whole
}
