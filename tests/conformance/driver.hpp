// accel-conformance's command line (driver.cpp): the options, the test cases
// they select, the run on ACCEL_BACKEND's device in this process, and the run
// on several devices (--backends), one child process each, with the verdict
// table and the JSON record. The MPI fleet mode stays in main.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace conformance {

/// What the command line asked for.
struct Command {
    std::string backends;             ///< --backends: "all" or selectors; empty: ACCEL_BACKEND's device, here
    std::string cases;                ///< --cases: doctest test-case name patterns (comma-separated)
    std::vector<std::string> ops;     ///< --ops: op names of the op table (checked)
    std::vector<std::string> dtypes;  ///< --dtypes: f32, f64, f16, bf16 (checked, canonical names)
    std::optional<std::uint64_t> seed;  ///< --seed: the random data's seed (else ACCEL_TEST_SEED, else drawn)
    std::string json;                 ///< --json: the file the verdicts go to; empty: none
    /// --case-file: a trace (ACCEL_TRACE) or case file whose distinct calls
    /// are the only test cases run (case_file.hpp); empty: the suite's own
    std::string case_file;
    std::string write_case_file;      ///< --write-case-file: write case_file's cases there and stop
    /// doctest's own options: those after `--`, and those of doctest's names
    /// given before it (as older command lines do); without the program name.
    std::vector<std::string> doctest_args;
};

/// Parses argv into `cmd`. Returns nothing when the program should go on;
/// otherwise the exit status after printing: 0 after --help, 2 after a usage
/// error (an unknown option named, an unknown op or dtype with the valid
/// ones; one line on stderr). Loads the backend plugins only to look up an
/// op name a plugin may define; opens no device.
std::optional<int> parse_command_line(int argc, char** argv, Command& cmd);

/// Prints "accel-conformance: <message>; see accel-conformance --help" as
/// one line on stderr and returns 2, the exit status of a usage error.
int usage_error(const std::string& message);

/// Applies --seed (ACCEL_TEST_SEED), --ops and --dtypes (accel_test::select)
/// to this process and returns doctest's arguments, program name first, with
/// the test-case filters of --cases, --ops and --dtypes merged into doctest's
/// own. Throws tool_cli::UsageError when those filters select no test case.
std::vector<std::string> prepare_suite(const Command& cmd, const char* program);

/// The suite on ACCEL_BACKEND's device in this process, as before the command
/// line existed; with --json, its verdict is written there too. Returns
/// run_suite's exit status (0 passed, 1 failed or a bad variable, 77
/// unavailable) or 2 for a usage error.
int run_here(const Command& cmd, const char* program);

/// --backends: the suite on each device named, each in a child process of
/// this program with ACCEL_BACKEND set, one seed for all; then the verdict
/// table (selector, device, test cases passed/failed/skipped, time, reason)
/// and, with --json, the record. Returns 0 when every device passed, 1 when
/// one failed or could not be opened while others could, 77 when none could
/// be opened, 2 for a usage error (an unknown backend name: accel's message).
int run_devices(const Command& cmd, const char* program);

}  // namespace conformance
