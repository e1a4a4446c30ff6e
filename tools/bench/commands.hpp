// accel-bench subcommands. Each takes the arguments after its name and
// returns the process exit code; UsageError and std::runtime_error escape to
// main(), which prints them and exits 2.
#pragma once

#include <string>
#include <vector>

namespace bench {

/// `run`: times ops on backends (see usage in main.cpp). 0 when every row
/// passed, 1 when a row failed its NMSE threshold or could not run.
int run_command(const std::vector<std::string>& args);

/// `compare BASE.json NEW.json [--threshold F] [--by ...]`: 0 when no row got
/// slower by more than F (default 0.10), 1 otherwise. Reads fleet files (MPI
/// runs) too: --by rank pairs rows of one host, rank and selector.
int compare_command(const std::vector<std::string>& args);

/// `plot RESULTS.json -o out.png [--op OP] [--metric time|rate]`: 0 when the
/// PNG was written; 2 when gnuplot is missing or failed.
int plot_command(const std::vector<std::string>& args);

}  // namespace bench
