// Shared by the fuzz targets: invariants that abort (a crash to libFuzzer,
// which keeps the input) instead of returning.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

/// Aborts, naming the condition and its place, when `cond` is false.
#define ACCEL_FUZZ_CHECK(cond)                                                                    \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);     \
            std::abort();                                                                         \
        }                                                                                         \
    } while (0)

/// An error message of at most `lines` non-empty lines, short, whatever the
/// input was (the input is echoed escaped, so it cannot add a line).
#define ACCEL_FUZZ_CHECK_MESSAGE_LINES(what, lines)                                               \
    do {                                                                                          \
        const std::string m_ = (what);                                                            \
        ACCEL_FUZZ_CHECK(!m_.empty() && m_.size() < 1024 && m_.back() != '\n');                   \
        ACCEL_FUZZ_CHECK(m_.find("\n\n") == std::string::npos && m_.front() != '\n');             \
        ACCEL_FUZZ_CHECK(std::count(m_.begin(), m_.end(), '\n') < (lines));                       \
    } while (0)

/// An error message: one line and short, whatever the input was.
#define ACCEL_FUZZ_CHECK_MESSAGE(what) ACCEL_FUZZ_CHECK_MESSAGE_LINES(what, 1)
