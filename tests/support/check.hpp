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

/// The entry of a per-backend suite: prints the device under test and the
/// seed, then runs doctest; returns 77 (CTest's SKIPPED) with the reason when
/// the backend named by ACCEL_BACKEND is unavailable.
int run_suite(int argc, char** argv, const char* suite);

/// The device under test (ACCEL_BACKEND).
const std::shared_ptr<accel::Device>& device();

/// The paths the device under test offers for op (native always).
std::vector<accel::ops::PathChoice> paths(accel::Op op);

/// "native" / "vendor".
const char* name(accel::ops::PathChoice p);

}  // namespace accel_test
