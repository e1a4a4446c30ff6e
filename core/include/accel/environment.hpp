// accel/environment.hpp — the environment variables accel reads: one table of
// their names, accepted values and meanings, and the readers that check a
// value against it.
//
// Every ACCEL_ variable is read through these functions, where it is used: a
// value outside the accepted ones is an accel::InvalidArgument naming the
// variable, the value and the accepted values, never ignored. An unset
// variable, or one set to the empty string or blanks only, takes its default.
// docs/environment.md's table of variables lists the same names (a unit test checks).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace accel {
namespace env {

/// One environment variable accel reads.
struct Variable {
    const char* name;      ///< e.g. "ACCEL_HOST_THREADS"
    const char* accepted;  ///< the accepted values, as an error message lists them
    const char* meaning;   ///< what it controls, and its default
};

/// Every ACCEL_ variable read by libaccel, its plugins, accel_mpi and the
/// programs built with accel (tools, examples, conformance and reliability
/// suites), in docs/environment.md's order. Thread-safe; never throws.
const std::vector<Variable>& variables() noexcept;

/// The table's entry for `name`. Throws std::logic_error when `name` is not
/// in the table (a reader of an unlisted variable is a bug in accel).
/// Thread-safe.
const Variable& variable(const std::string& name);

/// Checks that every ACCEL_ variable in the environment is in variables()
/// or starts with a prefix listed in ACCEL_ENV_ALLOW (a program's own
/// variables): a mistyped name (ACCEL_BACKENDS for ACCEL_BACKEND) would
/// otherwise be ignored without a word. value() runs it before its first
/// read, so every program built with accel does. Throws InvalidArgument
/// naming the unknown variable and, where one is close (edit distance), the
/// known name it was probably meant to be; also when ACCEL_ENV_ALLOW holds
/// an entry that does not start with "ACCEL_" or is "ACCEL_" alone.
/// Thread-safe as far as the C library's environment is (no concurrent
/// setenv).
void check_unknown_variables();
/// The value of `name` (which must be in the table: std::logic_error
/// otherwise) without surrounding blanks (space, tab, CR, LF); std::nullopt
/// when unset, empty or blank. The first call of the process runs
/// check_unknown_variables() and throws its InvalidArgument (as does every
/// later call while the environment still fails it). Thread-safe as far as the C library's getenv
/// is (no concurrent setenv).
std::optional<std::string> value(const char* name);

/// Throws InvalidArgument: "NAME='VALUE' WHY; expected ACCEPTED" (ACCEPTED
/// from the table; VALUE echoed on one line, shortened past 64 characters).
[[noreturn]] void reject(const char* name, const std::string& value, const std::string& why);

/// `name` as a whole number in [lo, hi] (decimal digits, an optional leading
/// '+'); std::nullopt when unset or blank. Throws InvalidArgument naming the
/// variable, the value and the accepted values when the value is not such a
/// number or is outside [lo, hi]; std::logic_error when `name` is not in the table.
std::optional<std::uint64_t> read_uint(const char* name, std::uint64_t lo, std::uint64_t hi);

/// `name` as one of `words` (compared without case); the word from `words`
/// that matched, std::nullopt when unset or blank. Throws InvalidArgument
/// naming the variable, the value and the accepted values for any other
/// value; std::logic_error when `name` is not in the table.
std::optional<std::string> read_word(const char* name, const std::vector<std::string>& words);

/// `name` as a boolean: "1" is true, "0" false, std::nullopt when unset or
/// blank. Throws InvalidArgument naming the variable, the value and the
/// accepted values for any other value (also "yes", "true", "on": one
/// spelling per meaning); std::logic_error when `name` is not in the table.
std::optional<bool> read_flag(const char* name);

/// The folder where accel keeps what it measured or compiled (the auto
/// path's measurements, the Vulkan backend's pipeline cache):
/// ACCEL_CACHE_DIR, else $XDG_CACHE_HOME/accel, else $HOME/.cache/accel; ""
/// when none of them is set. The folder may not exist yet (writers create
/// it). Throws InvalidArgument (naming the variable and its value) when
/// ACCEL_CACHE_DIR names an existing file that is not a folder. Thread-safe
/// as value() is.
std::string cache_dir();

}  // namespace env
}  // namespace accel
