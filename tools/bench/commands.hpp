// accel-bench subcommands. Each adds its options to the CLI11 command line
// (add_*), then runs with what was parsed and returns the process exit code;
// UsageError and std::runtime_error escape to main(), which prints them and
// exits 2.
#pragma once

#include "cli.hpp"

#include <string>
#include <vector>

namespace bench {

/// What `run` (the default command) was given; options not given (app->count
/// is 0) take the defaults of default_settings().
struct RunArgs {
    bool quick = false;
    std::string backends, format = "table", output, json_output;
    std::vector<std::string> ops, paths, dtypes, matmul_shapes, dense_shapes, column_sum_shapes;
    std::vector<std::size_t> add_sizes, matmul_sizes, block_sizes;
    int warmup = 0, repeats = 0;
    double min_time_ms = 0;
    const CLI::App* app = nullptr;      ///< the command line they were parsed from
    std::vector<CLI::Option*> options;  ///< every run option (the other subcommands exclude them)
};

/// Adds `run`'s options to the top-level command line (run is the default
/// command: `accel-bench [run] [options]`), bound to `a`.
void add_run_options(CLI::App& app, RunArgs& a);

/// `run`: times ops on backends. 0 when every row passed, 1 when a row
/// failed its NMSE threshold or could not run. Output files are written
/// whole or not at all: a run that throws leaves none.
int run_command(const RunArgs& a);

/// What `compare` was given.
struct CompareArgs {
    std::string base, next, by = "auto";
    double threshold = 0.10;
};

/// Adds the `compare` subcommand, bound to `a`.
CLI::App* add_compare(CLI::App& app, CompareArgs& a);

/// `compare BASE.json NEW.json [--threshold F] [--by ...]`: 0 when no row got
/// slower by more than F (default 0.10), 1 otherwise, 2 when no row paired.
/// Reads fleet files (MPI runs) too: --by rank pairs rows of one host, rank
/// and selector. Throws std::runtime_error naming the file when one is not
/// an accel-bench JSON report.
int compare_command(const CompareArgs& a);

/// What `plot` was given.
struct PlotArgs {
    std::vector<std::string> files;
    std::string output, op, metric = "time";
    bool roofline = false;
};

/// Adds the `plot` subcommand, bound to `a`.
CLI::App* add_plot(CLI::App& app, PlotArgs& a);

/// `plot RESULTS.json... -o out.png [--op OP] [--metric time|rate] [--roofline]`:
/// 0 when the PNG was written; 2 when gnuplot is missing or failed (the PNG
/// is then neither created nor clobbered).
int plot_command(const PlotArgs& a);

/// What `fleet` was given.
struct FleetArgs {
    std::string file;
};

/// Adds the `fleet` subcommand, bound to `a`.
CLI::App* add_fleet(CLI::App& app, FleetArgs& a);

}  // namespace bench
