// The Kokkos backend: accel's ops written once for Kokkos' default execution
// space and its memory space, so the same plugin runs on Serial, OpenMP,
// Threads, CUDA, HIP ... whichever backends the Kokkos it is built against has.
//
// Lifetime of Kokkos. Probing never touches Kokkos: probe() reports the
// device from the execution spaces the plugin was compiled for (host spaces:
// the CPU; CUDA/HIP: the runtime's device count, which needs no Kokkos
// initialization), so a program that selects another backend never starts
// Kokkos' threads or a GPU context. create_device initializes Kokkos with
// Kokkos' own defaults (the user's KOKKOS_* environment variables apply) when
// nobody has; if the application initialized Kokkos itself (before opening
// a Kokkos device), the plugin uses that runtime and never finalizes it. Otherwise
// Kokkos is finalized exactly once at process exit, from the destructor of a
// function-local static object (an __attribute__((destructor)) runs too late
// and crashed). Memory still allocated when Kokkos is finalized — by the
// plugin at exit or by the application — is freed at the start of that
// finalize (a Kokkos finalize hook), so tensors alive past main or past the
// application's finalize never crash; deallocate() afterwards is a no-op.
// After the application finalized Kokkos every other entry point (ops,
// copies, allocation, streams, events, synchronize, open_device) throws
// BackendUnavailable ("Kokkos was finalized by the application") instead of
// calling into a finalized Kokkos. A stream destroyed after finalize drops
// its execution-space handle without destroying it (a few bytes).
//
// Linking. The plugin must share the application's Kokkos: Kokkos is found
// as a shared library (or a PIC static one, which the plugin then carries as
// its own copy — an application linking another Kokkos would get two
// runtimes; CMake warns). A static non-PIC Kokkos cannot go into a shared
// plugin and is refused at configure time.
//
// Devices. One device per execution space the linked Kokkos enabled, all
// served by one Kokkos initialization: kokkos:0 is the default execution
// space, then the other spaces in the order Cuda, HIP, OpenMP, Threads,
// Serial (skipping the default). A selector names a space by its name in
// lower case (kokkos:cuda, kokkos:hip, kokkos:openmp, kokkos:threads,
// kokkos:serial), which is also each device's stable selector; a space the
// build lacks is refused naming the spaces it has. Kokkos initializes every
// enabled space at once, so in a build with a device space (CUDA, HIP) no
// space can be used on a machine without that GPU. For device spaces the GPU
// is the one Kokkos picked: set KOKKOS_DEVICE_ID (or CUDA_VISIBLE_DEVICES /
// ROCR_VISIBLE_DEVICES) before the process starts to choose it.
// SYCL, HPX, OpenMPTarget and OpenACC are not among the spaces: a Kokkos
// whose default space is one of them does not build the plugin.
//
// Thread-safety (the contract of accel/device.hpp). Kokkos 3.x does not allow
// two host threads to dispatch into one execution-space instance at once (the
// Serial and OpenMP instances share their team scratch and thread pool). So
// every dispatch of the plugin — parallel_for, deep_copy, Kokkos Kernels'
// gemm, creating an instance — runs under one process-wide lock
// (dispatch_lock(), which also checks that Kokkos is still up); on host
// spaces fences take it too. Threads sharing Kokkos devices therefore submit in
// some serial order; on host spaces their ops run one at a time, each on all
// of Kokkos' threads.
//
// Streams. Where a space has independent instances (CUDA, HIP, SYCL with
// Kokkos >= 4), each stream is a new instance (Kokkos::Experimental::
// partition_space: its own CUDA/HIP stream or SYCL queue), so work on two
// streams may overlap on the device; the vendor gemm runs on the stream's
// instance (Kokkos Kernels >= 4). On host spaces (Serial, OpenMP, Threads)
// every stream is the default instance, by choice: host kernels run to
// completion while the dispatching thread holds the lock, so separate
// instances could not overlap, and an OpenMP partition owns a fixed share of
// the threads (threads / streams), which would leave each op on a fraction
// of the CPU and, with more streams than threads, cannot be made at all
// (Kokkos aborts). The plugin never partitions a host space, so any number
// of streams works. On Kokkos 3 every stream is the default instance.
//
// Launch geometry (LaunchGeometry in CUDA terms) on Kokkos:
//  - Elementwise ops and column_sum run a RangePolicy over [0, n) on the
//    stream's execution-space instance: block.x is the chunk size (indices
//    handed to a thread at once); grid is validated but not used, since a
//    RangePolicy has no grid — Kokkos spreads the chunks over its threads.
//  - matmul and dense run a TeamPolicy: league size = grid.x·grid.y·grid.z
//    (capped at the number of output tiles: extra teams would have no work),
//    each team computes tiles of block.y rows × block.x columns of the output,
//    one logical thread per output element, walking the tiles grid-stride.
//    Device spaces, as Kokkos maps a CUDA block (threadIdx.x → vector lane,
//    threadIdx.y → team rank): vector length = the largest power of two ≤
//    min(block.x, TeamPolicy::vector_length_max()), team size = min(block.y,
//    TeamPolicy::team_size_max) (CUDA: up to 32 lanes × 1024/32 threads).
//    Team threads and lanes stride over the tile's rows and columns, so the
//    tile the user gave is honoured whatever the space can run at once (only
//    the parallelism inside a team changes); nothing is clamped silently in
//    the result. Host spaces: one thread per team, which computes its tiles
//    alone with vectorized loops (kernels/matmul.hpp), so the league's tiles
//    are spread over all of Kokkos' threads. block.z must be 1.
//  - fma_throughput on host spaces runs kFmaLanes (16) elements per index
//    (vector instructions) with a chunk of block.x / 16 indices.
//  - Default geometry: 16×16 tiles on device spaces; on host spaces the
//    rectangles the host backend splits a product into for its threads (all
//    of C for one thread; kernels/matmul.hpp host_gemm_rectangle), one per
//    block, grid.y capped at the grid limit (tiles are walked grid-stride,
//    so tall outputs still run).
//  - Limits: device spaces at most 1024 logical threads per block (a CUDA
//    block's size, and its scratch fits level 0 or level 1 of every space);
//    host spaces INT_MAX (a block is a chunk or a rectangle one thread
//    computes); grids as CUDA's. check_geometry() in the op front-end rejects
//    anything beyond them.
#pragma once

#include <accel/device.hpp>
#include <accel/plugin.hpp>

#include "kernels/views.hpp"
#include "../common/device_names.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

namespace accel {
namespace kokkos {

/// Initializes Kokkos if nobody has (thread-safe, once per process; called
/// by create_device only, never by a probe) and arranges its finalization at
/// exit (see the file comment). Throws BackendUnavailable when Kokkos cannot
/// be used: it was finalized (by the application, or already at exit), or
/// Kokkos::initialize threw.
void ensure_runtime();

/// Throws BackendUnavailable ("Kokkos was finalized by the application")
/// unless runtime_alive(). Called first by every entry point of the plugin.
void require_runtime();

/// Whether Kokkos may still be used by the plugin: false after the plugin's
/// exit-time finalize or after the application finalized Kokkos.
bool runtime_alive() noexcept;

/// Records a live allocation of the plugin, with the function that frees it
/// in its memory space (called at the start of Kokkos' finalize if it is
/// still live then). Thread-safe.
void track_allocation(void* p, void (*free_fn)(void*));
/// Forgets a live allocation; true if it was live. Thread-safe.
bool untrack_allocation(void* p);

/// The mutex behind dispatch_lock() (the finalize hook takes it bare).
std::mutex& dispatch_mutex();

/// Locks dispatch_mutex() (see the file comment), then checks that Kokkos
/// is still up: throws BackendUnavailable (lock released) if it was
/// finalized, so no dispatch can reach a finalized Kokkos.
std::unique_lock<std::mutex> dispatch_lock();

/// Whether each stream of a device on `Space` gets an independent
/// execution-space instance (device spaces with Kokkos >= 4) rather than the
/// default instance.
template <class Space>
constexpr bool independent_streams() noexcept {
#if KOKKOS_VERSION >= 40000
    return !is_host_space<Space>;
#else
    return false;
#endif
}

/// dispatch_lock() on host spaces, where a fence must not overlap a dispatch
/// (throws BackendUnavailable as it does); an empty lock on device spaces,
/// whose instances fence independently.
template <class Space>
std::unique_lock<std::mutex> fence_lock() {
    return is_host_space<Space> ? dispatch_lock() : std::unique_lock<std::mutex>();
}

/// The selector word of execution space `Space`: its Kokkos name in lower
/// case ("cuda", "hip", "openmp", "threads", "serial").
template <class Space>
std::string space_word() {
    return lower(Space::name());
}

/// A stream: an execution-space instance of `Space` — a new, independent one
/// where independent_streams<Space>(), else the default instance (see the
/// file comment); synchronize() fences it. Thread-safety: as any Stream
/// (accel/device.hpp).
template <class Space>
class KokkosStream final : public Stream {
public:
    /// Creates the instance. Throws BackendUnavailable once Kokkos was finalized.
    explicit KokkosStream(Device& d);
    /// A stream over a program's own instance `space` (a handle copy: the
    /// instance stays the program's).
    KokkosStream(Device& d, const Space& space);
    /// Releases the instance without touching Kokkos once Kokkos is gone.
    ~KokkosStream() override;
    /// instance().fence(); BackendUnavailable once Kokkos was finalized,
    /// DeviceError if Kokkos reports a failure.
    void do_synchronize() override;
    /// The execution-space instance kernels and copies are enqueued on.
    const Space& instance() const noexcept { return *space_; }

private:
    std::unique_ptr<Space> space_;
};

/// An event: recording fences the stream's instance, then reads
/// std::chrono::steady_clock. Kernel time on Kokkos is therefore
/// fence-to-fence host time (DeviceInfo::timer = "fence + steady_clock"); it
/// includes the launch overhead that a CUDA event would not.
class KokkosEvent final : public Event {
public:
    explicit KokkosEvent(Device& d) : Event(d) {}
    std::chrono::steady_clock::time_point time{};

protected:
    void do_record(Stream& s) override;
    void do_synchronize() override {}  // complete once recorded (record fenced)
};

/// The device of execution space `Space` (kokkos:0 for the default space).
/// Its members are defined in kokkos_backend.cpp (runtime), kokkos_ops.cpp
/// (kernels, probes) and kokkos_interop.cpp (interop, program kernels), each
/// instantiated there for every space (ACCEL_KOKKOS_FOR_EACH_SPACE).
template <class Space>
class KokkosDevice final : public Device, public Probes, public NativeInterop, public KernelBuilder {
public:
    // Probes (contracts in accel/device.hpp; kokkos_ops.cpp).
    ACCEL_PROBES_OVERRIDES

    /// The memory every tensor of the device lives in.
    using MemSpace = typename Space::memory_space;

    // NativeInterop (kokkos_interop.cpp): the execution space instance of
    // the default stream or of a stream; memory is a pointer of MemSpace.
    ACCEL_NATIVE_INTEROP_OVERRIDES  // accel/plugin.hpp

    /// Fills DeviceInfo from Kokkos (space names, concurrency, version,
    /// configuration, memory) for device `index` of the backend, and
    /// registers the kernels. Kokkos must be initialized (ensure_runtime()).
    explicit KokkosDevice(int index);

protected:
    ACCEL_DEVICE_RUNTIME_OVERRIDES  // the runtime every device has (accel/plugin.hpp)
    /// Its capabilities (accel/capability.hpp).
    void* do_capability(std::string_view name) noexcept override {
        return accel::offer_capability<Probes, NativeInterop, KernelBuilder>(this, name);
    }
    // KernelBuilder: a program's own kernels.
    std::shared_ptr<accel::BuiltKernel> build_program_kernel(const accel::KernelSource& source) override;
    /// Elementwise: chunks of 1024 (host spaces) or 256 (device spaces),
    /// grid covering n. matmul/dense: the host GEMM's rectangles on host
    /// spaces, 16×16 tiles on device spaces.
    LaunchGeometry do_default_geometry(Op op, DType dtype, std::size_t rows, std::size_t cols) const override;
    std::string do_unsupported_reason(Op op, DType dtype, OpPath path) const override;  // kokkos_ops.cpp

private:
    /// Registers every op in f32, f64, f16 and bf16 (kokkos_ops.cpp).
    void register_kernels();
    /// Frees memory do_allocate took (at deallocate, or at Kokkos' finalize).
    static void free_memory(void* p) { Kokkos::kokkos_free<MemSpace>(p); }
};

/// The execution-space instance of a stream of a KokkosDevice<Space>.
template <class Space>
const Space& instance_of(Stream& s) {
    return static_cast<KokkosStream<Space>&>(s).instance();
}

/// Whether the plugin was built with Kokkos Kernels (the vendor path).
bool have_vendor_blas() noexcept;

/// The vendor path for accel-info on the space named `space` (Kokkos'
/// name, e.g. "OpenMP"): Kokkos Kernels' version and which instance the
/// gemm runs on, or "none (...)".
std::string vendor_text(const std::string& space);

/// Vendor path: C[M,N] = op(A)·op(B) + beta·C with KokkosBlas::gemm on
/// row-major (LayoutRight) views of Space's memory on the stream's instance
/// `space` (Kokkos Kernels >= 4; the default instance before); K == 0 is
/// handled by the caller. T: float or double. Throws Unsupported when built
/// without Kokkos Kernels, BackendUnavailable once Kokkos was finalized.
template <class Space, class T>
void gemm_vendor(const Space& space, const T* a, const T* b, T* c, std::size_t m, std::size_t n, std::size_t k,
                 bool ta, bool tb, double beta);

}  // namespace kokkos
}  // namespace accel
