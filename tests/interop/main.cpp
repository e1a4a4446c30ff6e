// The interop suite's entry: a program's own kernels (accel::UserKernel) and
// the runtime objects under a device (accel/interop/*.hpp), on the backend
// named by ACCEL_BACKEND; exit 77 (reported SKIPPED by CTest) when it is
// unavailable. Cases for another backend's runtime say "skipped" and check
// that the device refuses that runtime's queries.
#include "support/check.hpp"

int main(int argc, char** argv) { return accel_test::run_suite(argc, argv, "interop", true); }
