// doctest's implementation, compiled once into accel-doctest for every test
// program (each defines its own main(), or links support/doctest_main.cpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "checked_nothing.hpp"

#include <iomanip>

namespace doctest {
namespace {

// doctest's console output with the suites' count of test cases: a case
// that ran but checked nothing (no assertion: e.g. its op is unsupported on
// the device, and it said so) is "skipped", as the conformance verdict
// counts it, not "passed"; cases the filters left out are "not selected".
// Registered as "accel-console" (the conformance suite's default).
// ConsoleReporter is doctest's own, visible in this translation unit only.
struct SuiteConsoleReporter : ConsoleReporter {
    using ConsoleReporter::ConsoleReporter;
    unsigned checked_nothing = 0;

    void test_case_end(const CurrentTestCaseStats& st) override {
        ConsoleReporter::test_case_end(st);
        checked_nothing += accel_test::checked_nothing(st);
    }

    void test_run_end(const TestRunStats& p) override {
        if (opt.minimal && p.numTestCasesFailed == 0) return;
        separator_to_stream();
        const unsigned ran = p.numTestCasesPassingFilters, failed = p.numTestCasesFailed;
        s << Color::Cyan << "[doctest] " << Color::None << "test cases: " << ran << " | "
          << ran - failed - checked_nothing << " passed | " << failed << " failed | " << checked_nothing
          << " skipped (checked nothing here) | " << p.numTestCases - ran << " not selected\n";
        s << Color::Cyan << "[doctest] " << Color::None << "assertions: " << p.numAsserts << " | "
          << p.numAsserts - p.numAssertsFailed << " passed | " << p.numAssertsFailed << " failed |\n";
        s << Color::Cyan << "[doctest] " << Color::None << "Status: " << (failed > 0 ? Color::Red : Color::Green)
          << (failed > 0 ? "FAILURE!" : "SUCCESS!") << Color::None << std::endl;
    }
};
REGISTER_REPORTER("accel-console", 0, SuiteConsoleReporter);

}  // namespace
}  // namespace doctest
