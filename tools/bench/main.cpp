// accel-bench: times accel's ops on every backend, against each device's own
// ceilings (copy bandwidth, peak FMA), checks results against the float64
// oracle, and compares or plots saved runs.
#include "cli.hpp"
#include "commands.hpp"
#include "fleet.hpp"
#include "report.hpp"
#include "runner.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

namespace bench {
namespace {

const char* kUsage = R"(usage:
  accel-bench [run] [options]           time ops on backends
  accel-bench compare BASE.json NEW.json [--threshold 0.10] [--by auto|op|backend|selector|device|rank]
  accel-bench fleet RESULTS.json        fleet table of a run (ratios to the best and median, outliers)
  accel-bench plot RESULTS.json... -o out.png [--op add] [--metric time|rate] [--roofline]

run options:
  --backends all|LIST    comma list of selectors (host, opencl:0, cuda:1, ...); default: all
                         available backends, or just ACCEL_BACKEND when it is set
  --ops LIST             add, sigmoid, relu, matmul, dense, column_sum, adam_step
                         (default add,sigmoid,matmul,dense)
  --add-sizes LIST       elements of add/sigmoid/relu/adam_step (default 1e3,1e4,1e5,1e6,1e7,5e7)
  --matmul-sizes LIST    N of N×N×N matmul (default 64,128,256,512,1024,2048)
  --matmul-shapes LIST   MxNxK matmuls besides (e.g. 4096x10x30,64x128x784: the skinny shapes of an MLP)
  --dense-shapes LIST    BATCHxINxOUT of y = sigmoid(x·Wᵀ + b) (default 64x784x128,1024x1024x1024)
  --column-sum-shapes LIST  ROWSxCOLS (default 4096x1024)
  --paths LIST           native,vendor (default both where the device has them)
  --dtypes LIST          f32,f64,f16,bf16 (default f32); each problem runs in each dtype the device
                         supports on the path (the others are listed as notes)
  --block-sizes LIST     block sizes swept for elementwise ops (default: the device's choice)
  --warmup N             untimed runs first (default 1)
  --repeats N            timed rounds with host<->device copies (default 5; a row stops
                         at 3 rounds once they took 3 s)
  --min-time-ms T        add kernel-only runs until T ms of kernel time (default 20)
  --quick                tiny sizes and short probes, for CI
  --format table|csv|json  (default table)
  -o FILE                write there instead of stdout
  --json FILE            also write the run as JSON to FILE (e.g. a table on screen and
                         the record for `compare` from one run)
under mpirun/srun (built with MPI): every rank runs one device: --backends is one selector or a
  comma list dealt to ranks by rank (rank r takes item r mod count); BACKEND:local gives each rank
  its own device (default: $ACCEL_BACKEND, else auto:local). Rank 0 writes one JSON (rows carry
  rank, host, uuid, pci_bus_id) and prints the fleet table.
exit status: 0 all rows passed; 1 a row exceeded its NMSE threshold or failed (compare: a row
slower than --threshold); 2 usage error, a named backend is unavailable, or (compare) no row paired.
)";

std::vector<std::size_t> counts(const std::string& text, const std::string& what) {
    std::vector<std::size_t> out;
    for (const auto& item : split_list(text)) out.push_back(parse_count(item, what));
    if (out.empty()) throw UsageError(what + ": empty list");
    return out;
}

std::vector<std::vector<std::size_t>> shapes(const std::string& text, std::size_t parts, const std::string& what) {
    std::vector<std::vector<std::size_t>> out;
    for (const auto& item : split_list(text)) out.push_back(parse_shape(item, parts, what));
    if (out.empty()) throw UsageError(what + ": empty list");
    return out;
}

// Every device of every available backend.
std::vector<std::string> all_selectors() {
    std::vector<std::string> out;
    for (const auto& st : accel::backend_statuses())
        if (st.availability.available)
            for (int i = 0; i < st.availability.device_count; ++i) out.push_back(st.name + ":" + std::to_string(i));
    return out;
}

Settings default_settings(bool quick) {
    Settings s;
    s.quick = quick;
    s.ops = {accel::Op::add, accel::Op::sigmoid, accel::Op::matmul, accel::Op::dense};
    if (quick) {
        s.elementwise_sizes = {1000, 10000, 100000};
        s.matmul_sizes = {32, 64};
        s.dense_shapes = {{16, 64, 32}};
        s.column_sum_shapes = {{256, 128}};
        s.repeats = 3;
        s.min_time_ms = 2;
        s.copy_bytes = std::size_t{8} << 20;
        s.fma_target_ms = 2;
    } else {
        s.elementwise_sizes = {1000, 10000, 100000, 1000000, 10000000, 50000000};
        s.matmul_sizes = {64, 128, 256, 512, 1024, 2048};
        s.dense_shapes = {{64, 784, 128}, {1024, 1024, 1024}};
        s.column_sum_shapes = {{4096, 1024}};
    }
    return s;
}

}  // namespace

int run_command(const std::vector<std::string>& argv) {
    const Args args = parse_args(argv, {"--quick", "--help", "-h"},
                                 {"--backends", "--ops", "--add-sizes", "--matmul-sizes", "--matmul-shapes", "--dense-shapes",
                                  "--column-sum-shapes", "--paths", "--dtypes", "--block-sizes", "--warmup", "--repeats",
                                  "--min-time-ms", "--format", "-o", "--json"});
    if (!args.positional.empty()) throw UsageError("unexpected argument '" + args.positional[0] + "'");
    bool quick = false;
    for (const auto& o : args.options) {
        if (o.first == "--help" || o.first == "-h") {
            std::cout << kUsage;
            return 0;
        }
        quick |= o.first == "--quick";
    }
    Settings s = default_settings(quick);
    std::string format = "table", output, json_output, backends;
    for (const auto& [name, value] : args.options) {
        if (name == "--backends") backends = value;
        else if (name == "--ops") {
            s.ops.clear();
            for (const auto& op : split_list(value)) s.ops.push_back(parse_op(op));
        } else if (name == "--add-sizes") s.elementwise_sizes = counts(value, name);
        else if (name == "--matmul-sizes") s.matmul_sizes = counts(value, name);
        else if (name == "--matmul-shapes") s.matmul_shapes = shapes(value, 3, name);
        else if (name == "--dense-shapes") s.dense_shapes = shapes(value, 3, name);
        else if (name == "--column-sum-shapes") s.column_sum_shapes = shapes(value, 2, name);
        else if (name == "--block-sizes") s.block_sizes = counts(value, name);
        else if (name == "--warmup") s.warmup = int(parse_number(value, name));
        else if (name == "--repeats") s.repeats = int(parse_count(value, name));
        else if (name == "--min-time-ms") s.min_time_ms = parse_number(value, name);
        else if (name == "--format") format = value;
        else if (name == "-o") output = value;
        else if (name == "--json") json_output = value;
        else if (name == "--dtypes") {
            s.dtypes.clear();
            for (const auto& t : split_list(value)) {
                try {
                    s.dtypes.push_back(accel::parse_dtype(t));
                } catch (const accel::InvalidArgument& e) {
                    throw UsageError(std::string("--dtypes: ") + e.what());
                }
            }
        } else if (name == "--paths") {
            s.paths.clear();
            for (const auto& p : split_list(value)) {
                if (p == "native") s.paths.push_back(accel::OpPath::native);
                else if (p == "vendor") s.paths.push_back(accel::OpPath::vendor);
                else throw UsageError("--paths: unknown path '" + p + "'; valid paths: native, vendor");
            }
        }
    }
    if (s.ops.empty()) throw UsageError("--ops: empty list");
    if (s.paths.empty()) throw UsageError("--paths: empty list");
    if (s.dtypes.empty()) throw UsageError("--dtypes: empty list");
    if (format != "table" && format != "csv" && format != "json")
        throw UsageError("--format: unknown format '" + format + "'; valid formats: table, csv, json");

    if (FleetScope::active()) return fleet_run(s, backends, format, output, json_output);
    const char* env = std::getenv("ACCEL_BACKEND");
    if (backends.empty() && env && *env) s.selectors = {env};
    else if (backends.empty() || backends == "all") s.selectors = all_selectors();
    else s.selectors = split_list(backends);
    for (const auto& sel : s.selectors) accel::parse_selector(sel);  // unknown names fail before any work
    s.progress = isatty(STDERR_FILENO);

    // Output files are opened before the run, so a bad path fails at once.
    auto open_output = [](std::ofstream& f, const std::string& path) {
        if (path.empty()) return;
        f.open(path);
        if (!f) throw std::runtime_error("cannot open '" + path + "' for writing");
    };
    std::ofstream file, json_file;
    open_output(file, output);
    open_output(json_file, json_output);

    const Results r = run(s);
    const Machine m = this_machine();
    std::ostream& out = output.empty() ? std::cout : file;
    if (format == "json") out << to_json(s, r, m).dump(2) << "\n";
    else if (format == "csv") write_csv(out, r);
    else write_table(out, r, m);
    if (!json_output.empty()) {
        json_file << to_json(s, r, m).dump(2) << "\n";
        std::cerr << "wrote " << r.rows.size() << " rows to " << json_output << "\n";
    }
    if (!output.empty()) std::cerr << "wrote " << r.rows.size() << " rows to " << output << "\n";

    int failed = 0;
    for (const auto& row : r.rows) {
        if (row.passed()) continue;
        ++failed;
        std::cerr << "FAIL: " << accel::op_name(row.problem.op) << " " << row.problem.shape() << " " << row.path
                  << " on " << row.selector << ": "
                  << (row.error.empty() ? "nmse " + bench::format("%.3e", row.nmse) + " > " +
                                              bench::format("%.0e", row.threshold)
                                        : row.error)
                  << "\n";
    }
    return failed ? 1 : 0;
}

}  // namespace bench

int main(int argc, char** argv) {
    bench::FleetScope fleet(&argc, &argv);  // MPI, when started by mpirun/srun
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string command = "run";
    if (!args.empty() && (args[0] == "run" || args[0] == "compare" || args[0] == "plot" || args[0] == "fleet")) {
        command = args[0];
        args.erase(args.begin());
    }
    try {
        if (command == "compare") return bench::compare_command(args);
        if (command == "plot") return bench::plot_command(args);
        if (command == "fleet") return bench::fleet_command(args);
        return bench::run_command(args);
    } catch (const bench::UsageError& e) {
        std::cerr << "accel-bench " << command << ": " << e.what() << "\n\n" << bench::kUsage;
    } catch (const accel::BackendUnavailable& e) {
        std::cerr << "accel-bench: " << e.what() << "\n";
    } catch (const std::exception& e) {
        std::cerr << "accel-bench " << command << ": " << e.what() << "\n";
    }
    return 2;
}
