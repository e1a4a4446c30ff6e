// Command-line plumbing shared by accel's tools (accel-bench, accel-info) and
// the example programs: CLI11 parsing with generated --help and one-line
// usage errors, and value validators. Header-only. CLI11 is header-only too
// and slow to compile: include this only where a command line is built
// (tool_io.hpp has the rest, without CLI11).
#pragma once

#include <tool_io.hpp>

#include <CLI/CLI.hpp>
#include <accel/closest_name.hpp>

#include <sys/ioctl.h>
#include <unistd.h>

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

/// The width, in columns, that a tool's help and default tables keep within:
/// $COLUMNS when it holds a number of at least 40 (a shell's or the user's
/// choice), else the terminal's width when stdout is a terminal (at least
/// 40), else 100. Thread-safe (reads the environment once per call).
inline std::size_t output_width() {
    if (const char* c = std::getenv("COLUMNS")) {
        char* end = nullptr;
        const unsigned long v = std::strtoul(c, &end, 10);
        if (end != c && *end == '\0' && v >= 40 && v <= 100000) return v;
    }
    winsize w{};
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 40) return w.ws_col;
    return 100;
}

/// Columns `s` takes on a terminal: its UTF-8 code points (each counted one
/// column wide, as the arrows, dashes and signs accel prints are).
inline std::size_t text_columns(const std::string& s) {
    std::size_t n = 0;
    for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

/// `text` with every line longer than `width` columns broken at spaces into
/// lines of at most `width` (a word longer than a line stays whole on its
/// own). A continuation line is indented as far as the broken line's text
/// started: past its leading blanks, or, for a "  --name   text" line of a
/// help, at the column where the text after the name's run of blanks begins.
inline std::string wrap_lines(const std::string& text, std::size_t width) {
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        const bool newline = end != std::string::npos;
        if (!newline) end = text.size();
        std::string line = text.substr(start, end - start);
        start = end + 1;
        if (text_columns(line) <= width) {
            out += line + (newline ? "\n" : "");
            continue;
        }
        std::size_t indent = line.find_first_not_of(' ');
        const std::size_t gap = line.find("  ", indent);
        if (gap != std::string::npos && line.find_first_not_of(' ', gap) != std::string::npos &&
            line.find_first_not_of(' ', gap) < width / 2)
            indent = line.find_first_not_of(' ', gap);
        std::string current = line.substr(0, indent);
        std::size_t columns = text_columns(current);
        bool first_word = true;
        std::size_t pos = indent;
        while (pos < line.size()) {
            std::size_t word_end = line.find(' ', pos);
            if (word_end == std::string::npos) word_end = line.size();
            const std::string word = line.substr(pos, word_end - pos);
            const std::size_t w = text_columns(word);
            if (!first_word && columns + 1 + w > width) {
                out += current + "\n";
                current = std::string(indent, ' ') + word;
                columns = indent + w;
            } else {
                current += (first_word ? "" : " ") + word;
                columns += (first_word ? 0 : 1) + w;
            }
            first_word = false;
            pos = line.find_first_not_of(' ', word_end);
            if (pos == std::string::npos) break;
        }
        out += current + (newline ? "\n" : "");
    }
    return out;
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
