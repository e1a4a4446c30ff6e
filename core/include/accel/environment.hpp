// accel/environment.hpp — the environment variables accel reads: each
// declared by the part of accel that reads it (its name, accepted values and
// meaning), and the readers that check a value against its declaration.
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

/// One environment variable, as its owner declares it.
struct Variable {
    std::string name;      ///< e.g. "ACCEL_HOST_THREADS": "ACCEL_" and then A-Z, 0-9 and '_'
    std::string accepted;  ///< the accepted values, as an error message lists them
    std::string meaning;   ///< what it controls, and its default
    std::string owner;     ///< who reads it, e.g. "libaccel", "the host backend", "accel's test programs"
};

/// Adds `v` to the process's variables. Every part of accel that reads an
/// ACCEL_ variable declares it, where it is read (a static env::Declaration in
/// the reader's file): libaccel, each backend plugin when it loads
/// (a backend's own variables start with ACCEL_<BACKEND>_), accel_mpi, the
/// test programs, and a plugin built outside accel. Declaring a name again
/// with the same texts does nothing. Throws std::logic_error when the name is
/// not "ACCEL_" followed by A-Z, 0-9 and '_', when a text is empty, or when
/// the name is declared again with other texts. Thread-safe.
void declare(const Variable& v);

/// Declares its variable when constructed: `static const accel::env::Declaration
/// kThreads{{"ACCEL_MY_THREADS", "1..64", "worker threads (default 4)", "my backend"}};`
/// at namespace scope of the file that reads it. Throws what declare() throws.
struct Declaration {
    explicit Declaration(const Variable& v) { declare(v); }
};

/// The variables declared in this process so far, in declaration order (a
/// copy). A plugin's appear once it is loaded: after accel::backend_statuses()
/// or the first open_device(), every plugin found has been tried.
/// Thread-safe; never throws but std::bad_alloc.
std::vector<Variable> variables();

/// The declaration of `name` (a copy). Throws std::logic_error when `name` is
/// not declared (a reader of an undeclared variable is a bug in its owner).
/// Thread-safe.
Variable variable(const std::string& name);

/// Checks the ACCEL_ variables in the environment against the declared ones
/// and the prefixes listed in ACCEL_ENV_ALLOW (a program's own variables). A
/// name within accel::closest_name's distance of a declared one is a typo
/// (ACCEL_BACKENDS for ACCEL_BACKEND, which would otherwise leave the program
/// on the default device without a word): throws InvalidArgument naming it
/// and the declared name it was probably meant to be. Any other undeclared
/// name is read by no part of this process (another accel program's variable,
/// such as a test suite's, or that of a plugin that did not load): one warning
/// line on stderr per name and process, naming `backends_not_loaded` (the
/// backends whose plugin was found but did not load). Also throws
/// InvalidArgument when ACCEL_ENV_ALLOW holds an entry that does not start
/// with "ACCEL_" or is "ACCEL_" alone. The registry runs it once the plugins
/// are loaded (open_device, backend_statuses). Thread-safe as far as the C
/// library's environment is (no concurrent setenv).
void check_unknown_variables(const std::vector<std::string>& backends_not_loaded = {});

/// The value of `name` (which must be declared: std::logic_error otherwise)
/// without surrounding blanks (space, tab, CR, LF); std::nullopt when unset,
/// empty or blank. Thread-safe as far as the C library's getenv is (no
/// concurrent setenv).
std::optional<std::string> value(const char* name);

/// Throws InvalidArgument: "NAME='VALUE' WHY; expected ACCEPTED" (ACCEPTED
/// from the declaration; VALUE echoed on one line, shortened past 64 characters).
[[noreturn]] void reject(const char* name, const std::string& value, const std::string& why);

/// `name` as a whole number in [lo, hi] (decimal digits, an optional leading
/// '+'); std::nullopt when unset or blank. Throws InvalidArgument naming the
/// variable, the value and the accepted values when the value is not such a
/// number or is outside [lo, hi]; std::logic_error when `name` is not declared.
std::optional<std::uint64_t> read_uint(const char* name, std::uint64_t lo, std::uint64_t hi);

/// `name` as one of `words` (compared without case); the word from `words`
/// that matched, std::nullopt when unset or blank. Throws InvalidArgument
/// naming the variable, the value and the accepted values for any other
/// value; std::logic_error when `name` is not declared.
std::optional<std::string> read_word(const char* name, const std::vector<std::string>& words);

/// `name` as a boolean: "1" is true, "0" false, std::nullopt when unset or
/// blank. Throws InvalidArgument naming the variable, the value and the
/// accepted values for any other value (also "yes", "true", "on": one
/// spelling per meaning); std::logic_error when `name` is not declared.
std::optional<bool> read_flag(const char* name);

/// The folder where accel keeps what it measured or compiled (the auto
/// path's measurements, the Vulkan backend's pipeline cache):
/// ACCEL_CACHE_DIR, else $XDG_CACHE_HOME/accel, else $HOME/.cache/accel; ""
/// when none of them is set. The folder may not exist yet (writers create
/// it). Throws InvalidArgument (naming the variable and its value) when
/// ACCEL_CACHE_DIR names an existing file that is not a folder. Thread-safe
/// as value() is.
std::string cache_dir();

/// The value of `name` (trimmed; std::nullopt when unset or blank) whether or
/// not it is declared yet, without any check: for libaccel's preparation of
/// the CPU libraries, which runs before the first plugin (the variable's
/// owner) loads; every other reader uses value(). Thread-safe as value() is.
std::optional<std::string> undeclared_value(const char* name);

}  // namespace env
}  // namespace accel
