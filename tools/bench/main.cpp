// accel-bench: times accel's ops on every backend, against each device's own
// ceilings (copy bandwidth, peak FMA), checks results against the float64
// oracle, and compares or plots saved runs.
#include "cli.hpp"
#include "commands.hpp"
#include "fleet.hpp"
#include "report.hpp"
#include "runner.hpp"

#include <tool_cli.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>

namespace bench {
namespace {

const char* kDescription =
    "accel-bench: times accel's ops on every backend against each device's ceilings (copy bandwidth, peak "
    "FMA),\nchecks results against the float64 oracle, times training of the MLP example, and compares, plots or\n"
    "tabulates saved runs.\n"
    "  accel-bench [run] [OPTIONS]            time ops on backends (the options below)\n"
    "  accel-bench --case-file FILE           time a program's own calls (a trace or case file) on backends\n"
    "  accel-bench compare BASE.json NEW.json kernel-time ratios of two runs\n"
    "  accel-bench fleet RESULTS.json         fleet table of a run (ratios to the best and median, outliers)\n"
    "  accel-bench mlp [OPTIONS]              ms per epoch training the MLP example on each device, losses compared\n"
    "  accel-bench plot RESULTS.json... -o out.png\n"
    "                                         time or rate against size, or the roofline\n"
    "accel-bench COMMAND --help shows that command's options.";

const char* kFooter =
    "under mpirun/srun (built with MPI): every rank runs one device: --backends is one selector or a\n"
    "  comma list dealt to ranks by rank (rank r takes item r mod count); BACKEND:local gives each rank\n"
    "  its own device (default: $ACCEL_BACKEND, else auto:local). Rank 0 writes one JSON (rows carry\n"
    "  rank, host, uuid, pci_bus_id) and prints the fleet table.\n"
    "output files (-o, --json, plot's -o) are written whole or not at all: a run that fails leaves none\n"
    "  and keeps an existing file as it was.\n"
    "exit status: 0 all rows passed; 1 a row exceeded its NMSE threshold or failed (compare: a row\n"
    "  significantly slower beyond --min-effect; fleet: an outlier); 2 usage error, a named backend is unavailable, an\n"
    "  unreadable file, or (compare) no row paired.";

Settings default_settings(bool quick) {
    Settings s;
    s.quick = quick;
    // BabelStream's five kernels in its order, then the rest.
    s.ops = {accel::Op::copy, accel::Op::scale,   accel::Op::add,    accel::Op::triad,
             accel::Op::dot,  accel::Op::sigmoid, accel::Op::matmul, accel::Op::dense};
    if (quick) {
        s.elementwise_sizes = {1000, 10000, 100000};
        s.matmul_sizes = {32, 64};
        s.dense_shapes = {{16, 64, 32}};
        s.column_sum_shapes = {{256, 128}};
        s.repeats = 3;
        s.min_time_ms = 2;
        s.max_row_ms = 25;
        s.copy_bytes = std::size_t{8} << 20;
        s.transfer_sizes = {std::size_t{1} << 16, std::size_t{1} << 20};
        s.fma_target_ms = 2;
    } else {
        s.elementwise_sizes = {1000, 10000, 100000, 1000000, 10000000, 50000000};
        s.matmul_sizes = {64, 128, 256, 512, 1024, 2048};
        s.dense_shapes = {{64, 784, 128}, {1024, 1024, 1024}};
        s.column_sum_shapes = {{4096, 1024}};
    }
    return s;
}

// The items of a shape list option, e.g. {"64x784x128"} -> {{64, 784, 128}}.
std::vector<std::vector<std::size_t>> shapes(const std::vector<std::string>& items, std::size_t parts) {
    std::vector<std::vector<std::size_t>> out;
    for (const auto& item : items) out.push_back(parse_shape(item, parts));
    return out;
}

}  // namespace

void add_run_options(CLI::App& app, RunArgs& a) {
    a.given = [&app](const char* name) { return app.count(name) > 0; };
    // A comma-separated list option: one value per occurrence, split at commas.
    auto list = [&](const char* name, auto& values, const char* help) {
        CLI::Option* o = app.add_option(name, values, help)->delimiter(',')->allow_extra_args(false);
        a.options.push_back(o);
        return o;
    };
    auto single = [&](CLI::Option* o) {
        a.options.push_back(o);
        return o;
    };
    single(app.add_option("--backends", a.backends,
                          "all, or a comma list of selectors (host, opencl:0, cuda:1, ...); default: all available "
                          "backends, or just ACCEL_BACKEND when it is set")
               ->type_name("all|LIST"));
    list("--ops", a.ops,
         "ops of the op table: its elementwise ops (add, sigmoid, relu, relu_backward, ...; those a backend plugin "
         "defines too), BabelStream's copy, scale, triad and dot, adam_step, matmul, dense, column_sum (default "
         "copy,scale,add,triad,dot,sigmoid,matmul,dense)")
        ->check(tool_cli::throws_if_bad(parse_op, ""))
        ->type_name("LIST");
    list("--add-sizes", a.add_sizes,
         "elements of the elementwise ops, scale, triad, dot and adam_step (default 1e3,1e4,1e5,1e6,1e7,5e7)")
        ->transform(count())
        ->type_name("LIST");
    list("--matmul-sizes", a.matmul_sizes, "N of N×N×N matmul (default 64,128,256,512,1024,2048)")
        ->transform(count())
        ->type_name("LIST");
    list("--matmul-shapes", a.matmul_shapes,
         "MxNxK matmuls besides (e.g. 4096x10x30,64x128x784: the skinny shapes of an MLP)")
        ->check(shape(3))
        ->type_name("LIST");
    list("--dense-shapes", a.dense_shapes,
         "BATCHxINxOUT of y = activation(x·Wᵀ + b) (default 64x784x128,1024x1024x1024)")
        ->check(shape(3))
        ->type_name("LIST");
    list("--activations", a.activations,
         "activations of the dense rows: none, relu, sigmoid, gelu, gelu_tanh (default sigmoid); each dense shape "
         "runs with each, and rows name theirs (dense+relu), so compare pairs only rows of one activation")
        ->check(tool_cli::throws_if_bad(accel::ops::parse_activation, ""))
        ->type_name("LIST");
    list("--column-sum-shapes", a.column_sum_shapes, "ROWSxCOLS (default 4096x1024)")->check(shape(2))->type_name("LIST");
    list("--paths", a.paths, "native,vendor (default both where the device has them)")
        ->check(tool_cli::one_of("path", {"native", "vendor"}))
        ->type_name("LIST");
    list("--dtypes", a.dtypes,
         "f32,f64,f16,bf16 (default f32); each problem runs in each dtype the device supports on the path "
         "(the others are listed as notes)")
        ->check(tool_cli::throws_if_bad(accel::parse_dtype, ""))
        ->type_name("LIST");
    list("--block-sizes", a.block_sizes, "block sizes swept for elementwise ops (default: the device's choice)")
        ->transform(count())
        ->type_name("LIST");
    single(app.add_option("--warmup", a.warmup, "untimed runs first (default 1)")->check(CLI::Range(0, 1000000)));
    single(app.add_option("--repeats", a.repeats,
                          "timed rounds with host<->device copies (default 5; a row stops at 3 rounds once they "
                          "took 3 s)")
               ->check(CLI::Range(1, 1000000)));
    single(app.add_option("--min-time-ms", a.min_time_ms,
                          "a row's warm samples hold at least this many ms of kernel time, each sample the median "
                          "of launches filling a tenth of it (default 20; --quick 2)")
               ->check(CLI::Range(0.0, 1e7)));
    single(app.add_option("--runs", a.runs,
                          "warm samples per row, fixed; default: at least 10, until the 95 % confidence interval "
                          "of the row's median is within --target-ci or its --max-time-ms ends")
               ->check(CLI::Range(1, kMaxSamples))
               ->type_name("N"));
    single(app.add_option("--target-ci", a.target_ci,
                          "half-width of the 95 % confidence interval of a row's median at which it stops, "
                          "relative to the median (default 0.03: within ±3 %)")
               ->check(CLI::Range(1e-4, 1.0)));
    single(app.add_option("--max-time-ms", a.max_row_ms,
                          "host ms a row may spend taking warm samples before it stops short of --target-ci "
                          "(default 120; --quick 25); it takes 4 samples at least")
               ->check(CLI::Range(0.0, 1e8))
               ->type_name("MS"));
    single(app.add_flag("--quick", a.quick, "tiny sizes and short probes, for CI"));
    single(app.add_flag("--untuned", a.untuned,
                        "matmul and dense native rows of a device that runs a tuning record also run with its "
                        "default parameters, as path 'untuned' (accel-bench tune)"));
    CLI::Option* progress =
        single(app.add_flag("--progress", a.progress_lines,
                            "a line on stderr per device's ceilings and per finished row (op, shape, dtype, path, "
                            "device, median ms, rate, seconds so far and left), also on a terminal; the default "
                            "where stderr is not a terminal (logs, pipes, CI), where a terminal gets one line "
                            "rewritten in place"));
    single(app.add_flag("--no-progress", a.no_progress, "nothing on stderr while the run goes"))->excludes(progress);
    single(app.add_flag("--wide", a.wide,
                        "every column and whole lines, each device's name in every row and its runtime and timer "
                        "in the device table instead of a legend naming each device once (default: within "
                        "$COLUMNS, the terminal's width or 100 columns: block, min, max, cold and e2e ms and nmse "
                        "left out as needed, prose wrapped)"));
    single(app.add_option("--format", a.format, "table, csv or json (default table)")
               ->check(tool_cli::one_of("format", {"table", "csv", "json"}))
               ->type_name("FORMAT"));
    single(app.add_option("-o", a.output, "write there instead of stdout")->type_name("FILE"));
    single(app.add_option("--json", a.json_output,
                          "also write the run as JSON to FILE (e.g. a table on screen and the record for `compare` "
                          "from one run)")
               ->type_name("FILE"));
    single(app.add_option("--rank-timeout", a.rank_timeout,
                          "under MPI: seconds a rank may go without finishing a row before it is judged hung; "
                          "the others' rows are written and the job ends naming it (default: ACCEL_RANK_TIMEOUT, "
                          "else 300)")
               ->check(CLI::Range(1, 86400))
               ->type_name("SECONDS"));
    single(app.add_option("--case-file", a.case_file,
                          "time a program's own calls instead: each distinct call of FILE (a trace written with "
                          "ACCEL_TRACE, or a case file of accel-conformance --write-case-file) on every device, "
                          "side by side, and the program's total weighted by how often it made each")
               ->type_name("FILE"));
    single(app.add_option("--trace", a.trace_output,
                          "write a trace of the run (every op, copy and synchronize; Chrome trace event format, "
                          "opens in ui.perfetto.dev) to FILE; under MPI one file per rank")
               ->type_name("FILE"));
}

// The run's Settings: the defaults (--quick or not) with what the command
// line gave. UsageError for a list option given empty.
Settings settings_of(const RunArgs& a) {
    Settings s = default_settings(a.quick);
    s.untuned = a.untuned;
    // Whether list option `name` was given; UsageError when its list is empty.
    auto given = [&](const char* name, const auto& values) {
        if (!a.given(name)) return false;
        if (values.empty()) throw UsageError(std::string(name) + ": empty list");
        return true;
    };
    if (given("--ops", a.ops)) {
        s.ops.clear();
        for (const auto& op : a.ops) s.ops.push_back(parse_op(op));
    }
    if (given("--add-sizes", a.add_sizes)) s.elementwise_sizes = a.add_sizes;
    if (given("--matmul-sizes", a.matmul_sizes)) s.matmul_sizes = a.matmul_sizes;
    if (given("--matmul-shapes", a.matmul_shapes)) s.matmul_shapes = shapes(a.matmul_shapes, 3);
    if (given("--dense-shapes", a.dense_shapes)) s.dense_shapes = shapes(a.dense_shapes, 3);
    if (given("--activations", a.activations)) {
        s.dense_activations.clear();
        for (const auto& name : a.activations) {
            const accel::Activation act = accel::ops::parse_activation(name);
            if (std::find(s.dense_activations.begin(), s.dense_activations.end(), act) == s.dense_activations.end())
                s.dense_activations.push_back(act);  // a repeated name runs once
        }
    }
    if (given("--column-sum-shapes", a.column_sum_shapes)) s.column_sum_shapes = shapes(a.column_sum_shapes, 2);
    if (given("--block-sizes", a.block_sizes)) s.block_sizes = a.block_sizes;
    if (given("--paths", a.paths)) {
        s.paths.clear();  // each "native" or "vendor" (checked by the option)
        for (const auto& p : a.paths)
            s.paths.push_back(accel::ops::parse_path_choice(p) == accel::ops::PathChoice::native ? accel::OpPath::native
                                                                                                 : accel::OpPath::vendor);
    }
    if (given("--dtypes", a.dtypes)) {
        s.dtypes.clear();
        for (const auto& t : a.dtypes) s.dtypes.push_back(accel::parse_dtype(t));
    }
    if (a.given("--warmup")) s.warmup = a.warmup;
    if (a.given("--repeats")) s.repeats = a.repeats;
    if (a.given("--min-time-ms")) s.min_time_ms = a.min_time_ms;
    if (a.given("--runs")) s.runs = a.runs;
    if (a.given("--target-ci")) s.target_ci = a.target_ci;
    if (a.given("--max-time-ms")) s.max_row_ms = a.max_row_ms;
    return s;
}

// Prints one line per row that failed (its error, or its NMSE against the
// threshold) to stderr; returns how many failed.
int report_failures(const Results& r) {
    int failed = 0;
    for (const auto& row : r.rows) {
        if (row.passed()) continue;
        ++failed;
        std::cerr << "FAIL: " << row.problem.op_text() << " " << row.problem.shape() << " " << row.path
                  << " on " << row.selector << ": "
                  << (row.error.empty() ? "nmse " + bench::format("%.3e", row.nmse) + " > " +
                                              bench::format("%.0e", row.threshold)
                                        : row.error)
                  << "\n";
    }
    for (const auto& d : r.devices)
        for (const auto& t : d.transfers)
            if (!t.ok) {
                ++failed;
                std::cerr << "FAIL: " << (t.to_device ? "host-to-device" : "device-to-host") << " transfer of "
                          << t.bytes << " bytes on " << d.shown_selector()
                          << ": the bytes did not come back as sent\n";
                break;
            }
    return failed;
}

int run_command(const RunArgs& a) {
    if (!a.case_file.empty()) {
        if (FleetScope::active()) throw UsageError("--case-file runs in one process, not under mpirun/srun");
        if (!a.trace_output.empty()) accel::trace::start(a.trace_output);
        return case_file_command(a);
    }
    Settings s = settings_of(a);
    if (!a.trace_output.empty()) accel::trace::start(a.trace_output);  // finished at exit, or below
    if (FleetScope::active())
        return fleet_run(s, a.backends, a.format, a.output, a.json_output,
                         a.given("--rank-timeout") ? a.rank_timeout : 0);
    s.selectors = resolve_backends(a.backends);
    // A terminal gets one line rewritten in place; anything else (a log, a
    // pipe, a parent process) a line per row, as it finishes.
    const bool terminal = isatty(STDERR_FILENO);
    s.progress = !a.no_progress && terminal && !a.progress_lines;
    s.progress_lines = !a.no_progress && (a.progress_lines || !terminal);

    tool_cli::OptionalOutput file(a.output), json_file(a.json_output);  // a bad path fails before the run

    const Results r = run(s);
    accel::trace::stop();
    const Machine m = this_machine();
    std::ostream& out = file.stream();
    if (a.format == "json") out << to_json(s, r, m).dump(2) << "\n";
    else if (a.format == "csv") write_csv(out, r);
    else write_table(out, r, m, a.wide ? 0 : tool_cli::output_width());
    if (json_file) json_file.stream() << to_json(s, r, m).dump(2) << "\n";
    const std::string rows = std::to_string(r.rows.size()) + " rows";
    json_file.commit(rows);
    file.commit(rows);
    return report_failures(r) ? 1 : 0;
}

}  // namespace bench

int main(int argc, char** argv) {
    std::optional<bench::FleetScope> fleet;  // MPI, when started by mpirun/srun
    try {
        fleet.emplace(&argc, &argv);
    } catch (const accel::Error& e) {  // e.g. a bad ACCEL_MPI
        std::cerr << "accel-bench: " << e.what() << "\n";
        return 2;
    }
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args[0] == "run") args.erase(args.begin());  // `run` is the default command

    CLI::App app{bench::kDescription, "accel-bench"};
    bench::RunArgs run_args;
    bench::CompareArgs compare_args;
    bench::PlotArgs plot_args;
    bench::FleetArgs fleet_args;
    bench::MlpArgs mlp_args;
    bench::TuneArgs tune_args;
    bench::add_run_options(app, run_args);
    CLI::App* compare = bench::add_compare(app, compare_args);
    CLI::App* plot = bench::add_plot(app, plot_args);
    CLI::App* fleet_cmd = bench::add_fleet(app, fleet_args);
    CLI::App* mlp = bench::add_mlp(app, mlp_args);
    CLI::App* tune = bench::add_tune(app, tune_args);
    app.footer(bench::kFooter);  // after the subcommands, which would inherit it
    app.require_subcommand(0, 1);
    for (CLI::App* sub : {compare, plot, fleet_cmd, mlp, tune})
        for (CLI::Option* o : run_args.options) sub->excludes(o);  // run's options belong to run alone
    if (const auto rc = tool_cli::parse(app, args)) return *rc;

    const std::string command = tool_cli::command_name(app);
    try {
        if (compare->parsed()) return bench::compare_command(compare_args);
        if (plot->parsed()) return bench::plot_command(plot_args);
        if (fleet_cmd->parsed()) return bench::fleet_command(fleet_args);
        if (mlp->parsed()) return bench::mlp_command(mlp_args);
        if (tune->parsed()) return bench::tune_command(tune_args);
        return bench::run_command(run_args);
    } catch (const bench::UsageError& e) {
        return tool_cli::usage_error(command, e.what());
    } catch (const accel::BackendUnavailable& e) {
        std::cerr << "accel-bench: " << e.what() << "\n";
    } catch (const std::exception& e) {
        std::cerr << command << ": " << e.what() << "\n";
    }
    return 2;
}
