// accel-bench: the parsers of list, count and shape values shared by the
// subcommands, and their CLI11 validators. CLI11 itself is included only
// where the command line is built (cli.cpp: the subcommands' options;
// main.cpp: run's), as it is slow to compile.
#pragma once

#include <backend_list.hpp>
#include <tool_io.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace CLI {  // CLI11 (tool_cli.hpp), included only where the command line is built: cli.cpp, main.cpp
class App;
class Option;
class Validator;
}  // namespace CLI

namespace bench {

using tool_cli::UsageError;

using tool_cli::split_list;        // comma-separated items (backend_list.hpp)
using tool_cli::resolve_backends;  // the devices of a --backends value: all, a list or ACCEL_BACKEND

/// A positive whole number, written plainly or in scientific notation
/// ("50000000", "5e7"), at most 1e15. Throws UsageError quoting `text` and
/// naming the expected form otherwise.
std::size_t parse_count(const std::string& text);

/// `parts` positive counts separated by 'x' ("1024x1024x1024"). Throws
/// UsageError quoting `text` and naming the expected form otherwise.
std::vector<std::size_t> parse_shape(const std::string& text, std::size_t parts);

/// CLI11 transform: the value is a count as parse_count() reads it and is
/// rewritten in plain digits ("5e7" -> "50000000"), so it converts to
/// std::size_t; otherwise the option fails with parse_count()'s message.
CLI::Validator count();

/// CLI11 check: the value is a shape of `parts` counts as parse_shape() reads it.
CLI::Validator shape(std::size_t parts);

}  // namespace bench
