// Command-line plumbing shared by accel's tools (accel-bench, accel-info) and
// the example programs: CLI11 parsing with generated --help and one-line
// usage errors, and value validators. Header-only. CLI11 is header-only too
// and slow to compile: include this only where a command line is built
// (tool_io.hpp has the rest, without CLI11).
#pragma once

#include <text_width.hpp>
#include <tool_io.hpp>

#include <CLI/CLI.hpp>
#include <accel/closest_name.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
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

/// The deepest subcommand of `app` that was parsed (`app` itself when none).
inline const CLI::App& deepest_subcommand(const CLI::App& app) {
    const CLI::App* sub = &app;
    while (!sub->get_subcommands().empty()) sub = sub->get_subcommands().front();
    return *sub;
}

/// " (did you mean '--backends'?)" for a mistyped long option of `app`'s
/// deepest parsed subcommand (or a subcommand's name, for a word), empty when
/// no known name is close (accel::closest_name).
inline std::string did_you_mean(const CLI::App& app, const std::string& typed) {
    const CLI::App& sub = deepest_subcommand(app);
    std::vector<std::string> known;
    if (typed.size() > 1 && typed[0] == '-') {
        for (const CLI::Option* o : sub.get_options())
            for (const std::string& l : o->get_lnames()) known.push_back("--" + l);
    } else {
        for (const CLI::App* c : sub.get_subcommands({})) known.push_back(c->get_name());
    }
    const std::string closest = accel::closest_name(typed.substr(0, typed.find('=')), known);
    return closest.empty() ? "" : " (did you mean '" + closest + "'?)";
}

/// Prints "<command>: <message>; see <command> --help" as one line on stderr
/// and returns 2, the exit status of a usage error.
inline int usage_error(const std::string& command, const std::string& message) {
    std::cerr << command << ": " << message << "; see " << command << " --help\n";
    return 2;
}

/// CLI11's help, its lines wrapped to output_width() (CLI11 2.1 does not wrap).
class WrappingFormatter : public CLI::Formatter {
public:
    std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
        return wrap_lines(CLI::Formatter::make_help(app, std::move(name), mode), output_width());
    }
};

/// Gives `app` and all its subcommands the WrappingFormatter.
inline void use_wrapping_help(CLI::App& app) {
    app.formatter(std::make_shared<WrappingFormatter>());
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) use_wrapping_help(*sub);
}

/// Parses `args` (without the program name) with `app`. Returns nothing
/// when the program should go on; otherwise the exit status after printing:
/// 0 after --help/-h (the generated help on stdout), 2 after a usage error
/// (one line on stderr: what was wrong, and "see ... --help"). Never throws
/// CLI11's errors.
inline std::optional<int> parse(CLI::App& app, std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    use_wrapping_help(app);
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
                               first + "'" + did_you_mean(app, first));
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
            const std::string closest = accel::closest_name(v, values);
            return "unknown " + what + " '" + v + "'" + (closest.empty() ? "" : " (did you mean '" + closest + "'?)") +
                   "; valid " + what + "s: " + list;
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
