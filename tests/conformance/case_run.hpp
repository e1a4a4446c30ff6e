// accel-conformance --case-file: each case of the file (case_file.hpp) as a
// doctest test case of its own, run on the device under test against the
// float64 oracle with the op table's threshold.
#pragma once

#include <case_file.hpp>
#include "driver.hpp"

#include <optional>

namespace conformance {

/// The doctest test suite the file's cases belong to; the run selects it
/// alone (--test-suite), so that --case-file runs the file's cases only.
inline constexpr const char* kCaseSuite = "case file";

/// Registers every case of `file` as a doctest test case named
/// "case: " + TraceCase::text() (so that --cases, --ops and --dtypes pick
/// them by name as they pick the suite's own), in suite kCaseSuite, each with
/// its origin as doctest's file and line. Each, when run: fresh random data
/// drawn from the run's seed and the case's text (the same data for one case
/// on every device and in every order; reproducible with --seed), outputs
/// filled with NaN, the call on every path the device offers for it (native;
/// vendor where it has one), every output compared with the float64 oracle
/// (NMSE against the op's threshold for the dtype, accel::nmse_threshold;
/// dense_backward: matmul's; bce_with_logits_loss: column_sum's); a case the
/// device does not run is reported and counts as skipped. At the end of the
/// run the failures are listed again, one line each (case, path, output,
/// NMSE, threshold). Call once, before doctest runs; not thread-safe.
void register_cases(const CaseFile& file);

/// --case-file and --write-case-file: reads and validates cmd.case_file
/// (nothing when it is empty) and either writes its cases to
/// cmd.write_case_file (returns 0, or 1 when that cannot be written) or
/// registers them (register_cases; returns nothing: the run goes on). A bad
/// file prints every problem, naming the file and the line or trace event,
/// and returns 2 (a usage error) before any device is opened; so does
/// --write-case-file without --case-file. Call once, before doctest runs.
std::optional<int> use_case_file(const Command& cmd);

}  // namespace conformance
