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

#include <atomic>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <type_traits>
#include <unordered_set>

namespace accel {
namespace kokkos {

namespace {

// Set when the plugin finalized Kokkos (or began to). Constant-initialized
// and trivially destructible, so it is readable during and after static
// destruction, when device destructors may still run.
std::atomic<bool> g_finalized{false};

class Runtime;
Runtime& runtime();

/// Owns the plugin's use of Kokkos: initializes it when nobody has, tracks
/// live allocations and frees them at the start of whichever finalize comes
/// first (a Kokkos finalize hook: the application's Kokkos::finalize, or the
/// plugin's own at exit, only if it initialized Kokkos). Constructed on first
/// use, so it is destroyed before the Kokkos library's own static objects.
class Runtime {
public:
    Runtime() {
#if KOKKOS_VERSION >= 30700
        if (Kokkos::is_finalized()) {
            error_ = "Kokkos was already finalized in this process and cannot be initialized again";
            return;
        }
#endif
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
        if (owned_ && Kokkos::is_initialized())
            Kokkos::finalize();  // runs before_finalize()
        else
            before_finalize();  // the application's Kokkos, if still up, finalizes later
    }

    /// Frees every live allocation (once); afterwards the plugin leaves Kokkos alone.
    static void before_finalize() {
        if (g_finalized.exchange(true)) return;
        Runtime& r = runtime();
        std::lock_guard<std::mutex> lock(r.mu_);
        if (Kokkos::is_initialized())
            for (void* p : r.live_) Kokkos::kokkos_free<MemSpace>(p);
        r.live_.clear();
    }

    const std::string& error() const { return error_; }
    bool owned() const { return owned_; }

    void track(void* p) {
        std::lock_guard<std::mutex> lock(mu_);
        live_.insert(p);
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
    std::unordered_set<void*> live_;
};

Runtime& runtime() {
    static Runtime r;  // destroyed (finalizing Kokkos) before Kokkos' own statics
    return r;
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

// Name, vendor and bytes of memory of the device the default execution space
// runs on. Host spaces: the CPU and physical RAM. CUDA/HIP: what the runtime
// reports for the current device, with its UUID (CUDA) and PCI address. Other device spaces (SYCL, OpenMPTarget):
// unknown, 0 bytes (the front-end then leaves the size check to Kokkos).
void describe_hardware(DeviceInfo& i) {
    if (host_space()) {
        i.name = std::string("Kokkos ") + ExecSpace::name() + " on " + cpu_model();
        i.vendor = "host CPU";
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        i.global_memory_bytes = pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : 0;
        return;
    }
    i.name = std::string("Kokkos ") + ExecSpace::name();
    i.vendor = "-";
#if defined(KOKKOS_ENABLE_CUDA)
    if (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
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
    if (std::is_same<ExecSpace, Kokkos::Experimental::HIP>::value) {
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

DeviceInfo kokkos_info() {
    DeviceInfo i;
    i.backend = "kokkos";
    i.index = 0;
    describe_hardware(i);
    i.type = host_space() ? "cpu" : "gpu";
    i.driver_version = "-";
    i.runtime_version = "Kokkos " + version_text() + (have_vendor_blas() ? " + Kokkos Kernels" : "");
    const int concurrency = ExecSpace().concurrency();
    i.compute_units = concurrency > 0 ? concurrency : 1;
    // Logical threads per block (see kokkos_device.hpp); block.z unused.
    i.limits.max_block_size = 1024;
    i.limits.max_block_dims = {1024, 1024, 1};
    i.timer = "fence + steady_clock (host time between fences of the execution-space instance)";

    TiledMatmulFn::Policy team_probe(ExecSpace(), 1, Kokkos::AUTO, 1);
    const int team_max = team_probe.team_size_max(TiledMatmulFn{}, Kokkos::ParallelForTag());
    i.extra = {
        {"execution space", ExecSpace::name()},
        {"memory space", MemSpace::name()},
        {"concurrency", std::to_string(concurrency)},
        {"Kokkos version", version_text()},
        {"Kokkos backends", enabled_backends()},
        {"Kokkos initialized by", runtime().owned() ? "accel (finalized at exit)" : "the application"},
        {"team size max (matmul)", std::to_string(team_max)},
        {"vector length max", std::to_string(TiledMatmulFn::Policy::vector_length_max())},
        {"team scratch level 0", std::to_string(TiledMatmulFn::Policy::scratch_size_max(0)) + " bytes"},
        {"launch geometry", "RangePolicy chunk = block.x; TeamPolicy league = grid volume, tile = block.y x "
                            "block.x, team size = min(block.y, team size max), lanes = pow2 <= block.x"},
        {"vendor BLAS", have_vendor_blas() ? "Kokkos Kernels (KokkosBlas::gemm)"
                                           : "none (built without Kokkos Kernels)"},
    };
    return i;
}

class KokkosBackend final : public Backend {
public:
    std::string name() const override { return "kokkos"; }
    Availability probe() override {
        try {
            ensure_runtime();
            return Availability{true, "", 1, !host_space()};
        } catch (const std::exception& e) {
            return Availability{false, e.what(), 0, false};
        }
    }
    std::shared_ptr<Device> create_device(int) override {
        try {
            ensure_runtime();
        } catch (const BackendUnavailable& e) {
            throw DeviceError(std::string("kokkos:0 cannot be opened: ") + e.what(), 0, "KokkosUnavailable");
        }
        return std::make_shared<KokkosDevice>();
    }
};

using Bytes = Kokkos::View<char*, MemSpace, Unmanaged>;
using ConstBytes = Kokkos::View<const char*, MemSpace, Unmanaged>;
using HostBytes = Kokkos::View<char*, Kokkos::HostSpace, Unmanaged>;
using ConstHostBytes = Kokkos::View<const char*, Kokkos::HostSpace, Unmanaged>;

// deep_copy on the stream's instance (asynchronous where the space allows);
// a blocking copy then fences that instance.
template <class Dst, class Src>
void copy_on(Stream& s, const Dst& dst, const Src& src, bool blocking) {
    const ExecSpace& space = instance_of(s);
    {
        auto lock = dispatch_lock();
        Kokkos::deep_copy(space, dst, src);
    }
    if (blocking) s.synchronize();
}

char* bytes_at(DeviceHandle h, std::size_t off) { return static_cast<char*>(h) + off; }

}  // namespace

std::unique_lock<std::mutex> dispatch_lock() {
    static std::mutex m;
    return std::unique_lock<std::mutex>(m);
}

void ensure_runtime() {
    Runtime& r = runtime();
    if (!r.error().empty()) throw BackendUnavailable("kokkos: " + r.error());
    if (g_finalized || !Kokkos::is_initialized())
        throw BackendUnavailable("kokkos: Kokkos was finalized in this process (by the application or at exit); "
                                 "open the device before Kokkos::finalize");
}

bool runtime_alive() noexcept { return !g_finalized && Kokkos::is_initialized(); }

KokkosStream::~KokkosStream() {
    // After finalize an instance must not be destroyed through Kokkos: leak it.
    if (!runtime_alive()) (void)space_.release();
}

void KokkosStream::synchronize() {
    try {
        auto lock = fence_lock();
        space_->fence();
    } catch (const std::exception& e) {
        throw DeviceError(std::string("kokkos: fence of the execution-space instance failed: ") + e.what(), 0,
                          "KokkosFenceFailed");
    }
}

void KokkosEvent::do_record(Stream& s) {
    s.synchronize();
    time = std::chrono::steady_clock::now();
}

KokkosDevice::KokkosDevice() : Device(kokkos_info()) {}

DeviceHandle KokkosDevice::do_allocate(std::size_t bytes) {
    void* p = nullptr;
    try {
        p = Kokkos::kokkos_malloc<MemSpace>("accel::buffer", bytes);
    } catch (const std::exception& e) {
        throw OutOfMemory("allocate: Kokkos refused " + std::to_string(bytes) + " bytes in " + MemSpace::name() +
                          " on kokkos:0 (" + std::to_string(info().global_memory_bytes) +
                          " bytes of memory in total): " + e.what());
    }
    runtime().track(p);
    return p;
}

void KokkosDevice::do_deallocate(DeviceHandle h) noexcept {
    // After finalize the memory is gone with Kokkos (freed at finalize or by it).
    if (!runtime_alive()) return;
    if (runtime().untrack(h)) Kokkos::kokkos_free<MemSpace>(h);
}

// Overlapping ranges of one buffer are not supported by deep_copy (memcpy semantics).
void KokkosDevice::do_copy_h2d(DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes, Stream& s,
                               bool blocking) {
    copy_on(s, Bytes(bytes_at(dst, off), bytes), ConstHostBytes(static_cast<const char*>(src), bytes), blocking);
}

void KokkosDevice::do_copy_d2h(void* dst, DeviceHandle src, std::size_t off, std::size_t bytes, Stream& s,
                               bool blocking) {
    copy_on(s, HostBytes(static_cast<char*>(dst), bytes), ConstBytes(bytes_at(src, off), bytes), blocking);
}

void KokkosDevice::do_copy_d2d(DeviceHandle dst, std::size_t doff, DeviceHandle src, std::size_t soff,
                               std::size_t bytes, Stream& s, bool blocking) {
    copy_on(s, Bytes(bytes_at(dst, doff), bytes), ConstBytes(bytes_at(src, soff), bytes), blocking);
}

std::unique_ptr<Stream> KokkosDevice::do_create_stream() { return std::make_unique<KokkosStream>(*this); }
std::unique_ptr<Event> KokkosDevice::do_create_event() { return std::make_unique<KokkosEvent>(*this); }

double KokkosDevice::do_elapsed_ms(Event& start, Event& end) {
    const auto& a = static_cast<KokkosEvent&>(start);
    const auto& b = static_cast<KokkosEvent&>(end);
    return std::chrono::duration<double, std::milli>(b.time - a.time).count();
}

void KokkosDevice::do_synchronize() {
    auto lock = fence_lock();
    Kokkos::fence();
}

LaunchGeometry KokkosDevice::do_default_geometry(Op op, std::size_t rows, std::size_t cols) const {
    if (op == Op::matmul || op == Op::dense) {
        const std::size_t t = host_space() ? 32 : 16;
        return geometry_2d(rows, cols, Dim3{t, t, 1}, t, t, info().limits);
    }
    return geometry_1d(rows * cols, host_space() ? 1024 : 256, info().limits);
}

bool KokkosDevice::do_has_vendor_library() const { return have_vendor_blas(); }

}  // namespace kokkos
}  // namespace accel

ACCEL_DEFINE_PLUGIN("kokkos", accel::kokkos::KokkosBackend)
