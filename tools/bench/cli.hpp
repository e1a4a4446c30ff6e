// accel-bench: command-line parsing shared by the subcommands.
#pragma once

#include <cstddef>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bench {

/// A malformed command line; main() prints it with the usage and exits 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Positional arguments and options (in command-line order) of a subcommand.
struct Args {
    std::vector<std::string> positional;
    std::vector<std::pair<std::string, std::string>> options;  ///< name (with "--"), value ("" for flags)
};

/// Splits `args` into options and positionals. `flags` take no value;
/// `valued` take one ("--x V" or "--x=V"); short aliases are spelled out in
/// both sets (e.g. "-o"). Throws UsageError for an unknown option (listing
/// the valid ones) or a missing value.
Args parse_args(const std::vector<std::string>& args, const std::set<std::string>& flags,
                const std::set<std::string>& valued);

/// Comma-separated items; empty items are dropped.
std::vector<std::string> split_list(const std::string& text);

/// A positive whole number, written plainly or in scientific notation
/// ("50000000", "5e7"). Throws UsageError naming `what` otherwise.
std::size_t parse_count(const std::string& text, const std::string& what);

/// A non-negative number ("0.1", "20"). Throws UsageError naming `what` otherwise.
double parse_number(const std::string& text, const std::string& what);

/// `parts` positive counts separated by 'x' ("1024x1024x1024"). Throws UsageError
/// naming `what` and the expected form otherwise.
std::vector<std::size_t> parse_shape(const std::string& text, std::size_t parts, const std::string& what);

}  // namespace bench
