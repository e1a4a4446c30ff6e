// The conformance suite's entry: run against the backend named by
// ACCEL_BACKEND; exit 77 (reported SKIPPED by CTest) when it is unavailable.
//
// Under mpirun/srun (when built with MPI; see accel/mpi.hpp) every rank runs
// the suite on its own device: ACCEL_BACKEND is one selector or a comma list
// dealt to ranks by rank, BACKEND:local binds each rank to its own device.
// Rank 0 then prints a pass/fail table per node and rank, and every rank
// exits with the job's verdict: 0 when every rank passed; 1 when any rank
// failed or could not open its device while others could (a certification
// run must not pass with a node missing), each such rank named with its host
// and device; 77 when no rank found its backend. A rank that starts no test
// case for ACCEL_RANK_TIMEOUT seconds (default 300), or whose process dies,
// is marked `timeout` / `died` (accel::mpi::Watchdog); rank 0 prints the
// others' verdicts and then ends the job with status 1.
//
// The command line (--backends, --cases, --ops, --dtypes, --seed, --json,
// --case-file; doctest's options after --) is driver.cpp's; --case-file's
// cases are tools/common/case_file.cpp's and case_run.cpp's.
#include "case_run.hpp"
#include "driver.hpp"
#include "support/check.hpp"
#include "support/silent_reporter.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#ifdef ACCEL_HAVE_MPI
#include <accel/mpi.hpp>
#include <nlohmann/json.hpp>

#include <map>

namespace {

// The watchdog of this rank's run, for the progress listener below.
accel::mpi::Watchdog* g_watch = nullptr;

// A doctest listener that tells the watchdog of every test case and subcase
// started: a rank is judged hung only when one of them runs past the rank
// timeout.
struct RankProgress : accel_test::SilentReporter {
    using SilentReporter::SilentReporter;
    void tick() {
        if (g_watch) g_watch->progress();
    }
    void test_run_start() override { tick(); }
    void test_run_end(const doctest::TestRunStats&) override { tick(); }
    void test_case_start(const doctest::TestCaseData&) override { tick(); }
    void test_case_reenter(const doctest::TestCaseData&) override { tick(); }
    void test_case_end(const doctest::CurrentTestCaseStats&) override { tick(); }
    void subcase_start(const doctest::SubcaseSignature&) override { tick(); }
};
REGISTER_LISTENER("rank-progress", 1, RankProgress);

// This rank's place (collective): its record with host, selector and, when
// resolving failed, status "unavailable" or "error" and the reason; status
// "" when it can go on.
nlohmann::json place_rank() {
    nlohmann::json me{{"host", accel::host_name()}, {"requested", ""}, {"selector", ""}, {"device", ""},
                      {"uuid", ""}, {"pci_bus_id", ""}, {"status", ""}, {"reason", ""}};
    try {
        // Collective: every rank calls it, whatever its own selector.
        const accel::mpi::Placement where = accel::mpi::resolve(accel::selector_from_env());
        me["requested"] = where.requested;
        me["selector"] = where.selector;
    } catch (const accel::BackendUnavailable& e) {
        me["status"] = "unavailable";
        me["reason"] = e.what();
    } catch (const std::exception& e) {
        me["status"] = "error";
        me["reason"] = e.what();
    }
    return me;
}

// Opens this rank's device and runs the suite on it; sets `me`'s device,
// status ("pass", "FAIL" (tests failed), "unavailable" (the backend cannot be
// used there) or "error" (opening the device failed)) and reason.
void run_rank(nlohmann::json& me, int argc, char** argv) {
    try {
        setenv("ACCEL_BACKEND", me["selector"].get<std::string>().c_str(), 1);  // the suite opens this rank's device
        const auto& d = accel_test::device();
        me["selector"] = d->selector();
        me["device"] = d->info().name;
        me["uuid"] = d->info().uuid;
        me["pci_bus_id"] = d->info().pci_bus_id;
    } catch (const accel::BackendUnavailable& e) {
        me["status"] = "unavailable";
        me["reason"] = e.what();
        return;
    } catch (const std::exception& e) {
        me["status"] = "error";
        me["reason"] = std::string("opening the device failed: ") + e.what();
        return;
    }
    const int rc = accel_test::run_suite(argc, argv, "conformance");
    me["status"] = rc == 0 ? "pass" : rc == 77 ? "unavailable" : "FAIL";
    if (rc != 0 && rc != 77) me["reason"] = "test cases failed (doctest exit status " + std::to_string(rc) + "; see this rank's output above)";
}

int fleet_main(int argc, char** argv) {
    // MPI_THREAD_MULTIPLE: the watchdog's heartbeat thread.
    accel::mpi::Session session(&argc, &argv, MPI_THREAD_MULTIPLE);
    int timeout = 0;
    try {
        timeout = accel::mpi::rank_timeout_seconds();  // every rank reads the same environment: all fail alike
    } catch (const accel::InvalidArgument& e) {
        std::cout << "ERROR: " << e.what() << "\n";
        return 1;
    }
    nlohmann::json me = place_rank();
    me["rank"] = session.rank();
    accel::mpi::Watchdog watch(
        nlohmann::json{{"host", me["host"]}, {"requested", me["requested"]}, {"selector", me["selector"]}}.dump(),
        timeout);
    g_watch = &watch;
    if (me["status"] == "") run_rank(me, argc, argv);
    g_watch = nullptr;
    std::cout.flush();
    const auto gathered = watch.gather(me.dump());
    int verdict = 0;
    if (session.rank() == 0) {
        int passed = 0, unavailable = 0;
        std::map<std::string, std::pair<int, int>> per_node;  // host -> passed, ranks
        std::vector<nlohmann::json> rows;
        for (std::size_t rank = 0; rank < gathered.records.size(); ++rank) {
            if (gathered.fates[rank] == accel::mpi::RankFate::delivered) {
                rows.push_back(nlohmann::json::parse(gathered.records[rank]));
            } else {
                rows.push_back(nlohmann::json::parse(gathered.identities[rank]));
                auto& r = rows.back();
                r["rank"] = static_cast<int>(rank);
                r["device"] = "";
                r["uuid"] = "";
                r["pci_bus_id"] = "";
                r["status"] = accel::mpi::fate_name(gathered.fates[rank]);
                r["reason"] = gathered.reasons[rank] + "; its verdict is lost";
            }
            const auto& r = rows.back();
            const std::string status = r["status"];
            passed += status == "pass";
            unavailable += status == "unavailable";
            auto& node = per_node[r["host"].get<std::string>()];
            node.first += status == "pass";
            node.second += 1;
        }
        const int ranks = static_cast<int>(rows.size());
        verdict = passed == ranks ? 0 : unavailable == ranks ? 77 : 1;
        std::printf("\nconformance on %d rank(s), %zu node(s):\n", ranks, per_node.size());
        std::printf("%-20s %5s  %-14s %-34s %-36s %s\n", "host", "rank", "selector", "device", "UUID / PCI bus id",
                    "result");
        for (const auto& r : rows) {
            std::string id = r["uuid"].get<std::string>();
            if (id.empty()) id = r["pci_bus_id"].get<std::string>();
            std::printf("%-20.20s %5d  %-14.14s %-34.34s %-36.36s %s\n", r["host"].get<std::string>().c_str(),
                        r["rank"].get<int>(), r["selector"].get<std::string>().c_str(),
                        r["device"].get<std::string>().c_str(), id.empty() ? "-" : id.c_str(),
                        r["status"].get<std::string>().c_str());
        }
        for (const auto& [host, counts] : per_node)
            std::printf("node %s: %d of %d rank(s) passed\n", host.c_str(), counts.first, counts.second);
        for (const auto& r : rows) {
            const std::string status = r["status"];
            if (status == "pass") continue;
            const std::string device = r["device"].get<std::string>();
            const std::string label = status == "unavailable" ? "UNAVAILABLE"
                                      : status == "timeout"   ? "TIMEOUT"
                                      : status == "died"      ? "DIED"
                                                              : "FAILED";
            std::printf("%s: rank %d on host %s, device %s%s: %s\n", label.c_str(), r["rank"].get<int>(),
                        r["host"].get<std::string>().c_str(),
                        r["selector"].get<std::string>().empty() ? r.value("requested", std::string("?")).c_str()
                                                                 : r["selector"].get<std::string>().c_str(),
                        device.empty() ? "" : (" (" + device + ")").c_str(), r["reason"].get<std::string>().c_str());
        }
        std::printf("conformance verdict: %s\n",
                    verdict == 0 ? "every rank passed" : verdict == 77 ? "no rank found its backend (skipped)"
                                                                       : "FAILED (see above)");
        std::fflush(stdout);
    }
    verdict = watch.share(verdict);
    watch.end_job_if_lost(verdict, "accel-conformance");
    return verdict;
}

}  // namespace
#endif

int main(int argc, char** argv) {
    conformance::Command cmd;
    if (const auto rc = conformance::parse_command_line(argc, argv, cmd)) return *rc;
    if (const auto rc = conformance::use_case_file(cmd)) return *rc;  // every rank reads it: a bad file stops all
#ifdef ACCEL_HAVE_MPI
    bool fleet = false;
    try {
        fleet = accel::mpi::launched_by_mpi();
    } catch (const accel::InvalidArgument& e) {
        std::cout << "ERROR: " << e.what() << "\n";
        return 1;
    }
    if (fleet) {
        if (!cmd.backends.empty() || !cmd.json.empty())
            return conformance::usage_error(std::string(cmd.backends.empty() ? "--json" : "--backends") +
                                            " does not apply under mpirun/srun: every rank runs the suite on its "
                                            "own device, named by ACCEL_BACKEND (one selector, a comma list dealt "
                                            "to ranks, or BACKEND:local), and rank 0 prints the table");
        std::vector<std::string> args;
        try {
            args = conformance::prepare_suite(cmd, argv[0]);
        } catch (const std::exception& e) {
            return conformance::usage_error(e.what());
        }
        std::vector<char*> doctest_argv;
        for (auto& a : args) doctest_argv.push_back(a.data());
        doctest_argv.push_back(nullptr);
        return fleet_main(static_cast<int>(args.size()), doctest_argv.data());
    }
#else
    if (const int size = accel::launcher_rank_count(); size > 1) {
        std::cerr << "accel-conformance: started as one of " << size << " MPI ranks, but built without MPI: "
                  << "each rank would test alone and no rank would see the others' verdicts. Rebuild with MPI "
                  << "(libopenmpi-dev)\n";
        return 2;
    }
#endif
    if (!cmd.backends.empty()) return conformance::run_devices(cmd, argv[0]);
    return conformance::run_here(cmd, argv[0]);
}
