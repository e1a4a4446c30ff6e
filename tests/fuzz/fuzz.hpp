// Shared by the fuzz targets: invariants that abort (a crash to libFuzzer,
// which keeps the input) instead of returning.
#pragma once

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

/// An error message: one line and short, whatever the input was.
#define ACCEL_FUZZ_CHECK_MESSAGE(what)                                                            \
    do {                                                                                          \
        const std::string m_ = (what);                                                            \
        ACCEL_FUZZ_CHECK(!m_.empty() && m_.size() < 1024 && m_.find('\n') == std::string::npos);  \
    } while (0)
