// A doctest reporter that ignores every event: the base of the suites' own
// listeners and reporters, which override only the events they use.
#pragma once

#include <doctest/doctest.h>

namespace accel_test {

/// Every doctest::IReporter event, ignored. Derive, inherit the constructor
/// (`using SilentReporter::SilentReporter;`) and override what you need;
/// register the result with REGISTER_LISTENER or REGISTER_REPORTER.
/// Thread-safety: doctest calls a reporter from the thread running the tests.
struct SilentReporter : doctest::IReporter {
    explicit SilentReporter(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_start(const doctest::TestCaseData&) override {}
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats&) override {}
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace accel_test
