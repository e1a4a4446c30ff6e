// What accel's tools and examples share besides their command lines: the
// usage error and output files written whole or not at all. Header-only, and
// free of CLI11 (tool_cli.hpp), so that the files which do not build a
// command line compile quickly.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tool_cli {

/// printf-style formatting into a std::string of any length (vsnprintf
/// twice: the size, then the text). Thread-safe.
__attribute__((format(printf, 1, 2))) inline std::string format(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    va_list again;
    va_copy(again, ap);
    const int n = std::vsnprintf(nullptr, 0, fmt, ap);
    va_end(ap);
    std::string text;
    if (n > 0) {
        text.resize(static_cast<std::size_t>(n) + 1);
        std::vsnprintf(text.data(), text.size(), fmt, again);
        text.resize(static_cast<std::size_t>(n));
    }
    va_end(again);
    return text;
}

/// A malformed command line found after CLI11 parsed it (e.g. a value that
/// contradicts another option). Print it with usage_error(): exit status 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

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

/// An output file that an option may name ("" = none), for a command that
/// runs first and writes after: constructed before the run, so a bad path
/// fails at once (AtomicFile's error); commit() puts it in place once the
/// run is complete and says "wrote <what> to <path>" on stderr. Unnamed,
/// stream() is the fallback (std::cout by default) and commit() does nothing.
/// Not thread-safe.
class OptionalOutput {
public:
    explicit OptionalOutput(const std::string& path) {
        if (!path.empty()) file_.emplace(path);
    }
    /// Whether the option named a file.
    explicit operator bool() const { return file_.has_value(); }
    /// The file's stream, or `fallback` when none was named.
    std::ostream& stream(std::ostream& fallback = std::cout) { return file_ ? file_->stream() : fallback; }
    /// AtomicFile::commit (its errors), then the note on stderr; a no-op when unnamed.
    void commit(const std::string& what) {
        if (!file_) return;
        file_->commit();
        std::cerr << "wrote " << what << " to " << file_->path() << "\n";
    }

private:
    std::optional<AtomicFile> file_;
};

}  // namespace tool_cli
