// Test support: fresh random data, poisoned outputs, comparison with the oracle.
#pragma once

#include <accel/accel.hpp>
#include <accel/reference.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace accel_test {

/// NMSE thresholds against the float64 oracle (normalized mean squared error,
/// reference::nmse), by the kind of float32 arithmetic an op does:
///  - exact: one float32 rounding per element (add, relu, relu_backward)
///    gives relative error ≤ 2^-24, so NMSE ≤ ~4e-15; 1e-12 allows nothing else.
///  - transcendental: exp/log1p in float32 are accurate to a few ulp (CUDA's
///    expf 2 ulp), relative error ~1e-6, NMSE ~1e-12; an unstable formula
///    (exp overflow → Inf/NaN, cancellation at large |x|) fails by orders of
///    magnitude. Also adam_step: a dozen float32 operations, each ≤ 1 ulp.
///  - product: a K-term float32 dot product (matmul, dense) has relative error
///    ~sqrt(K)·2^-24 for random data (≈2e-6 at K = 2048), NMSE ~1e-11; 1e-8
///    leaves a factor ~30 for blocked summation orders yet fails any wrong
///    element. CUDA's opt-in TF32 mode would need 1e-5 and is off in tests.
constexpr double kNmseExact = 1e-12;
constexpr double kNmseTranscendental = 1e-10;
constexpr double kNmseProduct = 1e-8;

/// The run's seed: ACCEL_TEST_SEED, else drawn once from std::random_device.
std::uint64_t seed();

/// A generator seeded from seed() and `salt` (each test its own stream).
std::mt19937_64 rng(std::uint64_t salt);

/// n values uniform in [lo, hi).
std::vector<float> uniform(std::mt19937_64& g, std::size_t n, float lo = -1.0f, float hi = 1.0f);

/// A tensor whose every element is NaN, so that an element a kernel fails to
/// write makes the comparison fail.
accel::Tensor poisoned(const std::shared_ptr<accel::Device>& d, accel::Shape s);

/// Asserts got matches ref: finite, NMSE ≤ threshold. Prints the seed, the
/// NMSE and the largest error when it fails.
void expect_close(const std::vector<float>& got, const std::vector<double>& ref, double threshold,
                  const std::string& what);

/// Whether a case of `work` elements (or multiply-adds) runs: always, unless
/// ACCEL_TEST_MAX_WORK caps it. Kernel checkers such as Oclgrind simulate
/// every work-item, so their runs keep to the small cases. A case left out is
/// reported (doctest MESSAGE naming `what` and its work), never passed
/// silently. An ACCEL_TEST_MAX_WORK that is not a positive integer fails the
/// calling test with a message saying so.
bool runs_at_size(std::size_t work, const std::string& what);

/// `preferred` when it is within ACCEL_TEST_MAX_WORK, else `small` (the case
/// still runs, at the smaller size, and says so in a doctest MESSAGE).
std::size_t size_within_cap(std::size_t preferred, std::size_t small, const std::string& what);

/// The elements of `cases` whose work(case) passes runs_at_size.
template <class Case, class Work>
std::vector<Case> within_work_cap(const std::vector<Case>& cases, Work work, const std::string& what) {
    std::vector<Case> kept;
    for (const Case& c : cases)
        if (runs_at_size(work(c), what)) kept.push_back(c);
    return kept;
}

/// Sizes (elements) of `sizes` that pass runs_at_size.
inline std::vector<std::size_t> within_work_cap(const std::vector<std::size_t>& sizes, const std::string& what) {
    return within_work_cap(sizes, [](std::size_t n) { return n; }, what);
}

/// The entry of a per-backend suite: prints the device under test and the
/// seed, then runs doctest; returns 77 (CTest's SKIPPED) with the reason when
/// the backend named by ACCEL_BACKEND is unavailable. With hold_device the
/// device stays open for the whole run (device()); without, it is released
/// before the tests start, so that tests can open and release it themselves.
int run_suite(int argc, char** argv, const char* suite, bool hold_device = true);

/// The device under test (ACCEL_BACKEND), opened once and held until exit.
const std::shared_ptr<accel::Device>& device();

/// The paths the device under test offers for op (native always).
std::vector<accel::ops::PathChoice> paths(accel::Op op);

/// "native" / "vendor".
const char* name(accel::ops::PathChoice p);

}  // namespace accel_test
