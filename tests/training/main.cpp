// The training test's entry: run against the backend named by ACCEL_BACKEND;
// exit 77 (reported SKIPPED by CTest) when it is unavailable.
#define DOCTEST_CONFIG_IMPLEMENT
#include "support/check.hpp"

#include <iostream>

int main(int argc, char** argv) {
    try {
        const auto& d = accel_test::device();
        std::cout << "training test on " << d->selector() << " (" << d->info().name << "), seed " << accel_test::seed()
                  << "\n";
    } catch (const accel::BackendUnavailable& e) {
        std::cout << "SKIPPED: " << e.what() << "\n";
        return 77;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
