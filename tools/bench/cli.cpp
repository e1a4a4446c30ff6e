#include "cli.hpp"
#include "commands.hpp"

#include <tool_cli.hpp>

#include <accel/accel.hpp>

#include <cmath>
#include <cstdlib>

namespace bench {

std::size_t parse_count(const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(v >= 1) || v > 1e15 || std::floor(v) != v)
        throw UsageError("'" + text + "' is not a positive whole number (e.g. 1000 or 1e3)");
    return std::size_t(v);
}

std::vector<std::size_t> parse_shape(const std::string& text, std::size_t parts) {
    std::vector<std::size_t> dims;
    std::size_t start = 0;
    for (;;) {
        const std::size_t x = text.find('x', start);
        dims.push_back(parse_count(text.substr(start, x == std::string::npos ? std::string::npos : x - start)));
        if (x == std::string::npos) break;
        start = x + 1;
    }
    if (dims.size() != parts)
        throw UsageError("'" + text + "' has " + std::to_string(dims.size()) + " extent(s); expected " +
                         std::to_string(parts) + " separated by 'x'");
    return dims;
}

CLI::Validator count() {
    return CLI::Validator(
        [](std::string& v) -> std::string {
            try {
                v = std::to_string(parse_count(v));
                return "";
            } catch (const UsageError& e) {
                return e.what();
            }
        },
        "");
}

CLI::Validator shape(std::size_t parts) {
    return tool_cli::throws_if_bad([parts](const std::string& v) { parse_shape(v, parts); }, "");
}

CLI::App* add_compare(CLI::App& app, CompareArgs& a) {
    CLI::App* cmd = app.add_subcommand("compare", "kernel-time ratios of two saved runs (JSON of `accel-bench "
                                                  "run`), row by row");
    cmd->add_option("BASE", a.base,
                    "the base run (JSON), or several runs comma-separated (a.json,b.json,...: the run is the unit, "
                    "each file's median one observation; NEW then takes several too, at least 4 a side for p < 0.05)")
        ->required();
    cmd->add_option("NEW", a.next, "the new run (JSON), or several comma-separated (as BASE)")->required();
    cmd->add_option("--alpha", a.alpha,
                    "significance level of the two-sided Mann-Whitney U test on each row's samples (default 0.05); "
                    "the ratio's confidence interval is at 1 - alpha")
        ->check(CLI::Range(1e-9, 0.5));
    cmd->add_option("--min-effect,--threshold", a.min_effect,
                    "a significant row is SLOWER (or faster) only when its new/base ratio is past 1 + this (or "
                    "1 / (1 + this)); default 0.05")
        ->check(CLI::Range(0.0, 1e6));
    cmd->add_option("--by", a.by,
                    "how rows pair: auto (default: the coarsest that pairs each row with at most one), op (op, "
                    "shape and path only: two devices compared), backend, selector (e.g. cuda:0 with cuda:0), "
                    "device (backend + device name), rank (fleet files of an MPI run: host, rank and selector)")
        ->check(tool_cli::one_of("--by value", {"auto", "op", "backend", "selector", "device", "rank"}))
        ->type_name("HOW");
    cmd->add_flag("--wide", a.wide,
                  "every column and whole lines (default: within $COLUMNS, the terminal's width or 100 columns; "
                  "block, speedup, p, samples and the times are left out in that order as needed)");
    cmd->footer("verdicts: SLOWER/faster (p < alpha and past --min-effect), small (p < alpha, within it), same "
                "(p >= alpha), no verdict (too few samples for p < alpha), no test (a file without samples: the "
                "ratio of medians only). exit status: 0 no row SLOWER; 1 a row SLOWER; 2 no row paired, a key with "
                "two rows in one file under --by, or a file is not an accel-bench JSON report.");
    return cmd;
}

CLI::App* add_plot(CLI::App& app, PlotArgs& a) {
    CLI::App* cmd = app.add_subcommand("plot", "log-log kernel time (or rate) against size, one line per file, "
                                               "device, path and dtype; or the roofline of every row, with each "
                                               "file's device ceilings (needs gnuplot)");
    cmd->add_option("RESULTS", a.files, "JSON files of `accel-bench run`")->required();
    cmd->add_option("-o", a.output, "the PNG to write")->required()->type_name("FILE");
    cmd->add_option("--op", a.op, "the op to plot (default: the first op of the first file)");
    cmd->add_option("--metric", a.metric, "time (kernel ms, default) or rate (GB/s or GFLOP/s)")
        ->check(tool_cli::one_of("metric", {"time", "rate"}));
    cmd->add_flag("--roofline", a.roofline, "the roofline of every row instead (--op and --metric do not apply)");
    cmd->add_option("--script", a.script,
                    "also write the gnuplot script that draws the PNG, its data inline (to restyle the plot, or "
                    "render it elsewhere: gnuplot FILE)")
        ->type_name("FILE");
    cmd->footer("Colour: device (the same in every plot), marker: path and dtype, line style: file; error bars: the "
                "fastest to the slowest warm run. The PNG is written whole or not at all. exit status: 0 written; 2 gnuplot missing or failed, or "
                "a file is not an accel-bench JSON report.");
    return cmd;
}

CLI::App* add_fleet(CLI::App& app, FleetArgs& a) {
    CLI::App* cmd = app.add_subcommand("fleet", "the fleet table of a saved run (ratios to the fleet's best and "
                                                "median, outliers); exit 1 when a device is an outlier");
    cmd->add_option("RESULTS", a.file, "JSON of a run (under mpirun: a fleet run)")->required();
    return cmd;
}

CLI::App* add_mlp(CLI::App& app, MlpArgs& a) {
    CLI::App* cmd = app.add_subcommand(
        "mlp", "times training of the MLP of examples/mlp_train (forward, backward and an Adam step per batch) on "
               "each device, every device from the same initial weights and batch order, and checks that their "
               "losses agree");
    a.given = [cmd](const char* name) { return cmd->count(name) > 0; };
    auto list = [&](const char* name, auto& values, const char* help) {
        return cmd->add_option(name, values, help)->delimiter(',')->allow_extra_args(false)->type_name("LIST");
    };
    cmd->add_option("--backends", a.backends,
                    "all, or a comma list of selectors (host, opencl:pocl, kokkos, cuda:1, ...); default: all "
                    "available backends, or just ACCEL_BACKEND when it is set")
        ->type_name("all|LIST");
    list("--hidden", a.hidden, "hidden units, one configuration each (default 1024,4096; --quick: 64)")
        ->transform(count());
    cmd->add_option("--batch", a.batch, "samples per batch (default 256; an epoch's last batch may be smaller)")
        ->transform(count())
        ->type_name("N");
    cmd->add_option("--epochs", a.epochs, "timed epochs per round (default 20; --quick: 3)")
        ->transform(count())
        ->type_name("N");
    cmd->add_option("--warmup", a.warmup, "untimed epochs at the start of each round (default 1)")
        ->check(CLI::Range(std::size_t{0}, std::size_t{1000}))
        ->type_name("N");
    cmd->add_option("--rounds", a.rounds,
                    "rounds, each on every device in turn (default 3; --quick: 1); the table shows the device's "
                    "first epoch apart, then the median ms/epoch of the steady epochs of every round, min and max")
        ->transform(count())
        ->type_name("N");
    list("--dtype,--dtypes", a.dtypes,
         "f32 (default), f64, f16, bf16 (mixed precision with f32 master weights, as mlp_train); a device that "
         "cannot train in one is listed as a note")
        ->check(tool_cli::throws_if_bad(accel::parse_dtype, ""));
    cmd->add_option("--data", a.data,
                    "the breast-cancer CSV (default: share/accel/breast_cancer.csv of the installation accel-bench "
                    "runs from, else the source tree's data/breast_cancer.csv)")
        ->type_name("PATH");
    cmd->add_option("--seed", a.seed, "seed of the split, the initial weights and the batch orders (default 1, as "
                                      "mlp_train)")
        ->check(tool_cli::throws_if_bad(
            [](const std::string& v) {
                const bool digits = !v.empty() && v.size() <= 20 && v.find_first_not_of("0123456789") == v.npos;
                if (!digits || (v.size() == 20 && v > "18446744073709551615"))
                    throw UsageError("'" + v + "' is not a whole number from 0 to 18446744073709551615");
            },
            ""))
        ->type_name("N");
    cmd->add_flag("--quick", a.quick, "tiny: hidden 64, 3 epochs, 1 round (for CI); given options still apply");
    cmd->add_flag("--graph", a.graph,
                  "each device trains twice, interleaved: eagerly, then with each batch size's training step "
                  "captured once as a graph and replayed per batch (accel/graph.hpp); a row each, side by side");
    cmd->add_flag("--wide", a.wide,
                  "every column and whole lines, each device's name and backend in every row instead of a "
                  "legend naming each device once (default: within $COLUMNS, the terminal's width or 100 columns)");
    cmd->add_option("--format", a.format, "table, csv or json (default table)")
        ->check(tool_cli::one_of("format", {"table", "csv", "json"}))
        ->type_name("FORMAT");
    cmd->add_option("-o", a.output, "write there instead of stdout")->type_name("FILE");
    cmd->add_option("--save-problem", a.save_problem,
                    "also write the standardized training set, the initial weights of each hidden size and every "
                    "epoch's batch order as JSON (what tools/bench/mlp_vs_pytorch.py trains PyTorch on)")
        ->type_name("FILE");
    cmd->footer("exit status: 0 every row ran and its final loss agrees with the first device's; 1 a row failed, "
                "disagreed, or none could run; 2 usage error, a named backend is unavailable, or the data set "
                "cannot be read.\noutput files (-o, --save-problem) are written whole or not at all.");
    return cmd;
}

}  // namespace bench
