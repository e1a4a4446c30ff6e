// accel_mpi under mpirun: `accel-mpi-tests CASE`, every rank runs CASE and
// the job's exit status is 0 only when every rank's checks held. The cases
// need the environment their CTest entry gives them (tests/mpi/CMakeLists.txt).
#include <accel/accel.hpp>
#include <accel/mpi.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

int g_failures = 0;
int g_rank = 0;

#define EXPECT(cond)                                                                                   \
    do {                                                                                               \
        if (!(cond)) {                                                                                 \
            std::fprintf(stderr, "rank %d: %s:%d: expected %s\n", g_rank, __FILE__, __LINE__, #cond); \
            ++g_failures;                                                                              \
        }                                                                                              \
    } while (0)

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Lists deal round-robin by rank; blanks and empty items are ignored.
void dealing() {
    using accel::mpi::rank_selector;
    EXPECT(rank_selector("host, opencl ,,kokkos", 0) == "host");
    EXPECT(rank_selector("host, opencl ,,kokkos", 1) == "opencl");
    EXPECT(rank_selector("host, opencl ,,kokkos", 2) == "kokkos");
    EXPECT(rank_selector("host, opencl ,,kokkos", 4) == "opencl");
    EXPECT(rank_selector("cuda:local", 7) == "cuda:local");
    bool threw = false;
    try {
        rank_selector(" , ", 0);
    } catch (const accel::InvalidArgument&) {
        threw = true;
    }
    EXPECT(threw);
}

// Gather, all(), sum_floats and sum against values computed here.
void collectives(int ranks) {
    const std::string mine(static_cast<std::size_t>(g_rank) * 3 + 1, static_cast<char>('a' + g_rank));
    const auto all = accel::mpi::gather(mine);
    if (g_rank == 0) {
        EXPECT(static_cast<int>(all.size()) == ranks);
        for (int r = 0; r < ranks && r < static_cast<int>(all.size()); ++r)
            EXPECT(all[r] == std::string(static_cast<std::size_t>(r) * 3 + 1, static_cast<char>('a' + r)));
    } else {
        EXPECT(all.empty());
    }
    EXPECT(accel::mpi::all(true));
    EXPECT(!accel::mpi::all(g_rank != ranks - 1));
    std::vector<float> v(1000);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(g_rank + 1) * static_cast<float>(i);
    accel::mpi::sum_floats(v.data(), v.size());
    const float factor = static_cast<float>(ranks * (ranks + 1) / 2);  // 1 + 2 + ... + ranks
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT(v[i] == factor * static_cast<float>(i));
    EXPECT(accel::mpi::sum(0.5 * (g_rank + 1)) == 0.5 * factor);
}

// The watchdog's gather with every rank healthy: rank 0 gets each rank's
// record and identity in rank order, nobody is lost, and share() hands rank
// 0's verdict to every rank. Rank r sleeps r × 300 ms before gathering, so
// rank 0 waits for ranks that are alive and making progress. A bad
// ACCEL_RANK_TIMEOUT is refused naming the variable.
void watchdog(int ranks) {
    EXPECT(accel::mpi::rank_timeout_seconds() == 300);
    setenv("ACCEL_RANK_TIMEOUT", "0", 1);
    std::string error;
    try {
        (void)accel::mpi::rank_timeout_seconds();
    } catch (const accel::InvalidArgument& e) {
        error = e.what();
    }
    EXPECT(error.find("ACCEL_RANK_TIMEOUT") != std::string::npos && error.find("1..86400") != std::string::npos);
    unsetenv("ACCEL_RANK_TIMEOUT");

    accel::mpi::Watchdog watch("identity " + std::to_string(g_rank), 5);
    for (int i = 0; i < g_rank * 3; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        watch.progress();
    }
    const std::string mine(static_cast<std::size_t>(g_rank) * 5000 + 3, static_cast<char>('a' + g_rank));
    const auto g = watch.gather(mine);
    if (g_rank == 0) {
        EXPECT(static_cast<int>(g.records.size()) == ranks && static_cast<int>(g.fates.size()) == ranks);
        EXPECT(!g.lost_any());
        for (int r = 0; r < ranks && r < static_cast<int>(g.records.size()); ++r) {
            EXPECT(g.records[r] == std::string(static_cast<std::size_t>(r) * 5000 + 3, static_cast<char>('a' + r)));
            EXPECT(g.identities[r] == "identity " + std::to_string(r));
            EXPECT(g.fates[r] == accel::mpi::RankFate::delivered);
        }
    } else {
        EXPECT(g.records.empty());
    }
    EXPECT(watch.share(g_rank == 0 ? 42 : 0) == 42);
    EXPECT(std::string(accel::mpi::fate_name(accel::mpi::RankFate::timeout)) == "timeout");
    EXPECT(std::string(accel::mpi::fate_name(accel::mpi::RankFate::died)) == "died");
}

// cuda:local on a node with two (emulated) GPUs and two ranks: rank r opens
// GPU r, each rank a different UUID: never every rank on GPU 0.
void one_gpu_per_rank(int ranks) {
    accel::mpi::Placement p;
    const auto d = accel::mpi::open_local_device("cuda:local", &p);
    EXPECT(p.node_ranks == ranks);
    EXPECT(p.backend_ranks == ranks);
    EXPECT(p.selector == "cuda:" + std::to_string(p.node_rank));
    EXPECT(d->selector() == p.selector);
    EXPECT(!d->info().uuid.empty());
    EXPECT(!p.shares_device);
    const auto uuids = accel::mpi::gather(d->info().uuid);
    if (g_rank == 0) EXPECT(std::set<std::string>(uuids.begin(), uuids.end()).size() == uuids.size());
}

// More ranks on a node than devices: refused on every rank, naming the counts
// and both remedies, unless ACCEL_OVERSUBSCRIBE=1 (then indices wrap).
void too_many_ranks(int ranks, bool oversubscribe) {
    std::string error;
    accel::mpi::Placement p;
    try {
        p = accel::mpi::resolve("cuda:local");
    } catch (const accel::BackendUnavailable& e) {
        error = e.what();
    }
    if (oversubscribe) {
        EXPECT(error.empty());
        EXPECT(p.shares_device);
        EXPECT(p.selector == "cuda:" + std::to_string(p.node_rank % 2));
    } else {
        if (!contains(error, std::to_string(ranks) + " ranks on node") || !contains(error, "2 device(s)") ||
            !contains(error, "ACCEL_OVERSUBSCRIBE=1") || !contains(error, "--map-by ppr:2:node"))
            std::fprintf(stderr, "rank %d: unexpected message: '%s'\n", g_rank, error.c_str());
        EXPECT(contains(error, std::to_string(ranks) + " ranks on node"));
        EXPECT(contains(error, "2 device(s)"));
        EXPECT(contains(error, "ACCEL_OVERSUBSCRIBE=1"));
        EXPECT(contains(error, "--map-by ppr:2:node"));
    }
}

// Ranks on different backends, each :local: every backend counts its own ranks.
void mixed_backends() {
    accel::mpi::Placement p;
    const auto d = accel::mpi::open_local_device("host:local,kokkos:local,host:local", &p);
    const std::string want = g_rank % 3 == 1 ? "kokkos:0" : "host:0";
    EXPECT(p.selector == want);
    // A Kokkos device's selector names its execution space (kokkos:serial:0).
    EXPECT(d->selector() == (g_rank % 3 == 1 ? d->info().stable_selector : want));
    EXPECT(accel::open_device(p.selector).get() == d.get());
    EXPECT(p.backend_ranks == (g_rank % 3 == 1 ? 1 : 2));  // two host ranks share host:0 (oversubscribed)
    EXPECT(p.shares_device == (g_rank % 3 != 1));
    EXPECT(d->info().host == accel::host_name());
}

}  // namespace

int main(int argc, char** argv) {
    accel::mpi::Session session(&argc, &argv, MPI_THREAD_MULTIPLE);  // MULTIPLE: the watchdog case
    g_rank = session.rank();
    const std::string which = argc > 1 ? argv[1] : "";
    try {
        if (which == "collectives") dealing(), collectives(session.size());
        else if (which == "one-gpu-per-rank") one_gpu_per_rank(session.size());
        else if (which == "too-many-ranks") too_many_ranks(session.size(), accel::mpi::oversubscribe_allowed());
        else if (which == "mixed-backends") mixed_backends();
        else if (which == "watchdog") watchdog(session.size());
        else {
            std::fprintf(stderr, "unknown case '%s'; cases: collectives, one-gpu-per-rank, too-many-ranks, "
                                 "mixed-backends, watchdog\n", which.c_str());
            return 2;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s threw: %s\n", g_rank, which.c_str(), e.what());
        ++g_failures;
    }
    const bool ok = accel::mpi::all(g_failures == 0);
    if (g_rank == 0) std::printf("%s: %s on %d ranks\n", which.c_str(), ok ? "passed" : "FAILED", session.size());
    return ok ? 0 : 1;
}
