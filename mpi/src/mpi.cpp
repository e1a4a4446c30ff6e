#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/mpi.hpp>
#include <accel/registry.hpp>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_Query_cuda_support
#endif

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace accel {
namespace mpi {
namespace {

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

Session::Session(int* argc, char*** argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        int provided = 0;
        check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
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
