// accel/plugin.hpp — the binary interface between libaccel and a backend plugin.
#pragma once

#include <accel/device.hpp>

/// Bumped whenever Device/Backend/Stream/Event/DeviceInfo/KernelArgs/
/// KernelTable or accel_plugin_info change layout or virtuals — not when an
/// op is added: kernels are registered by op (KernelTable::add), and built-in op
/// values only grow, so a plugin built before an op existed loads and
/// reports that op unsupported. 3: DeviceInfo gained uuid, pci_bus_id and
/// host; Device's constructor moved into libaccel. 4: kernels are data
/// (register_kernel, KernelArgs, dtypes); probes moved to Probes. 5:
/// Device::do_tile_layout; Probes::fma_throughput takes a dtype. 6: plugins
/// are found by scanning their folders and describe themselves
/// (selector_forms, auto_rank, auto_cpu_fallback); kernels are registered by
/// Op and a device states the kernels it claims (now KernelTable::claim).
/// 7: Stream::synchronize is non-virtual (traced); backends implement
/// Stream::do_synchronize; Device tracks its allocations (memory_info,
/// set_memory_limit) and asks do_cached_bytes / do_release_cached.
/// 8: Device::do_map_host_memory / do_unmap_host_memory (tensors over host
/// memory without a copy); Buffer may wrap host memory. 10: a device's
/// kernels are a KernelTable of their own (Device::kernel_table(): add,
/// claim); KernelArgs gained `tile` (TileLayout::variant), which the
/// front-end chooses once for tiled ops; Device lost the Tensor copy forms.
/// 11: Activation gained gelu and gelu_tanh (KernelArgs::act 3 and 4), which
/// a plugin built before would run as none. 12: NativeInterop (a program's
/// own kernels, runtime objects both ways). 13: DeviceInfo gained
/// `determinism`, what a device's native kernels promise in deterministic
/// mode; Device holds the mode. 14: DeviceInfo gained `subnormals`, the
/// dtypes whose subnormal values a device's kernels may flush to zero;
/// Probes gained matrix_throughput (the matrix engine's peak) and
/// gemm_compute (the unit each dtype and path of matmul/dense runs on);
/// fma_throughput takes f16 (half arithmetic). 15: Device::do_tuning (the
/// Tuning interface: tunable kernels, candidates, set_params) and the tuning
/// record's state; do_tile_layout takes the dtype. 17: capabilities by name
/// (accel/capability.hpp: Device::do_capability) in place of do_probes,
/// do_tuning, do_interop and do_build_kernel; program kernels through the
/// KernelBuilder capability; the macros that declared capability overrides
/// (and switched access) went.
#define ACCEL_PLUGIN_ABI 17

extern "C" {
/// What a plugin's entry point returns. Plain C layout so that the ABI check
/// reads it safely before any C++ object crosses the boundary. Every field
/// is checked by the registry before it is used (plugins are untrusted).
struct accel_plugin_info {
    int abi_version;           ///< must equal ACCEL_PLUGIN_ABI
    /// The backend's name, as selectors write it: a lower-case letter, then
    /// [a-z0-9_]*, at most 32 characters, not "auto" or "all"; equal to NAME
    /// in the plugin's file name libaccel-backend-NAME.so.
    const char* backend_name;
    /// Returns the process-wide Backend object (owned by the plugin, never
    /// deleted: plugins stay loaded until the process ends).
    accel::Backend* (*backend)();
    /// sizeof(accel::KernelArgs) in the plugin's build: checked beside
    /// abi_version, so a mismatched header is caught even without a bump.
    unsigned long kernel_args_size;
    /// The selector forms this backend takes beyond NAME and NAME:N (those
    /// every backend takes), for the grammar that error messages and
    /// accel-info print, e.g. "opencl:PLATFORM[:I] | opencl:gpu|cpu". Its
    /// Backend::find_device resolves them. Null or "" when there are none;
    /// at most 400 printable ASCII characters.
    const char* selector_forms;
    /// Where `auto` ranks this backend's GPUs (Availability::has_gpu): among
    /// backends that report one, the highest rank is opened. 0..1000; 0 =
    /// `auto` never opens this backend's GPUs. In-tree: cuda 40, opencl 20,
    /// kokkos 10.
    int auto_rank;
    /// 1: `auto` opens this backend when no backend reports a GPU (the host
    /// backend); 0: never. Among several such backends, the highest
    /// auto_rank, then the first name in alphabetical order.
    int auto_cpu_fallback;
};
/// The symbol every plugin exports.
typedef const accel_plugin_info* (*accel_plugin_entry_fn)();
}

/// Declares, inside a backend's Device subclass, its overrides of the
/// runtime every device has: exactly the pure virtuals of accel::Device
/// (memory, copies, streams, events, synchronization; contracts in
/// accel/device.hpp), in the section where it stands (it changes no access).
/// Everything else a device has it declares itself: the optional hooks it
/// overrides and its capabilities (accel/capability.hpp, do_capability).
#define ACCEL_DEVICE_RUNTIME_OVERRIDES                                                                             \
    accel::DeviceHandle do_allocate(std::size_t bytes) override;                                                   \
    void do_deallocate(accel::DeviceHandle h) noexcept override;                                                   \
    void do_copy_h2d(accel::DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes,                 \
                     accel::Stream& s, bool blocking) override;                                                    \
    void do_copy_d2h(void* dst, accel::DeviceHandle src, std::size_t off, std::size_t bytes, accel::Stream& s,     \
                     bool blocking) override;                                                                      \
    void do_copy_d2d(accel::DeviceHandle dst, std::size_t dst_off, accel::DeviceHandle src, std::size_t src_off,   \
                     std::size_t bytes, accel::Stream& s, bool blocking) override;                                 \
    std::unique_ptr<accel::Stream> do_create_stream() override;                                                    \
    std::unique_ptr<accel::Event> do_create_event() override;                                                      \
    double do_elapsed_ms(accel::Event& start, accel::Event& end) override;                                         \
    void do_synchronize() override;

/// Declares, inside a backend's Device subclass that offers NativeInterop
/// (accel/native.hpp), its overrides of NativeInterop's six pure virtuals:
/// object, queue, memory, adopt, release and stream_over (contracts in
/// accel/native.hpp), in the section where it stands (it changes no
/// access). zero_is_a_queue, which has a default, a device declares itself
/// where it differs.
#define ACCEL_NATIVE_INTEROP_OVERRIDES                                                                             \
    std::uint64_t object(const std::string& name) override;                                                        \
    std::uint64_t queue(accel::Stream& stream) override;                                                           \
    accel::NativeMemory memory(void* handle, std::size_t bytes) override;                                          \
    void* adopt(const accel::NativeMemory& memory) override;                                                       \
    void release(void* handle) noexcept override;                                                                  \
    std::unique_ptr<accel::Stream> stream_over(std::uint64_t queue) override;

/// The same for Probes (accel/device.hpp): launch_empty and fma_throughput.
#define ACCEL_PROBES_OVERRIDES                                                                                     \
    void launch_empty(accel::Stream& s) override;                                                                  \
    void fma_throughput(accel::DeviceHandle y, accel::DType dtype, std::size_t n, std::size_t iterations,          \
                        const accel::LaunchGeometry& g, accel::Stream& s) override;

/// The same for PageLockedMemory (accel/page_locked.hpp): allocate_page_locked
/// and free_page_locked.
#define ACCEL_PAGE_LOCKED_MEMORY_OVERRIDES                                                                         \
    void* allocate_page_locked(std::size_t bytes) override;                                                        \
    void free_page_locked(void* data) noexcept override;

/// The same for GraphRecorder (accel/graph.hpp): graph_mechanism and
/// record_graph.
#define ACCEL_GRAPH_RECORDER_OVERRIDES                                                                             \
    std::string graph_mechanism() const override;                                                                  \
    std::shared_ptr<accel::NativeGraph> record_graph(const std::function<void(accel::Stream&)>& enqueue) override;

/// Defines the entry point of a plugin whose Backend class is BackendClass:
/// NAME the backend's name, SELECTOR_FORMS, AUTO_RANK and AUTO_CPU_FALLBACK
/// the accel_plugin_info fields above, e.g.
///   ACCEL_DEFINE_PLUGIN("toy", ToyBackend, "", 0, 0)
#define ACCEL_DEFINE_PLUGIN(NAME, BackendClass, SELECTOR_FORMS, AUTO_RANK, AUTO_CPU_FALLBACK) \
    extern "C" __attribute__((visibility("default"))) const accel_plugin_info* accel_backend_plugin() { \
        static const accel_plugin_info info{ACCEL_PLUGIN_ABI,                                          \
                                            NAME,                                                      \
                                            []() -> accel::Backend* {                                  \
                                                static BackendClass instance;                          \
                                                return &instance;                                      \
                                            },                                                         \
                                            sizeof(accel::KernelArgs),                                 \
                                            SELECTOR_FORMS,                                            \
                                            AUTO_RANK,                                                 \
                                            AUTO_CPU_FALLBACK};                                        \
        return &info;                                                                                  \
    }

