// The suites' one rule for a test case that ran but checked nothing.
#pragma once

#include <doctest/doctest.h>

namespace accel_test {

/// Whether a finished test case passed without a single assertion: it
/// checked nothing on this device (its op is unsupported there, or its size
/// is past ACCEL_TEST_MAX_WORK, and it said so in a message). The
/// conformance verdict and its console summary count such a case as
/// skipped, never as passed.
inline bool checked_nothing(const doctest::CurrentTestCaseStats& s) {
    return s.testCaseSuccess && s.numAssertsCurrentTest == 0;
}

}  // namespace accel_test
