// Command-line plumbing shared by accel's tools (accel-bench, accel-info) and
// the example programs: CLI11 parsing with generated --help and one-line
// usage errors, value validators, and output files written whole or not at
// all. Header-only.
#pragma once

#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tool_cli {

/// A malformed command line found after CLI11 parsed it (e.g. a value that
/// contradicts another option). Print it with usage_error(): exit status 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

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

/// An output file that is written whole or not at all: the text goes to a
/// temporary file beside `path` (same folder, so the final rename is
/// atomic), which commit() renames onto `path`. Destroyed without commit()
/// (an error, an exception), it removes the temporary file: `path` is neither
/// created nor clobbered.
class AtomicFile {
public:
    /// Creates the temporary file next to `path`. Throws std::runtime_error
    /// "cannot open '<path>' for writing: <reason>" when the folder is missing
    /// or not writable, so a bad path fails before any work.
    explicit AtomicFile(std::string path) : path_(std::move(path)) {
        const auto slash = path_.rfind('/');
        const std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
        const std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
        temp_ = dir + "." + base + ".tmp-XXXXXX";
        const int fd = mkstemp(temp_.data());
        if (fd < 0) throw std::runtime_error("cannot open '" + path_ + "' for writing: " + std::strerror(errno));
        const mode_t mask = umask(0);  // the mode a plain open would have given
        umask(mask);
        fchmod(fd, 0666 & ~mask);
        close(fd);
        out_.open(temp_, std::ios::binary | std::ios::trunc);
        if (!out_) {
            std::remove(temp_.c_str());
            throw std::runtime_error("cannot open '" + path_ + "' for writing");
        }
    }
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile() {
        if (committed_) return;
        out_.close();
        std::remove(temp_.c_str());
    }

    /// The stream to write the contents to.
    std::ostream& stream() { return out_; }
    /// The temporary file's path, for a program that writes the file itself
    /// (e.g. gnuplot's output): write there, then commit().
    const std::string& temp_path() const { return temp_; }
    /// The final path.
    const std::string& path() const { return path_; }

    /// Flushes and closes the temporary file and renames it onto path().
    /// Throws std::runtime_error "cannot write '<path>': <reason>" when a
    /// write or the rename failed (the temporary file is then removed).
    void commit() {
        out_.close();
        if (out_.fail()) throw std::runtime_error("cannot write '" + path_ + "' (disk full?)");
        if (std::rename(temp_.c_str(), path_.c_str()) != 0)
            throw std::runtime_error("cannot write '" + path_ + "': " + std::strerror(errno));
        committed_ = true;
    }

private:
    std::string path_, temp_;
    std::ofstream out_;
    bool committed_ = false;
};

}  // namespace tool_cli
