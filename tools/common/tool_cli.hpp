// Command-line plumbing shared by accel's tools (accel-bench, accel-info) and
// the example programs: CLI11 parsing with generated --help and one-line
// usage errors, and value validators. Header-only. CLI11 is header-only too
// and slow to compile: include this only where a command line is built
// (tool_io.hpp has the rest, without CLI11).
#pragma once

#include <tool_io.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tool_cli {

/// The name the user typed to reach the deepest subcommand that was parsed
/// (e.g. "accel-bench compare"), for messages.
inline std::string command_name(const CLI::App& app) {
    std::string name = app.get_name();
    for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
        sub = sub->get_subcommands().front();
        name += " " + sub->get_name();
    }
    return name;
}

/// Prints "<command>: <message>; see <command> --help" as one line on stderr
/// and returns 2, the exit status of a usage error.
inline int usage_error(const std::string& command, const std::string& message) {
    std::cerr << command << ": " << message << "; see " << command << " --help\n";
    return 2;
}

/// Parses `args` (without the program name) with `app`. Returns nothing
/// when the program should go on; otherwise the exit status after printing:
/// 0 after --help/-h (the generated help on stdout), 2 after a usage error
/// (one line on stderr: what was wrong, and "see ... --help"). Never throws
/// CLI11's errors.
inline std::optional<int> parse(CLI::App& app, std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    try {
        app.parse(args);
        return std::nullopt;
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // help
        // An argument CLI11 could not place is named first: it is often why
        // a required one seems missing.
        const std::vector<std::string> extra = app.remaining(true);
        if (extra.empty()) return usage_error(command_name(app), e.what());
        const std::string& first = extra.front();
        return usage_error(command_name(app),
                           (first.size() > 1 && first[0] == '-' ? "unknown option '" : "unexpected argument '") +
                               first + "'");
    }
}

/// parse() on main()'s arguments.
inline std::optional<int> parse(CLI::App& app, int argc, char** argv) {
    return parse(app, std::vector<std::string>(argv + 1, argv + argc));
}

/// Validator: the value is one of `values`; otherwise the message reads
/// "unknown <what> 'x'; valid <what>s: a, b, c".
inline CLI::Validator one_of(const std::string& what, std::vector<std::string> values) {
    std::string list;
    for (const auto& v : values) list += (list.empty() ? "" : ", ") + v;
    return CLI::Validator(
        [what, values, list](std::string& v) -> std::string {
            for (const auto& ok : values)
                if (v == ok) return "";
            return "unknown " + what + " '" + v + "'; valid " + what + "s: " + list;
        },
        "{" + list + "}");
}

/// Validator that runs `check` (a function that throws std::exception with a
/// message naming what is wrong, e.g. accel::parse_dtype) on the value.
template <typename Check>
CLI::Validator throws_if_bad(Check check, std::string description) {
    return CLI::Validator(
        [check](std::string& v) -> std::string {
            try {
                check(v);
                return "";
            } catch (const std::exception& e) {
                return e.what();
            }
        },
        std::move(description));
}

}  // namespace tool_cli
