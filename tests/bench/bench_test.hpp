// Helpers of the accel-bench tests (test_bench.cpp, test_bench_output.cpp):
// running accel-bench from the test's working directory and reading what it
// wrote. Single-threaded test code: the helpers write fixed file names there.
#pragma once

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace bench_test {

const std::string kBench = ACCEL_BENCH_EXE;
/// The quick host run the bench.run test writes (CTest fixture bench_json).
const std::string kResults = "x.json";

/// The whole of a text file; "" when it cannot be read.
inline std::string read_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

struct Outcome {
    int code;            ///< exit status; -1 when killed by a signal
    std::string output;  ///< stdout and stderr together
};

/// Runs the shell command `prefix` + `command` (e.g. an `env ...` prefix and
/// a quoted program with its arguments), capturing its stdout and stderr.
inline Outcome run_env(const std::string& prefix, const std::string& command) {
    const std::string log = "bench-output.txt";
    const int status = std::system((prefix + command + " > " + log + " 2>&1").c_str());
    const std::string text = read_text(log);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    INFO(command << " exited " << code << ":\n" << text);
    return {code, text};
}

/// Runs accel-bench with `args` (shell words) after the shell words `prefix`
/// (such as "env -u COLUMNS "), capturing its output.
inline Outcome bench_env(const std::string& prefix, const std::string& args) {
    return run_env(prefix, "'" + kBench + "' " + args);
}

/// Runs accel-bench with `args` (shell words), capturing its output.
inline Outcome bench(const std::string& args) { return bench_env("", args); }

struct SplitOutcome {
    int code;            ///< exit status; -1 when killed by a signal
    std::string out;     ///< stdout
    std::string err;     ///< stderr
};

/// Runs accel-bench with `args`, stdout and stderr captured apart (each to
/// a file, so neither is a terminal).
inline SplitOutcome bench_split(const std::string& args) {
    const int status = std::system(("'" + kBench + "' " + args + " > bench-stdout.txt 2> bench-stderr.txt").c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text("bench-stdout.txt"), read_text("bench-stderr.txt")};
}

/// The JSON document at `path`; the test stops when it is missing.
inline nlohmann::json load(const std::string& path) {
    std::ifstream f(path);
    REQUIRE_MESSAGE(f.good(), path << " is missing; the bench.run test writes it");
    return nlohmann::json::parse(f);
}

/// Whether an executable `name` is on PATH.
inline bool on_path(const std::string& name) {
    std::stringstream dirs(std::getenv("PATH") ? std::getenv("PATH") : "");
    std::string dir;
    while (std::getline(dirs, dir, ':'))
        if (access((dir + "/" + name).c_str(), X_OK) == 0) return true;
    return false;
}

inline bool exists(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0;
}

/// Files in the working directory whose name starts with `prefix` (temporary files left behind).
inline int files_starting_with(const std::string& prefix) {
    int n = 0;
    if (DIR* d = opendir(".")) {
        while (const dirent* e = readdir(d)) n += std::string(e->d_name).rfind(prefix, 0) == 0;
        closedir(d);
    }
    return n;
}

}  // namespace bench_test
