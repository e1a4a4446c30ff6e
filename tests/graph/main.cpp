// The graph suite's entry: runs on the backend named by ACCEL_BACKEND; exit
// 77 (reported SKIPPED by CTest) when it is unavailable.
#include "support/check.hpp"

int main(int argc, char** argv) { return accel_test::run_suite(argc, argv, "graph", true); }
