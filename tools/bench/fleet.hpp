// accel-bench across MPI ranks ("fleet" runs): every rank times the ops on
// its own device, rank 0 gathers the rows into one JSON document and prints
// the fleet table; and `accel-bench fleet FILE` re-reads such a document.
#pragma once

#include "commands.hpp"
#include "runner.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace bench {

/// MPI for the duration of the program when accel-bench was built with MPI
/// and started by mpirun/srun (accel::mpi::launched_by_mpi()); otherwise
/// nothing. Create at the top of main(), on the main thread.
class FleetScope {
public:
    FleetScope(int* argc, char*** argv);
    ~FleetScope();
    /// True when this process is one rank of an MPI job.
    static bool active() noexcept;
    /// This rank (0 outside MPI).
    static int rank() noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// The `run` subcommand on every rank of an MPI job. `backends`: the
/// --backends text (one selector, or a comma list dealt to ranks by rank;
/// BACKEND:local gives each rank its own device; empty: ACCEL_BACKEND, else
/// auto:local). Each rank times `s` on its device under an
/// accel::mpi::Watchdog; rank 0 writes the fleet document (see
/// merge_fleet_records) as `format` "json" or "table" to `output` (stdout
/// when empty) and to `json_output` when set. A rank that finishes no row
/// for `rank_timeout_seconds` (0: accel::mpi::rank_timeout_seconds()) or
/// whose process dies is marked `timeout` / `died` in fleet.ranks and in the
/// table, with its host and device; the others' rows are written all the
/// same. Returns the exit status, the same on every rank: 0 when every row of
/// every rank passed; 1 when a row failed or a rank could not run (named
/// with host and device). When a rank was lost, rank 0 ends the job after
/// writing (accel::mpi::abort_job, status 1), naming the lost ranks: a hung
/// rank would hold MPI_Finalize forever. Throws UsageError (format csv,
/// --backends all) before any MPI step that could leave ranks waiting: every
/// rank throws it alike.
int fleet_run(Settings s, const std::string& backends, const std::string& format, const std::string& output,
              const std::string& json_output, int rank_timeout_seconds);

/// What one device of a fleet document scored.
struct FleetDevice {
    int rank = 0;
    std::string host, selector, name, backend, uuid, pci_bus_id, error;
    std::string lost;          ///< "timeout" or "died" when the rank was lost in a fleet run, else "".
    double copy_gbps = 0, peak_gflops = 0;
    int rows = 0;              ///< rows with a kernel time
    double vs_best = 0;        ///< geometric mean over its rows of kernel ms / the fleet's best for that row
    double vs_median = 0;      ///< ... / the fleet's median for that row (all devices that ran it)
    int siblings = 0;          ///< other devices of the fleet with the same backend and name
    double vs_siblings = 0;    ///< geometric mean of kernel ms / the siblings' median (0 without siblings)
    bool outlier = false;      ///< vs_siblings > kOutlierRatio
};

/// A device is an outlier when, over the rows it shares with devices of the
/// same backend and name elsewhere in the fleet, the geometric mean of its
/// kernel time divided by the median time of those others exceeds this:
/// 20 % slower than its siblings.
constexpr double kOutlierRatio = 1.20;

/// Scores every device of a fleet document (the rows' "rank" key tells
/// devices apart; a plain `run` document is one rank). Throws
/// std::runtime_error when a row lacks op/shape/path.
std::vector<FleetDevice> analyze_fleet(const nlohmann::json& doc);

/// The fleet table for people: one line per rank (host, device, identity,
/// ceilings, time ratios to the fleet's best and median and to same-named
/// siblings), one line per row and rank (kernel ms, rate, ratio to the
/// row's best and median), then the outliers named, or why none could be.
void write_fleet_table(std::ostream& out, const nlohmann::json& doc);

/// `accel-bench fleet FILE.json`: prints the fleet table of a saved run.
/// Returns 0, or 1 when a device is an outlier (so a batch job can gate on
/// it). Throws std::runtime_error naming the file when it is not a report.
int fleet_command(const FleetArgs& a);

}  // namespace bench
