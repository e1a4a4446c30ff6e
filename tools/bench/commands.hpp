// accel-bench subcommands. Each adds its options to the CLI11 command line
// (add_*, in cli.cpp; run's in main.cpp), then runs with what was parsed and returns the process exit code;
// UsageError and std::runtime_error escape to main(), which prints them and
// exits 2.
#pragma once

#include "cli.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bench {

/// What `run` (the default command) was given; options not given take the
/// defaults of default_settings().
struct RunArgs {
    bool quick = false;
    bool untuned = false;         ///< --untuned: default-parameter rows beside tuned ones (Settings::untuned)
    bool progress_lines = false;  ///< --progress: a line per row even on a terminal
    bool no_progress = false;     ///< --no-progress: nothing on stderr while the run goes
    bool wide = false;            ///< --wide: the table with device names in every row
    std::string backends, format = "table", output, json_output;
    std::string trace_output;  ///< --trace: a Chrome trace of the run (accel/trace.hpp)
    std::string case_file;     ///< --case-file: time a program's calls (case_file_command) instead
    std::vector<std::string> ops, paths, dtypes, matmul_shapes, dense_shapes, column_sum_shapes, activations;
    std::vector<std::size_t> add_sizes, matmul_sizes, block_sizes;
    int warmup = 0, repeats = 0;
    int runs = 0;              ///< --runs: warm samples per row, fixed
    double target_ci = 0, max_row_ms = 0;  ///< --target-ci, --max-time-ms
    int rank_timeout = 0;  ///< --rank-timeout seconds; 0: not given (ACCEL_RANK_TIMEOUT, else 300)
    double min_time_ms = 0;
    /// Whether the command line gave the option so named ("--warmup").
    std::function<bool(const char*)> given = [](const char*) { return false; };
    std::vector<CLI::Option*> options;  ///< every run option (the other subcommands exclude them)
};

/// Adds `run`'s options to the top-level command line (run is the default
/// command: `accel-bench [run] [options]`), bound to `a`.
void add_run_options(CLI::App& app, RunArgs& a);

/// `run`: times ops on backends. 0 when every row passed, 1 when a row
/// failed its NMSE threshold or could not run. Output files are written
/// whole or not at all: a run that throws leaves none.
int run_command(const RunArgs& a);

/// `run --case-file FILE`: reads a trace (ACCEL_TRACE) or a case file
/// (`accel-conformance --write-case-file`; tools/common/case_file.hpp), and
/// times each distinct call on every device of --backends, call by call
/// with the devices in turn (fresh uniform data, the path the device
/// chooses, as in the program): per call, the
/// median, min and max over batches of back-to-back calls, each batch timed
/// on the host clock up to one synchronize; then per device the program's
/// total, the sum of (calls of it × median) in ms. Prints a table (one column
/// per device, µs per call), CSV or JSON (--format; -o, --json). 0 when every
/// call ran on every device; 1 when one could not (its cell "–", a note
/// why); 2 for a bad file (every problem listed, one line each naming the
/// file and its line or trace event, as accel-conformance's) before any
/// device is opened, or a run option that does not apply (UsageError).
int case_file_command(const RunArgs& a);

/// What `compare` was given.
struct CompareArgs {
    std::string base, next, by = "auto";
    double alpha = 0.05;       ///< significance level of the U test (two-sided)
    double min_effect = 0.05;  ///< a row is SLOWER/faster only past new/base 1 + this (or 1/(1 + this))
    bool wide = false;         ///< --wide: every column and whole lines, not fitted to the terminal
};

/// Adds the `compare` subcommand, bound to `a`.
CLI::App* add_compare(CLI::App& app, CompareArgs& a);

/// `compare BASE.json NEW.json [--alpha A] [--min-effect F] [--by ...]`: each
/// row's samples under a two-sided Mann–Whitney U test at A (default 0.05)
/// with the Hodges–Lehmann ratio new/base and its 1 - A interval. BASE and
/// NEW may each be several files, comma-separated (two or more a side): then
/// each file's median of a row is one observation, so that the variation
/// between runs is in the test; one file on one side only is a usage error. 1 when a
/// row is significantly slower by more than F (default 0.05), 0 otherwise,
/// 2 when no row paired.
/// Reads fleet files (MPI runs) too: --by rank pairs rows of one host, rank
/// and selector. Throws std::runtime_error naming the file when one is not
/// an accel-bench JSON report.
int compare_command(const CompareArgs& a);

/// What `plot` was given.
struct PlotArgs {
    std::vector<std::string> files;
    std::string output, op, metric = "time";
    std::string script;  ///< --script: also write the gnuplot script (its data inline) there
    bool roofline = false;
};

/// Adds the `plot` subcommand, bound to `a`.
CLI::App* add_plot(CLI::App& app, PlotArgs& a);

/// `plot RESULTS.json... -o out.png [--op OP] [--metric time|rate] [--roofline]
/// [--script FILE]`: one line (roofline: one series) per file, device, path
/// and dtype, titled with the file's name when several are given, each point
/// with error bars from its row's fastest to its slowest warm run
/// (kernel_ms min..max); colour names the device (a fixed palette slot from
/// a hash of its stable selector: the same in every plot), the marker path
/// and dtype, the line style the file. The roofline's ceilings one per
/// device of each file, from that file's figures, each labelled (labels of
/// equal ceilings stacked, lines under an equal one drawn wider);
/// cache-resident rows ringed and explained in the key. Prints what it
/// drew, one title per line. 0 when the PNG (and the script) was written; 2
/// when gnuplot is missing or failed (the PNG is then neither created nor
/// clobbered).
int plot_command(const PlotArgs& a);

/// What `mlp` was given; options not given (app->count is 0) keep the
/// defaults of MlpSettings (mlp_bench.hpp), or --quick's.
struct MlpArgs {
    bool quick = false;
    bool wide = false;  ///< --wide: the table with device name and backend in every row
    bool graph = false;  ///< --graph: each device also trains with the step replayed as a graph
    std::string backends, format = "table", output, data, save_problem;
    std::vector<std::size_t> hidden;
    std::vector<std::string> dtypes;
    std::size_t batch = 0, epochs = 0, rounds = 0, warmup = 0;
    std::uint64_t seed = 0;
    /// Whether the `mlp` subcommand was given the option so named ("--hidden").
    std::function<bool(const char*)> given = [](const char*) { return false; };
};

/// Adds the `mlp` subcommand, bound to `a`.
CLI::App* add_mlp(CLI::App& app, MlpArgs& a);

/// `mlp [--backends LIST] [--hidden LIST] [--batch N] [--epochs N] ...`:
/// times training of examples/mlp_train's MLP on each device (ms per epoch,
/// samples/s) and compares the devices' final losses. 0 when every row ran
/// and agreed with the first device's loss, 1 otherwise (or when no device
/// could train). Throws UsageError (an empty list, under mpirun),
/// std::runtime_error (no data set found, an output file that cannot be
/// opened), accel::InvalidArgument (an unreadable data file, an unknown
/// selector) and accel::BackendUnavailable: main() prints them, exit 2.
/// Output files are written whole or not at all.
int mlp_command(const MlpArgs& a);

/// What `tune` was given.
struct TuneArgs {
    std::string backends, out;
    double minutes = 3;
    std::vector<std::string> dtypes;
    bool quick = false;
};

/// Adds the `tune` subcommand, bound to `a` (tune.cpp).
CLI::App* add_tune(CLI::App& app, TuneArgs& a);

/// `tune [--backends SEL] [--minutes M] [--out FOLDER] [--dtypes LIST] [--quick]`:
/// tunes every device that has tunable kernels (Device::tuning) within M
/// minutes in all, on fresh random data, and writes each device's record
/// (accel/tuning.hpp) into the cache's tuning folder and, with --out, into
/// FOLDER under its database name. Prints default and tuned GFLOP/s per key.
/// 0 when every device that has tunable kernels was tuned, 1 when none has
/// any; throws UsageError for an --out that is not a writable folder (before
/// any search), std::runtime_error when a default
/// fails its own check, accel::Error for an unknown selector or a record
/// that cannot be written (main() prints them, exit 2).
int tune_command(const TuneArgs& a);

/// What `fleet` was given.
struct FleetArgs {
    std::string file;
};

/// Adds the `fleet` subcommand, bound to `a`.
CLI::App* add_fleet(CLI::App& app, FleetArgs& a);

}  // namespace bench
