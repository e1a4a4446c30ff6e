// Kokkos backend: Kokkos' lifetime, Backend, device info, memory, copies,
// streams, events (see kokkos_device.hpp for the design).
#include "kokkos_device.hpp"

#include <accel/error.hpp>
#include <accel/plugin.hpp>
#include <accel/version.hpp>

#include "kernels/matmul.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime_api.h>
#endif

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <fstream>
#include <mutex>
#include <vector>
#include <sstream>
#include <type_traits>
#include <unordered_map>

namespace accel {
namespace kokkos {

namespace {

// Set at the start of whichever Kokkos::finalize comes first once the plugin
// uses Kokkos: the application's (g_finalized only) or the plugin's own at
// exit (g_accel_finalized too). Constant-initialized and trivially
// destructible, so they are readable during and after static destruction,
// when device destructors may still run.
std::atomic<bool> g_finalized{false};
std::atomic<bool> g_accel_finalized{false};
// Set once the Runtime below was constructed (create_device); probe() reads
// its error without constructing it.
std::atomic<bool> g_runtime_made{false};

class Runtime;
Runtime& runtime();

// Whether Kokkos itself says it was finalized (Kokkos >= 3.7 tells; 3.4 to
// 3.6 cannot, and there only finalizes the plugin saw are known).
bool kokkos_says_finalized() noexcept {
#if KOKKOS_VERSION >= 30700
    return Kokkos::is_finalized();
#else
    return false;
#endif
}

/// Owns the plugin's use of Kokkos, from create_device on (never from a
/// probe): initializes Kokkos when nobody has, else uses the application's
/// without ever finalizing it; tracks live allocations and frees them at the
/// start of whichever finalize comes first (a Kokkos finalize hook: the
/// application's Kokkos::finalize, or the plugin's own at exit, only if it
/// initialized Kokkos). Constructed on first use, so it is destroyed before
/// the Kokkos library's own static objects.
class Runtime {
public:
    Runtime() {
        g_runtime_made = true;
        if (kokkos_says_finalized()) {
            error_ = "Kokkos was finalized by the application before a Kokkos device was opened, and Kokkos cannot "
                     "be initialized twice in one process; open the device before Kokkos::finalize";
            return;
        }
        if (!Kokkos::is_initialized()) {
            try {
                // Default settings: Kokkos reads the user's KOKKOS_* variables itself.
#if KOKKOS_VERSION >= 30700
                Kokkos::initialize(Kokkos::InitializationSettings());
#else
                Kokkos::initialize(Kokkos::InitArguments());
#endif
                owned_ = true;
            } catch (const std::exception& e) {
                error_ = std::string("Kokkos::initialize failed: ") + e.what();
                return;
            }
        }
        Kokkos::push_finalize_hook(before_finalize);
    }

    ~Runtime() {
        if (owned_ && Kokkos::is_initialized() && !g_finalized) {
            g_accel_finalized = true;
            Kokkos::finalize();  // runs before_finalize()
        } else {
            before_finalize();  // the application's Kokkos, if still up, finalizes later
        }
    }

    /// Frees every live allocation (once); afterwards the plugin leaves Kokkos
    /// alone. Holds the dispatch lock, so a dispatch of another thread either
    /// completes before Kokkos goes or sees g_finalized and throws.
    static void before_finalize() {
        std::lock_guard<std::mutex> dispatch(dispatch_mutex());
        if (g_finalized.exchange(true)) return;
        Runtime& r = runtime();
        std::lock_guard<std::mutex> lock(r.mu_);
        if (Kokkos::is_initialized())
            for (const auto& [p, free_fn] : r.live_) free_fn(p);
        r.live_.clear();
    }

    const std::string& error() const { return error_; }
    bool owned() const { return owned_; }

    void track(void* p, void (*free_fn)(void*)) {
        std::lock_guard<std::mutex> lock(mu_);
        live_.emplace(p, free_fn);
    }
    /// True if p was live (and is now forgotten).
    bool untrack(void* p) {
        std::lock_guard<std::mutex> lock(mu_);
        return live_.erase(p) != 0;
    }

private:
    std::string error_;
    bool owned_ = false;
    std::mutex mu_;
    std::unordered_map<void*, void (*)(void*)> live_;  // allocation → its memory space's free
};

Runtime& runtime() {
    static Runtime r;  // destroyed (finalizing Kokkos) before Kokkos' own statics
    return r;
}

// Why Kokkos can no longer be used, for BackendUnavailable.
std::string finalized_message() {
    if (g_accel_finalized)
        return "kokkos: Kokkos was finalized by accel at process exit; Kokkos devices cannot be used during "
               "static destruction";
    return "kokkos: Kokkos was finalized by the application (Kokkos::finalize, or the end of a "
           "Kokkos::ScopeGuard); Kokkos devices and their tensors, streams and events cannot be used afterwards: "
           "finish with them before finalizing Kokkos";
}

std::string version_text() {
    return std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
           std::to_string(KOKKOS_VERSION % 100);
}

// The backends Kokkos reports as enabled in its configuration printout
// ("KOKKOS_ENABLE_SERIAL: yes", ...), e.g. "SERIAL" or "CUDA, OPENMP".
std::string enabled_backends() {
    std::ostringstream out;
    Kokkos::print_configuration(out, false);
    std::istringstream in(out.str());
    const char* known[] = {"SERIAL", "OPENMP", "THREADS", "HPX", "CUDA", "HIP", "SYCL", "OPENMPTARGET", "OPENACC"};
    std::string line, list;
    while (std::getline(in, line)) {
        const auto at = line.find("KOKKOS_ENABLE_");
        const auto colon = line.find(':', at);
        if (at == std::string::npos || colon == std::string::npos || line.find("yes", colon) == std::string::npos)
            continue;
        const std::string name = line.substr(at + 14, colon - at - 14);
        for (const char* k : known)
            if (name == k) list += (list.empty() ? "" : ", ") + name;
    }
    return list.empty() ? "unknown (no KOKKOS_ENABLE_<backend>: yes in Kokkos::print_configuration)" : list;
}

// How the plugin links Kokkos (ACCEL_KOKKOS_STATIC comes from CMake).
std::string library_kind() {
#if defined(ACCEL_KOKKOS_STATIC)
    return "static (PIC), inside this plugin: an application's own Kokkos would be a second runtime";
#else
    return "shared (one Kokkos runtime with the application's)";
#endif
}

template <class Space>
std::string streams_text() {
    return independent_streams<Space>() ? "one execution-space instance per stream (partition_space)"
                                        : "the default instance for every stream (host space or Kokkos 3)";
}

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) {
            const auto c = line.find(':');
            if (c != std::string::npos) return line.substr(line.find_first_not_of(' ', c + 1));
        }
    return "CPU";
}

// Name, vendor and bytes of memory of the device execution space `Space`
// runs on. Host spaces: the CPU and physical RAM. CUDA/HIP: what the runtime
// reports for the current device, with its UUID (CUDA) and PCI address.
template <class Space>
void describe_hardware(DeviceInfo& i) {
    if (is_host_space<Space>) {
        i.name = std::string("Kokkos ") + Space::name() + " on " + cpu_model();
        i.vendor = "host CPU";
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        i.global_memory_bytes = pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : 0;
        return;
    }
    i.name = std::string("Kokkos ") + Space::name();
    i.vendor = "-";
#if defined(KOKKOS_ENABLE_CUDA)
    if (std::is_same<Space, Kokkos::Cuda>::value) {
        int id = 0;
        cudaDeviceProp p{};
        if (cudaGetDevice(&id) == cudaSuccess && cudaGetDeviceProperties(&p, id) == cudaSuccess) {
            i.name += std::string(" on ") + p.name;
            i.vendor = "NVIDIA Corporation";
            i.global_memory_bytes = p.totalGlobalMem;
            unsigned char uuid[16];
            std::memcpy(uuid, p.uuid.bytes, sizeof uuid);
            i.uuid = format_uuid(uuid);
            i.pci_bus_id = format_pci_bus_id(unsigned(p.pciDomainID), unsigned(p.pciBusID), unsigned(p.pciDeviceID), 0);
        }
    }
#endif
#if defined(KOKKOS_ENABLE_HIP)
    if (std::is_same<Space, HipSpace>::value) {
        int id = 0;
        hipDeviceProp_t p{};
        if (hipGetDevice(&id) == hipSuccess && hipGetDeviceProperties(&p, id) == hipSuccess) {
            i.name += std::string(" on ") + p.name;
            i.vendor = "AMD";
            i.global_memory_bytes = p.totalGlobalMem;
            i.pci_bus_id = format_pci_bus_id(unsigned(p.pciDomainID), unsigned(p.pciBusID), unsigned(p.pciDeviceID), 0);
        }
    }
#endif
}

std::string spaces_text();

// The stable selector of the device of the space whose selector word is `word`.
std::string stable_selector(const std::string& word) { return "kokkos:" + word + ":0"; }

template <class Space>
DeviceInfo kokkos_info(int index) {
    constexpr bool host = is_host_space<Space>;
    DeviceInfo i;
    i.backend = "kokkos";
    i.index = index;
    i.stable_selector = stable_selector(space_word<Space>());
    describe_hardware<Space>(i);
    i.type = host ? "cpu" : "gpu";
    i.driver_version = "-";
    i.runtime_version = "Kokkos " + version_text() + (have_vendor_blas() ? " + Kokkos Kernels" : "");
    const int concurrency = Space().concurrency();
    i.compute_units = concurrency > 0 ? concurrency : 1;
    // Logical threads per block (see kokkos_device.hpp); block.z unused.
    // Host spaces: a block is a chunk of elements or a rectangle of C that
    // one thread computes, as large as the index type allows.
    const std::size_t block_max = host ? std::size_t{INT_MAX} : 1024;
    i.limits.max_block_size = block_max;
    i.limits.max_block_dims = {block_max, block_max, 1};
    i.timer = "fence + steady_clock (host time between fences of the execution-space instance)";
    if (host) i.kernel_languages = {"host"};  // a C++ callable runs on host execution spaces only
    i.determinism = {true, true,
                     "a product's element is summed over k in one order fixed by K alone (host spaces: passes of "
                     "equal depth; device spaces: one thread over the k slices in order); work is split over "
                     "outputs, never a sum; no atomics"};

    using Policy = typename TiledMatmulFn<Space, float>::Policy;
    Policy team_probe(Space(), 1, Kokkos::AUTO, 1);
    const int team_max = team_probe.team_size_max(TiledMatmulFn<Space, float>{}, Kokkos::ParallelForTag());
    i.extra = {
        {"execution space", Space::name()},
        {"memory space", KokkosDevice<Space>::MemSpace::name()},
        {"concurrency", std::to_string(concurrency)},
        {"Kokkos version", version_text()},
        {"Kokkos backends", enabled_backends()},
        {"execution spaces", spaces_text()},
        {"Kokkos library", library_kind()},
        {"Kokkos initialized by", runtime().owned() ? "accel (finalized at exit)" : "the application (never finalized by accel)"},
        {"streams", streams_text<Space>()},
        {"team size (matmul)", host ? "1 (host space: one thread per team)" : "min(block.y, " + std::to_string(team_max) + ")"},
        {"vector length max", std::to_string(Policy::vector_length_max())},
        {"team scratch level 0", std::to_string(Policy::scratch_size_max(0)) + " bytes"},
        {"launch geometry",
         host ? "RangePolicy chunk = block.x; TeamPolicy league = grid volume, tile = block.y x block.x, "
                "one thread per team (host spaces)"
              : "RangePolicy chunk = block.x; TeamPolicy league = grid volume, tile = block.y x block.x, "
                "team size = min(block.y, team size max), lanes = pow2 <= block.x"},
        {"vendor BLAS", have_vendor_blas() ? vendor_text(Space::name()) : "none (built without Kokkos Kernels)"},
    };
    return i;
}

// One device of the backend: an execution space the linked Kokkos enabled.
struct SpaceEntry {
    std::string word;  // the selector's word: "openmp"
    bool host;
    std::shared_ptr<Device> (*make)(int index);
    std::string selector() const { return stable_selector(word); }
};

template <class Space>
SpaceEntry entry_of() {
    return {space_word<Space>(), is_host_space<Space>,
            [](int index) -> std::shared_ptr<Device> { return std::make_shared<KokkosDevice<Space>>(index); }};
}

// The devices: the default space first, then every other enabled space
// (kokkos_device.hpp). Needs no Kokkos initialization.
const std::vector<SpaceEntry>& spaces() {
    static const std::vector<SpaceEntry> all = [] {
        std::vector<SpaceEntry> v{entry_of<DefaultSpace>()};
#define ACCEL_KOKKOS_ADD_SPACE(S) \
    if (!std::is_same<S, DefaultSpace>::value) v.push_back(entry_of<S>());
        ACCEL_KOKKOS_FOR_EACH_SPACE(ACCEL_KOKKOS_ADD_SPACE)
#undef ACCEL_KOKKOS_ADD_SPACE
        return v;
    }();
    return all;
}

// "kokkos:0 = kokkos:cuda:0, kokkos:1 = kokkos:openmp:0, kokkos:2 = kokkos:serial:0".
std::string spaces_text() {
    std::string text;
    for (std::size_t i = 0; i < spaces().size(); ++i)
        text += (i ? ", kokkos:" : "kokkos:") + std::to_string(i) + " = " + spaces()[i].selector();
    return text;
}

// Unavailable because Kokkos' device space `space` finds no GPU (`why`):
// Kokkos initializes every enabled space at once, so none can be used.
[[maybe_unused]] Availability no_gpu(const std::string& space, const std::string& why) {
    return Availability{false,
                        "kokkos (Kokkos::" + space + "): " + why + "; this Kokkos initializes its " + space +
                            " space with every other, so none of its spaces can be used",
                        0, false, 0, {}};
}

// Whether the plugin can open its devices, asked without initializing
// Kokkos. Kokkos initializes every enabled space at once, so a build with
// CUDA or HIP needs that runtime's device even for its host spaces: the
// device count is asked of the runtime (no context is created).
Availability devices_without_init() {
    const int count = static_cast<int>(spaces().size());
    int preferred = 0;
    while (preferred < count && spaces()[static_cast<std::size_t>(preferred)].host) ++preferred;
    const bool gpu = preferred < count;
    if (!gpu) preferred = 0;
#if defined(KOKKOS_ENABLE_CUDA)
    {
        int n = 0;
        const cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess)
            return no_gpu("Cuda", std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(e) + " (" +
                                      cudaGetErrorString(e) + ")");
        if (n < 1) return no_gpu("Cuda", "no CUDA device");
    }
#endif
#if defined(KOKKOS_ENABLE_HIP)
    {
        int n = 0;
        const hipError_t e = hipGetDeviceCount(&n);
        if (e != hipSuccess)
            return no_gpu("HIP", std::string("hipGetDeviceCount failed: ") + hipGetErrorName(e) + " (" +
                                     hipGetErrorString(e) + ")");
        if (n < 1) return no_gpu("HIP", "no HIP device");
    }
#endif
    return Availability{true, "", count, gpu, preferred, {}};
}

// The Kokkos execution spaces a selector may name (Kokkos' names in lower case).
constexpr const char* kSpaceWords[] = {"cuda", "hip", "openmp", "threads", "serial", "sycl", "hpx", "openmptarget",
                                       "openacc"};

class KokkosBackend final : public Backend {
public:
    std::string name() const override { return "kokkos"; }
    /// Never initializes Kokkos (see devices_without_init); unavailable once
    /// Kokkos was finalized or failed to initialize in create_device.
    Availability probe() override {
        if (g_finalized || kokkos_says_finalized()) return Availability{false, finalized_message(), 0, false, 0, {}};
        if (g_runtime_made && !runtime().error().empty())
            return Availability{false, "kokkos: " + runtime().error(), 0, false, 0, {}};
        return devices_without_init();
    }
    /// Initializes Kokkos unless the application has (ensure_runtime), then
    /// opens the device of space `index` (spaces()). Throws
    /// BackendUnavailable when Kokkos cannot be used.
    std::shared_ptr<Device> create_device(int index) override {
        ensure_runtime();
        return spaces().at(static_cast<std::size_t>(index)).make(index);
    }
    /// kokkos:SPACE[:0] (cuda, hip, openmp, threads, serial): the device of
    /// that execution space (one per space); kokkos:gpu / kokkos:cpu: the
    /// first device of that type. InvalidArgument for a malformed index;
    /// BackendUnavailable when no device matches, naming the devices there are.
    int find_device(const std::string& spec) override {
        std::string have;
        for (const SpaceEntry& e : spaces()) have += (have.empty() ? "" : ", ") + e.selector();
        const auto [piece, within] = split_device_name("kokkos", spec, "0");
        if (within != 0)
            throw BackendUnavailable("kokkos:" + spec + ": each Kokkos execution space is one device (index 0); "
                                     "the devices are " + have);
        for (std::size_t i = 0; i < spaces().size(); ++i)
            if (spaces()[i].word == piece || (piece == "gpu" && !spaces()[i].host) || (piece == "cpu" && spaces()[i].host))
                return static_cast<int>(i);
        for (const char* w : kSpaceWords)
            if (piece == w)
                throw BackendUnavailable("kokkos:" + spec + ": the Kokkos this plugin was built against (Kokkos " +
                                         version_text() + ") has no " + piece + " execution space; its devices are " +
                                         have);
        throw BackendUnavailable("kokkos:" + spec.substr(0, 64) + " names no device: Kokkos devices are named by "
                                 "execution space (or gpu, cpu); the devices are " + have);
    }
};

// deep_copy on the stream's instance (asynchronous where the space allows);
// a blocking copy then fences that instance.
template <class Space, class Dst, class Src>
void copy_on(Stream& s, const Dst& dst, const Src& src, bool blocking) {
    require_runtime();
    const Space& space = instance_of<Space>(s);
    {
        auto lock = dispatch_lock();
        Kokkos::deep_copy(space, dst, src);
    }
    if (blocking) s.synchronize();
}

char* bytes_at(DeviceHandle h, std::size_t off) { return static_cast<char*>(h) + off; }

// Unmanaged bytes of memory space M.
template <class M>
using Bytes = Kokkos::View<char*, M, Unmanaged>;
template <class M>
using ConstBytes = Kokkos::View<const char*, M, Unmanaged>;

// A new instance for a stream: an independent one (its own CUDA/HIP stream)
// on device spaces with Kokkos >= 4; the default instance on host spaces
// (see kokkos_device.hpp) and on Kokkos 3.
template <class Space>
Space new_instance() {
#if KOKKOS_VERSION >= 40000
    if constexpr (!is_host_space<Space>) return Kokkos::Experimental::partition_space(Space(), 1)[0];
#endif
    return Space();
}

}  // namespace

std::mutex& dispatch_mutex() {
    static std::mutex m;  // constant-initialized, never destroyed in practice (trivial destructor)
    return m;
}

std::unique_lock<std::mutex> dispatch_lock() {
    std::unique_lock<std::mutex> lock(dispatch_mutex());
    if (!runtime_alive()) throw BackendUnavailable(finalized_message());
    return lock;
}

void ensure_runtime() {
    if (g_finalized) throw BackendUnavailable(finalized_message());
    Runtime& r = runtime();
    if (!r.error().empty()) throw BackendUnavailable("kokkos: " + r.error());
    require_runtime();
}

void require_runtime() {
    if (!runtime_alive()) throw BackendUnavailable(finalized_message());
}

bool runtime_alive() noexcept { return !g_finalized && Kokkos::is_initialized(); }

void track_allocation(void* p, void (*free_fn)(void*)) { runtime().track(p, free_fn); }

bool untrack_allocation(void* p) { return runtime().untrack(p); }

template <class Space>
KokkosStream<Space>::KokkosStream(Device& d) : Stream(d) {
    auto lock = dispatch_lock();
    space_ = std::make_unique<Space>(new_instance<Space>());
}

template <class Space>
KokkosStream<Space>::KokkosStream(Device& d, const Space& space) : Stream(d) {
    auto lock = dispatch_lock();
    space_ = std::make_unique<Space>(space);
}

template <class Space>
KokkosStream<Space>::~KokkosStream() {
    // After finalize an instance must not be destroyed through Kokkos: it is
    // kept, reachable (so leak checkers do not report it), until the process ends.
    if (runtime_alive()) return;
    static auto* kept_mutex = new std::mutex;
    static auto* kept = new std::vector<std::unique_ptr<Space>>;
    std::lock_guard<std::mutex> lock(*kept_mutex);
    kept->push_back(std::move(space_));
}

template <class Space>
void KokkosStream<Space>::do_synchronize() {
    require_runtime();
    try {
        auto lock = fence_lock<Space>();
        space_->fence();
    } catch (const BackendUnavailable&) {
        throw;
    } catch (const std::exception& e) {
        throw DeviceError(std::string("kokkos: fence of the execution-space instance failed: ") + e.what(), 0,
                          "KokkosFenceFailed");
    }
}

void KokkosEvent::do_record(Stream& s) {
    s.synchronize();
    time = std::chrono::steady_clock::now();
}

template <class Space>
KokkosDevice<Space>::KokkosDevice(int index) : Device(kokkos_info<Space>(index)) {
    register_kernels();
}

template <class Space>
DeviceHandle KokkosDevice<Space>::do_allocate(std::size_t bytes) {
    require_runtime();
    void* p = nullptr;
    try {
        p = Kokkos::kokkos_malloc<MemSpace>("accel::buffer", bytes);
    } catch (const std::exception& e) {
        throw OutOfMemory("allocate: Kokkos refused " + std::to_string(bytes) + " bytes in " + MemSpace::name() +
                          " on " + selector() + " (" + std::to_string(info().global_memory_bytes) +
                          " bytes of memory in total): " + e.what());
    }
    track_allocation(p, &KokkosDevice::free_memory);
    return p;
}

template <class Space>
void KokkosDevice<Space>::do_deallocate(DeviceHandle h) noexcept {
    // After finalize the memory is gone with Kokkos (freed at finalize or by it).
    if (!runtime_alive()) return;
    if (untrack_allocation(h)) free_memory(h);
}

// Overlapping ranges of one buffer are not supported by deep_copy (memcpy semantics).
template <class Space>
void KokkosDevice<Space>::do_copy_h2d(DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes,
                                      Stream& s, bool blocking) {
    copy_on<Space>(s, Bytes<MemSpace>(bytes_at(dst, off), bytes),
                   ConstBytes<Kokkos::HostSpace>(static_cast<const char*>(src), bytes), blocking);
}

template <class Space>
void KokkosDevice<Space>::do_copy_d2h(void* dst, DeviceHandle src, std::size_t off, std::size_t bytes, Stream& s,
                                      bool blocking) {
    copy_on<Space>(s, Bytes<Kokkos::HostSpace>(static_cast<char*>(dst), bytes),
                   ConstBytes<MemSpace>(bytes_at(src, off), bytes), blocking);
}

template <class Space>
void KokkosDevice<Space>::do_copy_d2d(DeviceHandle dst, std::size_t doff, DeviceHandle src, std::size_t soff,
                                      std::size_t bytes, Stream& s, bool blocking) {
    copy_on<Space>(s, Bytes<MemSpace>(bytes_at(dst, doff), bytes), ConstBytes<MemSpace>(bytes_at(src, soff), bytes),
                   blocking);
}

template <class Space>
std::unique_ptr<Stream> KokkosDevice<Space>::do_create_stream() {
    return std::make_unique<KokkosStream<Space>>(*this);
}

template <class Space>
std::unique_ptr<Event> KokkosDevice<Space>::do_create_event() {
    require_runtime();
    return std::make_unique<KokkosEvent>(*this);
}

template <class Space>
double KokkosDevice<Space>::do_elapsed_ms(Event& start, Event& end) {
    require_runtime();
    const auto& a = static_cast<KokkosEvent&>(start);
    const auto& b = static_cast<KokkosEvent&>(end);
    return std::chrono::duration<double, std::milli>(b.time - a.time).count();
}

template <class Space>
void KokkosDevice<Space>::do_synchronize() {
    require_runtime();
    auto lock = fence_lock<Space>();
    Space().fence();
}

template <class Space>
LaunchGeometry KokkosDevice<Space>::do_default_geometry(Op op, DType dtype, std::size_t rows, std::size_t cols) const {
    constexpr bool host = is_host_space<Space>;
    if (op_info(op).tiled) {
        // Device spaces: 16×16 tiles. Host spaces: the host backend's
        // rectangles of the shared CPU GEMM (all of C on one thread), which
        // packs its operands once per rectangle: 32×32 tiles repacked op(B)
        // per tile and ran matmul at 0.56 of the vendor GEMM, transposed B
        // at 0.3. One tile per block, except that grid.y stops at the
        // device's limit: the teams walk the tiles grid-stride, so a tall
        // output still runs.
        std::size_t tile_rows = 16, tile_cols = 16;
        if (host)
            host_gemm_rectangle(dtype == DType::f64, std::max<std::size_t>(rows, 1), std::max<std::size_t>(cols, 1),
                                static_cast<std::size_t>(info().compute_units), tile_rows, tile_cols);
        LaunchGeometry g;
        g.block = Dim3{tile_cols, tile_rows, 1};
        g.grid = Dim3{std::max<std::size_t>(1, (cols + tile_cols - 1) / tile_cols),
                      std::min(std::max<std::size_t>(1, (rows + tile_rows - 1) / tile_rows),
                               info().limits.max_grid_dims.y),
                      1};
        check_geometry(g, info().limits, "default geometry of " + selector());
        return g;
    }
    return geometry_1d_fit(rows * cols, host ? 1024 : 256, info().limits);
}

#if defined(KOKKOS_ENABLE_CUDA)
static_assert(!is_host_space<Kokkos::Cuda>, "Kokkos::Cuda must take the device bodies (team scratch tiles)");
#endif
#if defined(KOKKOS_ENABLE_HIP)
static_assert(!is_host_space<HipSpace>, "Kokkos' HIP space must take the device bodies (team scratch tiles)");
#endif
static_assert(kDefaultSpaceKnown,
              "accel's Kokkos backend runs on the Cuda, HIP, OpenMP, Threads and Serial execution spaces; this "
              "Kokkos' default execution space is another one");
#define ACCEL_KOKKOS_INSTANTIATE_RUNTIME(S) \
    template class KokkosStream<S>;         \
    template class KokkosDevice<S>;
ACCEL_KOKKOS_FOR_EACH_SPACE(ACCEL_KOKKOS_INSTANTIATE_RUNTIME)
#undef ACCEL_KOKKOS_INSTANTIATE_RUNTIME

}  // namespace kokkos
}  // namespace accel

// auto: a Kokkos GPU execution space after CUDA and OpenCL GPUs.
ACCEL_DEFINE_PLUGIN("kokkos", accel::kokkos::KokkosBackend,
                    "kokkos:SPACE[:0] (an execution space the linked Kokkos enabled: cuda, hip, openmp, threads, "
                    "serial) | kokkos:gpu | kokkos:cpu",
                    10, 0)
