// accel/mpi.hpp — accel across MPI ranks: one device per rank, and the few
// collectives accel's tools use (gathering records at rank 0, agreeing on
// success). Library accel_mpi, built when CMake finds MPI; libaccel and the
// backend plugins never link MPI.
//
// Rank → device mapping. A selector BACKEND:local (cuda:local, opencl:local,
// kokkos:local, host:local, or auto:local for the backend `auto` picks)
// opens, on each rank, device
//     index = (rank among the ranks of this node using BACKEND) mod (BACKEND's device count)
// where "this node" is MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). When more
// ranks of one node use BACKEND than it has devices, resolution fails on all
// of them with a message saying so, unless ACCEL_OVERSUBSCRIBE=1 allows ranks
// to share devices (then the index wraps around). Other selectors pass
// through unchanged (every rank opens the device it names).
//
// Several selectors for one job: a comma list ("host,opencl,kokkos") is
// dealt to ranks round-robin by world rank (rank r takes item r mod count),
// before the :local step, so ranks may run different backends.
//
// Thread-safety: the functions taking an MPI_Comm are collective over it
// and must be called from the thread that initialized MPI (MPI_THREAD_FUNNELED),
// by every rank of the communicator, in the same order.
#pragma once

#include <accel/device.hpp>

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

namespace accel {
namespace mpi {

/// Whether this process was started by an MPI launcher as one of several
/// ranks: ACCEL_MPI=1 forces yes, ACCEL_MPI=0 no; otherwise yes when the
/// environment of mpirun (OMPI_COMM_WORLD_SIZE), PMIx (PMIX_RANK) or PMI
/// (PMI_SIZE, as srun sets it) is present. Tools call this before deciding
/// to initialize MPI, so that a plain run needs no MPI runtime. Throws
/// InvalidArgument (naming the variable, its value and the accepted values)
/// when ACCEL_MPI is set to anything but 1 or 0. Thread-safe.
bool launched_by_mpi();

/// Whether ACCEL_OVERSUBSCRIBE is "1" (ranks of one node may share a
/// device); false when it is "0" or unset. Throws InvalidArgument (naming
/// the variable, its value and the accepted values) for any other value.
/// Thread-safe.
bool oversubscribe_allowed();

/// MPI initialized for the lifetime of this object (MPI_Init_thread asking
/// for thread level `threads` when MPI is not initialized yet; MPI_Finalize
/// at destruction when this object initialized it). One per process, on the
/// main thread. A program that uses a Watchdog asks for
/// MPI_THREAD_MULTIPLE. Throws std::runtime_error when MPI_Init_thread fails.
class Session {
public:
    Session(int* argc, char*** argv, int threads = MPI_THREAD_FUNNELED);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    /// Rank in MPI_COMM_WORLD (0-based).
    int rank() const noexcept { return rank_; }
    /// Ranks in MPI_COMM_WORLD.
    int size() const noexcept { return size_; }

private:
    bool owns_ = false;
    int rank_ = 0, size_ = 1;
};

/// Where a rank runs: its place in the job and on its node, and the device
/// selector it resolved to.
struct Placement {
    int rank = 0;                ///< rank in the communicator
    int ranks = 1;               ///< ranks in the communicator
    int node_rank = 0;           ///< rank among the ranks of this node (shared-memory domain)
    int node_ranks = 1;          ///< ranks on this node
    int backend_rank = 0;        ///< rank among this node's ranks using the same backend (:local only, else 0)
    int backend_ranks = 1;       ///< ranks of this node using that backend (:local only, else 1)
    std::string host;            ///< accel::host_name() of this rank's node
    std::string requested;       ///< the selector this rank was given (after dealing a list)
    std::string selector;        ///< what it resolved to, e.g. "cuda:1"; equals requested unless :local
    bool shares_device = false;  ///< :local with more ranks than devices here (ACCEL_OVERSUBSCRIBE=1)
};

/// Item `rank` mod count of the comma list `selectors` (blanks around items
/// ignored, empty items dropped). Throws accel::InvalidArgument for a list
/// with no item. Pure; thread-safe.
std::string rank_selector(const std::string& selectors, int rank);

/// Resolves this rank's selector (see the file comment), collective over
/// `comm`. `selectors` is one selector or a comma list dealt by rank.
/// Every rank takes part in every collective step even when its own input
/// is bad, so that no rank waits forever; then errors are thrown:
/// accel::InvalidArgument for a malformed selector, accel::BackendUnavailable
/// when the backend of a :local selector cannot be used here, or when more
/// ranks of this node use it than it has devices and ACCEL_OVERSUBSCRIBE is
/// not 1 (naming the node, the counts and both remedies).
Placement resolve(const std::string& selectors, MPI_Comm comm = MPI_COMM_WORLD);

/// resolve(), then accel::open_device(placement.selector). Collective over
/// `comm`; throws what resolve() and open_device() throw.
std::shared_ptr<Device> open_local_device(const std::string& selectors, Placement* placement = nullptr,
                                          MPI_Comm comm = MPI_COMM_WORLD);

/// Every rank's `mine`, in rank order, at `root` (other ranks get an empty
/// vector). Collective over `comm`. Strings may differ in length (up to
/// 2 GiB in all). Throws std::runtime_error when an MPI call fails.
std::vector<std::string> gather(const std::string& mine, int root = 0, MPI_Comm comm = MPI_COMM_WORLD);

/// True on every rank when `mine` is true on every rank (MPI_LAND).
/// Collective over `comm`.
bool all(bool mine, MPI_Comm comm = MPI_COMM_WORLD);

/// In-place elementwise sum over all ranks of `count` floats at `data`
/// (MPI_Allreduce, MPI_FLOAT, MPI_SUM): a host pointer, or a CUDA device
/// pointer when cuda_aware() is true. Collective over `comm`; every rank
/// passes the same count. The summation order is MPI's (float32 results may
/// differ from a serial sum in the last bits). Throws std::runtime_error
/// when MPI reports an error.
void sum_floats(float* data, std::size_t count, MPI_Comm comm = MPI_COMM_WORLD);

/// Sum over all ranks of one double. Collective over `comm`.
double sum(double mine, MPI_Comm comm = MPI_COMM_WORLD);

/// Seconds without progress after which a Watchdog judges a rank hung:
/// ACCEL_RANK_TIMEOUT (a whole number of seconds in 1..86400), default 300.
/// Throws InvalidArgument (naming the variable, its value and the accepted
/// range) for any other value. Thread-safe.
int rank_timeout_seconds();

/// What became of one rank at Watchdog::gather.
enum class RankFate {
    delivered,  ///< its record arrived
    timeout,    ///< alive (its heartbeats arrive) but no progress for the timeout: a device call that does not return
    died,       ///< no heartbeat for the silence limit: its process ended
};

/// "ok", "timeout" or "died".
const char* fate_name(RankFate f) noexcept;

/// Watches the ranks of a communicator through a long local step (each rank
/// timing or testing its own device) and gathers their records at rank 0
/// afterwards, so that one rank whose device hangs or whose process dies
/// costs its own results only, not everyone's.
///
/// How: a thread on every rank sends rank 0 a heartbeat every 250 ms with
/// the rank's progress count (progress()) and whether it has reached
/// gather(); rank 0's thread sends its own to every other rank. A rank is
/// judged
///   died     when no heartbeat has come from it for the silence limit,
///            timeout/2 clamped to 2..10 s: its process is gone;
///   timeout  when its heartbeats still come (the last one under 1 s ago)
///            but its progress count has not moved for `timeout` before it
///            reached gather(): a device call that does not return.
/// A rank waiting in gather() is never judged hung. Heartbeats and records
/// travel on a duplicate of the communicator, so they never meet the
/// program's own messages.
///
/// A process that dies ends the whole job under Open MPI 4.x's default
/// (mpirun aborts every rank when one exits with a non-zero status or a
/// signal), before anything could be written: run such jobs with
/// `mpirun --mca orte_abort_on_non_zero_status 0` (rank 0's constructor
/// prints death_ends_job_hint() on stderr when it is missing). Slurm's srun keeps the
/// other tasks running unless --kill-on-bad-exit is set.
///
/// Needs MPI_THREAD_MULTIPLE (Session(..., MPI_THREAD_MULTIPLE)). The
/// constructor is collective over `comm` (every rank, the same point);
/// progress() is thread-safe; gather() and share() are called once each, in
/// that order, from the thread that made the Watchdog, by every rank that is
/// still running.
class Watchdog {
public:
    /// Starts watching. `identity`: a short text rank 0 keeps for each rank
    /// (e.g. its host and device), so that it can name ranks it never hears
    /// from again. `timeout_seconds` ≥ 1. Throws std::runtime_error when MPI
    /// gives less than MPI_THREAD_MULTIPLE or an MPI call fails, and
    /// accel::InvalidArgument for a timeout below 1 s.
    Watchdog(const std::string& identity, int timeout_seconds, MPI_Comm comm = MPI_COMM_WORLD);
    /// Stops the heartbeat thread.
    ~Watchdog();
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

    /// This rank made progress (finished a row, a test case): resets its
    /// hang clock. Thread-safe, wait-free.
    void progress() noexcept;

    /// What rank 0 learned at gather(), indexed by rank (empty elsewhere).
    struct Gathered {
        std::vector<std::string> records;     ///< each delivered rank's `mine`; "" for a lost rank
        std::vector<RankFate> fates;          ///< what became of each rank
        std::vector<std::string> identities;  ///< each rank's `identity`
        std::vector<std::string> reasons;     ///< why a lost rank was judged so; "" for a delivered one
        /// Whether any rank was lost.
        bool lost_any() const;
    };

    /// Every still-running rank sends `mine` to rank 0. Rank 0 returns once
    /// every rank has delivered or been judged timeout/died; the others once
    /// rank 0 has their record. A rank other than 0 that finds rank 0 dead
    /// or hung ends the job (abort_job, status 1) naming it: no rank is left
    /// to write the results. Throws std::runtime_error when an MPI call fails.
    Gathered gather(const std::string& mine);

    /// After gather(): rank 0 sends `verdict` to every rank that delivered
    /// and returns it; the others wait for it (ending the job as gather()
    /// does when rank 0 is lost) and return it.
    int share(int verdict);

    /// After share(), on rank 0: when gather() lost ranks, ends the job
    /// (abort_job(status, ...)) with a message from `program` naming each lost
    /// rank and its fate, since a hung rank would hold MPI_Finalize forever.
    /// Returns when no rank was lost, and on every other rank.
    void end_job_if_lost(int status, const std::string& program) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// A line of advice when this job was started by Open MPI's mpirun with its
/// default of ending every rank as soon as one exits abnormally
/// (orte_abort_on_non_zero_status, seen by the ranks as
/// OMPI_MCA_orte_abort_on_non_zero_status): then a rank that dies takes the
/// others' results with it, and the line says how to keep them. "" when the
/// setting is 0 or the launcher is not Open MPI's. Thread-safe.
std::string death_ends_job_hint();

/// Ends every rank of the job: `why` on stderr, then MPI_Abort(MPI_COMM_WORLD,
/// status). For a rank that knows some ranks are hung (MPI_Finalize would
/// wait for them forever).
[[noreturn]] void abort_job(int status, const std::string& why);

/// Whether MPI accepts CUDA device pointers in communication calls, asked
/// at run time (Open MPI's MPIX_Query_cuda_support, where the MPI library
/// offers it; false where it does not). Never throws.
bool cuda_aware() noexcept;

/// One line on how CUDA awareness was decided, e.g. "Open MPI built without
/// CUDA support (MPIX_CUDA_AWARE_SUPPORT 0)". Never throws beyond bad_alloc.
std::string cuda_aware_reason();

}  // namespace mpi
}  // namespace accel
