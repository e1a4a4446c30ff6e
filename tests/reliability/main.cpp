// The reliability suite's entry: threads sharing a device and device
// lifecycles on the backend named by ACCEL_BACKEND; exit 77 (reported SKIPPED
// by CTest) when it is unavailable. Unlike the conformance suite it holds no
// device between test cases: each case opens and releases its own.
#include "support/check.hpp"

int main(int argc, char** argv) { return accel_test::run_suite(argc, argv, "reliability", false); }
