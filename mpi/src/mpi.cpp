#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/mpi.hpp>
#include <accel/registry.hpp>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_Query_cuda_support
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace accel {
namespace mpi {
namespace {

const env::Declaration kMpiVariable{{"ACCEL_MPI", "1 (an MPI rank) or 0 (not one)",
                                     "whether the process is an MPI rank (default: detected from mpirun/srun's "
                                     "variables)",
                                     "accel_mpi"}};
const env::Declaration kOversubscribeVariable{{"ACCEL_OVERSUBSCRIBE", "1 (ranks may share a device) or 0 (they may not)",
                                               "under MPI, whether BACKEND:local lets more ranks of a node than "
                                               "devices share them (default 0)",
                                               "accel_mpi"}};
const env::Declaration kRankTimeoutVariable{
    {"ACCEL_RANK_TIMEOUT", "a whole number of seconds in 1..86400",
     "under MPI, how long a rank may make no progress (a row, a test case) before accel-bench and accel-conformance "
     "judge it hung and report without it (default 300)",
     "accel_mpi"}};

void check(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw std::runtime_error(std::string(call) + " failed: " + text);
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

bool launched_by_mpi() {
    if (const auto forced = env::read_flag("ACCEL_MPI")) return *forced;
    return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_SIZE");
}

bool oversubscribe_allowed() { return env::read_flag("ACCEL_OVERSUBSCRIBE").value_or(false); }

Session::Session(int* argc, char*** argv, int threads) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        int provided = 0;
        check(MPI_Init_thread(argc, argv, threads, &provided), "MPI_Init_thread");
        owns_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Session::~Session() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_ && !finalized) MPI_Finalize();
}

std::string rank_selector(const std::string& selectors, int rank) {
    std::vector<std::string> items;
    std::stringstream ss(selectors);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!trim(item).empty()) items.push_back(trim(item));
    if (items.empty())
        throw InvalidArgument("selector list '" + selectors +
                              "' names no device; expected one selector or a comma list such as host,opencl:local");
    return items[static_cast<std::size_t>(rank < 0 ? 0 : rank) % items.size()];
}

Placement resolve(const std::string& selectors, MPI_Comm comm) {
    Placement p;
    MPI_Comm_rank(comm, &p.rank);
    MPI_Comm_size(comm, &p.ranks);
    p.host = host_name();

    // Parse first, but defer errors until every collective step is done.
    std::string error;
    bool invalid = false;
    Selector sel;
    try {
        p.requested = rank_selector(selectors, p.rank);
        sel = parse_selector(p.requested);
    } catch (const InvalidArgument& e) {
        error = e.what();
        invalid = true;
    }
    p.selector = p.requested;
    const bool local = !invalid && sel.device == "local";
    std::vector<BackendStatus> all;
    std::string backend = sel.backend;
    if (local) {
        all = backend_statuses();
        if (backend == "auto") backend = auto_backend(all);
    }
    const auto& names = known_backends();
    const int color = local ? int(std::find(names.begin(), names.end(), backend) - names.begin()) : MPI_UNDEFINED;

    MPI_Comm node = MPI_COMM_NULL, same = MPI_COMM_NULL;
    check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, p.rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
    MPI_Comm_rank(node, &p.node_rank);
    MPI_Comm_size(node, &p.node_ranks);
    check(MPI_Comm_split(node, color, p.rank, &same), "MPI_Comm_split");
    if (same != MPI_COMM_NULL) {
        MPI_Comm_rank(same, &p.backend_rank);
        MPI_Comm_size(same, &p.backend_ranks);
        MPI_Comm_free(&same);
    }
    MPI_Comm_free(&node);

    const std::string who = "rank " + std::to_string(p.rank) + " on " + p.host;
    if (invalid) throw InvalidArgument(who + ": " + error);
    if (!local) return p;
    const auto st = std::find_if(all.begin(), all.end(), [&](const BackendStatus& s) { return s.name == backend; });
    if (st == all.end() || !st->availability.available)
        throw BackendUnavailable(who + ": selector '" + p.requested + "': backend '" + backend + "' cannot be used: " +
                                 (st == all.end() ? std::string("unknown") : st->availability.reason));
    const int devices = st->availability.device_count;
    if (p.backend_ranks > devices && !oversubscribe_allowed())
        throw BackendUnavailable(who + ": selector '" + p.requested + "': " + std::to_string(p.backend_ranks) +
                                 " ranks on node " + p.host + " use backend '" + backend + "', which has " +
                                 std::to_string(devices) + " device(s) there; start at most " +
                                 std::to_string(devices) + " such rank(s) per node (mpirun --map-by ppr:" +
                                 std::to_string(devices) + ":node, srun --ntasks-per-node=" + std::to_string(devices) +
                                 ") or set ACCEL_OVERSUBSCRIBE=1 to let ranks share devices");
    p.shares_device = p.backend_ranks > devices;
    p.selector = backend + ":" + std::to_string(p.backend_rank % devices);
    return p;
}

std::shared_ptr<Device> open_local_device(const std::string& selectors, Placement* placement, MPI_Comm comm) {
    Placement p = resolve(selectors, comm);
    if (placement) *placement = p;
    try {
        return open_device(p.selector);
    } catch (const BackendUnavailable& e) {
        throw BackendUnavailable("rank " + std::to_string(p.rank) + " on " + p.host + ": " + e.what());
    } catch (const InvalidArgument& e) {
        throw InvalidArgument("rank " + std::to_string(p.rank) + " on " + p.host + ": " + e.what());
    }
}

std::vector<std::string> gather(const std::string& mine, int root, MPI_Comm comm) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (mine.size() > static_cast<std::size_t>(INT_MAX)) throw std::runtime_error("gather: a record over 2 GiB");
    const int len = static_cast<int>(mine.size());
    std::vector<int> lens(rank == root ? size : 0), offsets(rank == root ? size : 0);
    check(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, root, comm), "MPI_Gather");
    std::string all;
    if (rank == root) {
        long long total = 0;
        for (int r = 0; r < size; ++r) {
            offsets[r] = static_cast<int>(total);
            total += lens[r];
        }
        if (total > INT_MAX) throw std::runtime_error("gather: records over 2 GiB in all");
        all.resize(static_cast<std::size_t>(total));
    }
    check(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.empty() ? nullptr : &all[0], lens.data(), offsets.data(),
                      MPI_CHAR, root, comm),
          "MPI_Gatherv");
    std::vector<std::string> out;
    for (int r = 0; rank == root && r < size; ++r) out.push_back(all.substr(offsets[r], lens[r]));
    return out;
}

bool all(bool mine, MPI_Comm comm) {
    int in = mine ? 1 : 0, out = 0;
    check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, comm), "MPI_Allreduce");
    return out != 0;
}

void sum_floats(float* data, std::size_t count, MPI_Comm comm) {
    // In chunks of at most INT_MAX elements (MPI counts are int).
    for (std::size_t done = 0; done < count;) {
        const int n = static_cast<int>(std::min<std::size_t>(count - done, INT_MAX));
        check(MPI_Allreduce(MPI_IN_PLACE, data + done, n, MPI_FLOAT, MPI_SUM, comm), "MPI_Allreduce");
        done += static_cast<std::size_t>(n);
    }
}

double sum(double mine, MPI_Comm comm) {
    double out = 0;
    check(MPI_Allreduce(&mine, &out, 1, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce");
    return out;
}

int rank_timeout_seconds() { return static_cast<int>(env::read_uint("ACCEL_RANK_TIMEOUT", 1, 86400).value_or(300)); }

const char* fate_name(RankFate f) noexcept {
    switch (f) {
        case RankFate::delivered: return "ok";
        case RankFate::timeout: return "timeout";
        case RankFate::died: return "died";
    }
    return "?";
}

std::string death_ends_job_hint() {
    if (!std::getenv("OMPI_COMM_WORLD_SIZE")) return "";
    const char* v = std::getenv("OMPI_MCA_orte_abort_on_non_zero_status");
    if (v && (std::strcmp(v, "0") == 0 || std::strcmp(v, "false") == 0)) return "";
    return "note: this mpirun ends every rank when one dies, before rank 0 can write the others' results; "
           "start it with --mca orte_abort_on_non_zero_status 0 to keep them";
}

void abort_job(int status, const std::string& why) {
    std::fprintf(stderr, "%s\n", why.c_str());
    std::fflush(stderr);
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);  // MPI_Abort does not return; this keeps [[noreturn]] true if it did
}

bool Watchdog::Gathered::lost_any() const {
    return std::any_of(fates.begin(), fates.end(), [](RankFate f) { return f != RankFate::delivered; });
}

namespace {
using WatchClock = std::chrono::steady_clock;
constexpr int kTagBeat = 1, kTagRecord = 2, kTagVerdict = 3;
constexpr auto kBeatInterval = std::chrono::milliseconds(250);
constexpr auto kPoll = std::chrono::milliseconds(10);
constexpr auto kFresh = std::chrono::seconds(1);  // a heartbeat this recent: the rank is alive
}  // namespace

struct Watchdog::Impl {
    MPI_Comm comm = MPI_COMM_NULL;  // the duplicate all watchdog traffic uses
    int rank = 0, size = 1;
    std::chrono::seconds timeout{300}, silence{10};
    std::vector<std::string> identities;  // rank 0: every rank's
    std::string root_identity;            // every rank: rank 0's
    std::vector<RankFate> fates;          // rank 0, after gather(): what became of each rank
    std::string program;                  // for end_job_if_lost's message
    std::atomic<std::uint64_t> progress{0};
    std::atomic<bool> gathering{false}, stop{false};

    // What this rank heard from each peer (rank 0: every rank; others: rank 0).
    struct Peer {
        WatchClock::time_point heard, moved;  // last heartbeat; last change of its progress count
        std::uint64_t progress = 0;
        bool gathering = false;
    };
    std::mutex mutex;  // guards peers
    std::vector<Peer> peers;
    std::thread thread;

    void beat_loop() {
        auto next = WatchClock::now();
        while (!stop.load()) {
            const auto now = WatchClock::now();
            if (now >= next) {
                const std::uint64_t beat[2] = {progress.load(), gathering.load() ? 1u : 0u};
                // Small messages go eagerly: MPI_Send returns without the receiver.
                for (int r = 0; r < size; ++r)
                    if (r != rank && (rank == 0 || r == 0))
                        MPI_Send(beat, 2, MPI_UINT64_T, r, kTagBeat, comm);
                next = now + kBeatInterval;
            }
            for (;;) {  // this thread is the only receiver of kTagBeat
                int flag = 0;
                MPI_Status st;
                if (MPI_Iprobe(MPI_ANY_SOURCE, kTagBeat, comm, &flag, &st) != MPI_SUCCESS || !flag) break;
                std::uint64_t beat[2] = {0, 0};
                if (MPI_Recv(beat, 2, MPI_UINT64_T, st.MPI_SOURCE, kTagBeat, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                    break;
                std::lock_guard<std::mutex> lock(mutex);
                Peer& p = peers[static_cast<std::size_t>(st.MPI_SOURCE)];
                const auto t = WatchClock::now();
                p.heard = t;
                if (beat[0] != p.progress || (beat[1] != 0) != p.gathering) p.moved = t;
                p.progress = beat[0];
                p.gathering = beat[1] != 0;
            }
            std::this_thread::sleep_for(kPoll);
        }
    }

    // Whether `r` is lost by now; `why` says how.
    bool lost(int r, RankFate& fate, std::string& why) {
        std::lock_guard<std::mutex> lock(mutex);
        const Peer& p = peers[static_cast<std::size_t>(r)];
        const auto now = WatchClock::now();
        auto secs = [](WatchClock::duration d) { return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()); };
        if (now - p.heard > silence) {
            fate = RankFate::died;
            why = "no heartbeat for " + secs(now - p.heard) + " s: its process ended";
            return true;
        }
        // Past the timeout, a rank is hung only while its heartbeats still
        // come; when they have just stopped, wait for the silence limit to
        // tell a death.
        if (!p.gathering && now - p.moved > timeout && now - p.heard <= kFresh) {
            fate = RankFate::timeout;
            why = "alive but no progress for " + secs(now - p.moved) + " s (the rank timeout, " +
                  std::to_string(timeout.count()) + " s): a device call that does not return";
            return true;
        }
        return false;
    }

    // A rank other than 0: wait for `done`, ending the job if rank 0 is lost.
    template <class Done>
    void wait_on_root(Done done, const char* step) {
        while (!done()) {
            RankFate fate;
            std::string why;
            if (lost(0, fate, why))
                abort_job(1, "rank " + std::to_string(rank) + ": rank 0 (" + root_identity + ") is lost at " +
                                 step + ": " + why + "; no rank is left to write the results, ending the job");
            std::this_thread::sleep_for(kPoll);
        }
    }
};

Watchdog::Watchdog(const std::string& identity, int timeout_seconds, MPI_Comm comm) : impl_(std::make_unique<Impl>()) {
    if (timeout_seconds < 1)
        throw InvalidArgument("rank timeout " + std::to_string(timeout_seconds) + " s; expected at least 1 s");
    int level = 0;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE)
        throw std::runtime_error("the rank watchdog needs MPI_THREAD_MULTIPLE; this MPI was initialized with thread "
                                 "level " + std::to_string(level));
    Impl& w = *impl_;
    check(MPI_Comm_dup(comm, &w.comm), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(w.comm, MPI_ERRORS_RETURN);  // a lost peer must not end this rank
    MPI_Comm_rank(w.comm, &w.rank);
    MPI_Comm_size(w.comm, &w.size);
    if (w.rank == 0)
        if (const std::string hint = death_ends_job_hint(); !hint.empty()) std::fprintf(stderr, "%s\n", hint.c_str());
    w.timeout = std::chrono::seconds(timeout_seconds);
    w.silence = std::chrono::seconds(std::clamp(timeout_seconds / 2, 2, 10));
    w.identities = accel::mpi::gather(identity, 0, w.comm);
    // Rank 0's identity to everyone, to name it if it is lost.
    int len = static_cast<int>(identity.size());
    check(MPI_Bcast(&len, 1, MPI_INT, 0, w.comm), "MPI_Bcast");
    w.root_identity = w.rank == 0 ? identity : std::string(static_cast<std::size_t>(len), '\0');
    check(MPI_Bcast(&w.root_identity[0], len, MPI_CHAR, 0, w.comm), "MPI_Bcast");
    const auto now = WatchClock::now();
    w.peers.assign(static_cast<std::size_t>(w.size), Impl::Peer{now, now, 0, false});
    w.thread = std::thread([&w] { w.beat_loop(); });
}

Watchdog::~Watchdog() {
    impl_->stop = true;
    if (impl_->thread.joinable()) impl_->thread.join();
    // No MPI_Comm_free: it is collective, and a lost rank would never join it.
}

void Watchdog::progress() noexcept { impl_->progress.fetch_add(1, std::memory_order_relaxed); }

Watchdog::Gathered Watchdog::gather(const std::string& mine) {
    Impl& w = *impl_;
    w.gathering = true;
    if (mine.size() > static_cast<std::size_t>(INT_MAX)) throw std::runtime_error("gather: a record over 2 GiB");
    Gathered g;
    if (w.rank != 0) {
        MPI_Request req;
        check(MPI_Isend(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, 0, kTagRecord, w.comm, &req), "MPI_Isend");
        w.wait_on_root(
            [&] {
                int done = 0;
                check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
                return done != 0;
            },
            "the gather");
        return g;
    }
    const auto n = static_cast<std::size_t>(w.size);
    g.records.assign(n, "");
    g.fates.assign(n, RankFate::delivered);
    g.reasons.assign(n, "");
    g.identities = w.identities;
    g.records[0] = mine;
    std::vector<bool> pending(n, true);
    pending[0] = false;
    std::size_t left = n - 1;
    while (left > 0) {
        bool any = false;
        for (;;) {  // every record that has arrived, before judging anyone
            int flag = 0;
            MPI_Status st;
            check(MPI_Iprobe(MPI_ANY_SOURCE, kTagRecord, w.comm, &flag, &st), "MPI_Iprobe");
            if (!flag) break;
            int count = 0;
            MPI_Get_count(&st, MPI_CHAR, &count);
            std::string rec(static_cast<std::size_t>(count), '\0');
            check(MPI_Recv(count ? &rec[0] : nullptr, count, MPI_CHAR, st.MPI_SOURCE, kTagRecord, w.comm,
                           MPI_STATUS_IGNORE),
                  "MPI_Recv");
            const auto r = static_cast<std::size_t>(st.MPI_SOURCE);
            if (pending[r]) {
                g.records[r] = std::move(rec);
                pending[r] = false;
                --left;
            }
            any = true;
        }
        for (std::size_t r = 1; r < n && !any; ++r)
            if (pending[r] && w.lost(static_cast<int>(r), g.fates[r], g.reasons[r])) {
                pending[r] = false;
                --left;
            }
        if (!any && left > 0) std::this_thread::sleep_for(kPoll);
    }
    w.fates = g.fates;
    return g;
}

int Watchdog::share(int verdict) {
    Impl& w = *impl_;
    if (w.rank == 0) {
        // Only to ranks that delivered: a lost one would never receive it.
        for (int r = 1; r < w.size; ++r)
            if (w.fates[static_cast<std::size_t>(r)] == RankFate::delivered)
                check(MPI_Send(&verdict, 1, MPI_INT, r, kTagVerdict, w.comm), "MPI_Send");
        return verdict;
    }
    int got = 0;
    w.wait_on_root(
        [&] {
            int flag = 0;
            check(MPI_Iprobe(0, kTagVerdict, w.comm, &flag, MPI_STATUS_IGNORE), "MPI_Iprobe");
            if (flag) check(MPI_Recv(&got, 1, MPI_INT, 0, kTagVerdict, w.comm, MPI_STATUS_IGNORE), "MPI_Recv");
            return flag != 0;
        },
        "the verdict");
    return got;
}

void Watchdog::end_job_if_lost(int status, const std::string& program) const {
    const Impl& w = *impl_;
    std::string lost;
    for (std::size_t r = 0; r < w.fates.size(); ++r)
        if (w.fates[r] != RankFate::delivered)
            lost += (lost.empty() ? "" : ", ") + std::to_string(r) + " (" + fate_name(w.fates[r]) + ")";
    if (!lost.empty())
        abort_job(status, program + ": the other ranks' results are written; ending the job because rank(s) " + lost +
                              " cannot finish it");
}

bool cuda_aware() noexcept {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    // Asked even when the headers say 0: the library loaded at run time may differ.
    return MPIX_Query_cuda_support() == 1;
#else
    return false;
#endif
}

std::string cuda_aware_reason() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    return std::string("MPIX_Query_cuda_support() = ") + (cuda_aware() ? "1" : "0") +
           " (headers built with MPIX_CUDA_AWARE_SUPPORT " + std::to_string(MPIX_CUDA_AWARE_SUPPORT) + ")";
#else
    return "this MPI offers no run-time CUDA-awareness query (no MPIX_Query_cuda_support): host staging";
#endif
}

}  // namespace mpi
}  // namespace accel
