// accel/device.hpp — the abstract device interface every backend implements.
//
// Design (after ggml-backend and TVM's DeviceAPI): public methods are
// non-virtual and validate their arguments (bounds, sizes, same device), then
// call protected do_* virtuals that backends implement and that trust their
// inputs. A Device has three concerns: its memory and copies, its streams
// and events (with launch geometry), and its kernels, which are an object of
// their own (KernelTable, accel/kernel_table.hpp) that the op front-end
// (accel/ops.hpp) reads. Adding an op adds an entry to the op table
// (accel/op_table.hpp) and kernels where they exist; no interface changes,
// and a plugin built before the op existed reports it unsupported.
#pragma once

#include <accel/capability.hpp>
#include <accel/dtype.hpp>
#include <accel/geometry.hpp>
#include <accel/kernel_args.hpp>
#include <accel/kernel_source.hpp>
#include <accel/kernel_table.hpp>
#include <accel/native.hpp>
#include <accel/op_table.hpp>
#include <accel/tuning.hpp>

#include <cstddef>
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace accel {

class Device;
class Buffer;
class Stream;

/// What a device's matmul and dense kernels compute with in one dtype on one
/// path: the unit whose peak their benchmark rows are measured against.
struct GemmCompute {
    enum class Unit {
        fma,     ///< vector FMA units (SIMT lanes, CPU SIMD) in the width `type`
        matrix,  ///< the matrix engine (tensor cores) on `type` operands, f32 accumulators
    };
    Unit unit = Unit::fma;
    /// fma: the arithmetic's width (f32 or f64; f16 where a kernel computes in
    /// half); matrix: the operands' dtype (f16 or bf16).
    DType type = DType::f32;
};

/// Benchmark probes of a device (accel/diagnostics.hpp calls them, after
/// validation): not ops, and not part of the op interface. Implemented by
/// backends that have them (Device::probes()).
class Probes {
public:
    static constexpr std::string_view capability_name = "accel.probes/1";
    virtual ~Probes() = default;
    /// Enqueues a kernel that does nothing (one block of one thread) on `s`.
    virtual void launch_empty(Stream& s) = 0;
    /// Peak-FMA probe (clpeak-style) in `dtype`, a compute type: f32, f64, or
    /// f16 where the device computes in half (16-bit storage alone computes in
    /// f32). Work-item i keeps 8 independent accumulators a_j = i * 1e-9 + j
    /// (computed in float32, then rounded to `dtype`), runs `iterations`
    /// rounds of a_j = fma(a_j, r, c) on each, and writes y[i] = Σ_j a_j
    /// (y[n] of `dtype`, the sum in `dtype`). r, c: float32 literals 0.9999
    /// and 1e-4 in f32 and f64; in f16 the half values of 0.999 and 0.001
    /// (0.9999 rounds to 1 in half). FLOPs = 16 * iterations * n. Throws
    /// Unsupported where the device has no probe in `dtype` (f64 without
    /// double precision, f16 without half arithmetic).
    virtual void fma_throughput(DeviceHandle y, DType dtype, std::size_t n, std::size_t iterations,
                                const LaunchGeometry& g, Stream& s) = 0;
    /// Peak of the matrix engine on `dtype` operands (f16 or bf16) with f32
    /// accumulators: y[n] (f32, n a multiple of 32) is n / 32 groups of 32
    /// lanes (a CUDA warp); each group keeps 8 independent 16×8 accumulator
    /// tiles, chain j starting at j in every element, and runs `iterations`
    /// rounds of C_j = A·B + C_j (m16n8k16: A 16×16 and B 16×8, every element
    /// 1/4, so each round adds exactly 1); lane l writes y[32·w + l] = the sum
    /// of its 4 values of every tile, 112 + 32·iterations
    /// (reference::matrix_throughput_value). FLOPs = 8 · 4096 · iterations ·
    /// n / 32. The default throws Unsupported (no matrix engine probe);
    /// backends whose kernels use one override it, and throw Unsupported
    /// where the device lacks the engine.
    virtual void matrix_throughput(DeviceHandle y, DType dtype, std::size_t n, std::size_t iterations, Stream& s);
    /// What matmul and dense compute with in `dtype` on `path`. The default:
    /// FMA units in f64 for f64 and in f32 otherwise (16-bit operands widened
    /// to f32), as accel's native kernels; a backend whose kernels or vendor
    /// library use a matrix engine overrides it. Never throws.
    virtual GemmCompute gemm_compute(DType dtype, OpPath path) const noexcept;
    /// gemm_compute's default: FMA in f64 for f64, in f32 otherwise.
    static GemmCompute gemm_compute_default(DType dtype) noexcept;
};

/// The tunable kernels of a device (Device::tuning()): what `accel-bench
/// tune` searches and what a tuning record (accel/tuning.hpp) sets. A
/// backend with parameterized kernels implements it (OpenCL, Vulkan); the
/// others have none (Device::tuning() returns nullptr: nothing to tune).
///
/// The promise every implementation keeps: no parameter set changes a
/// result. Each element of a product keeps the one summation order of the
/// default (K walked in order into one accumulator per element, or the
/// default's own split where a kernel splits K), so a call gives the same
/// bits with any candidate as with the default, and deterministic mode
/// holds whatever the record says. candidates() offers only such sets;
/// set_params() refuses any other.
///
/// Thread-safety: every method may be called from any thread; set_params
/// and reset_params change what later ops of the key run with on every
/// thread (ops already enqueued keep theirs), so a tuner runs alone on the
/// device.
class Tuning {
public:
    static constexpr std::string_view capability_name = "accel.tuning/1";
    virtual ~Tuning() = default;
    /// Every key this device can tune (op, dtype, shape class), in a fixed
    /// order. Never throws beyond std::bad_alloc.
    virtual std::vector<TuningKey> tunable() const = 0;
    /// The parameters `key` runs with when no record or trial sets them.
    /// Throws InvalidArgument for a key not in tunable().
    virtual TuningParams default_params(const TuningKey& key) const = 0;
    /// The parameter sets worth measuring for `key`, the default first, each
    /// one set_params accepts; `quick`: a short list (at most about 8).
    /// Throws InvalidArgument for a key not in tunable().
    virtual std::vector<TuningParams> candidates(const TuningKey& key, bool quick) const = 0;
    /// The parameters `key` runs with now. Throws InvalidArgument for a key
    /// not in tunable().
    virtual TuningParams params(const TuningKey& key) const = 0;
    /// Makes later ops of `key` run with `p` (kernels are built on first
    /// use). Throws InvalidArgument naming the parameter and the accepted
    /// values when `p` is not a valid set for `key` on this device (a name
    /// missing or unknown, a value out of range, a set that would change the
    /// summation order), or for a key not in tunable(); nothing changes then.
    virtual void set_params(const TuningKey& key, const TuningParams& p) = 0;
    /// Every key back to its default. Never throws.
    virtual void reset_params() noexcept = 0;
    /// One line for people: what `p` means for `key` (tile, work per item...).
    /// Default: params_text(p).
    virtual std::string describe(const TuningKey& key, const TuningParams& p) const;
};

/// An in-order queue of device work (CUDA stream, OpenCL command queue,
/// Kokkos execution-space instance). Work on one stream runs in submission
/// order. Created by Device::create_stream(); must not outlive its device.
/// Thread-safety: any thread may submit to and synchronize any stream, also
/// concurrently (see Device); destroying a stream while another thread still
/// submits to it is a use-after-free, as for any object.
class Stream {
public:
    virtual ~Stream();
    /// Blocks the calling host thread until all work submitted to this stream
    /// has finished. Throws DeviceError if the runtime reports a failure.
    void synchronize();
    /// The device this stream belongs to.
    Device& device() const noexcept { return *device_; }

protected:
    explicit Stream(Device& d) : device_(&d) {}
    /// The backend's wait for this stream's work (synchronize() adds the trace).
    virtual void do_synchronize() = 0;

private:
    Device* device_;
};

/// A marker recorded on a stream; the time between two events of one device
/// is Device::elapsed_ms(). Created by Device::create_event().
/// Thread-safety: an Event may be recorded on one thread and waited for or
/// timed on another after that record() returned; recording the same Event
/// from two threads at once is a data race (use one Event per thread).
class Event {
public:
    virtual ~Event() = default;
    /// Records the event on `stream`: it completes when all work submitted to
    /// the stream before it has completed. Throws InvalidArgument if the
    /// stream belongs to another device.
    void record(Stream& stream);
    /// record(*stream), for the handle create_stream() returns. Throws
    /// InvalidArgument for a null stream.
    void record(const std::unique_ptr<Stream>& stream);
    /// Blocks until the event has completed. Throws InvalidArgument if it was
    /// never recorded.
    void synchronize();
    /// True once record() was called.
    bool recorded() const noexcept { return recorded_; }
    /// The device this event belongs to.
    Device& device() const noexcept { return *device_; }

protected:
    explicit Event(Device& d) : device_(&d) {}
    virtual void do_record(Stream& stream) = 0;
    virtual void do_synchronize() = 0;

private:
    Device* device_;
    bool recorded_ = false;
};

/// What a device's native kernels promise in deterministic mode
/// (Device::set_deterministic, ops::Options::deterministic,
/// ACCEL_DETERMINISTIC=1), stated by its backend. A backend that states
/// nothing (a default-constructed value) promises nothing: the mode then
/// refuses its ops (Unsupported) rather than give results it cannot vouch for.
struct Determinism {
    /// The same call (operands, shapes, dtype, launch geometry) gives
    /// bitwise-identical outputs on every run, on every stream and at every
    /// thread count of the runtime (host threads, OpenMP, an OpenCL CPU
    /// runtime's pthreads): no atomics, no sum split by thread count.
    bool reproducible = false;
    /// matmul, dense and dense_backward's dx: row i of the output is the
    /// same bits whether the call has 1, 7 or 4096 rows (the sum over k of
    /// each element runs in one order that does not depend on M, whatever
    /// tile or kernel the backend picks for the shape).
    bool batch_invariant = false;
    /// What the promise rests on (how the kernels sum), or why there is
    /// none; one sentence for accel-info.
    std::string basis;
};

/// Which dtypes' subnormal values a device's kernels may flush to zero,
/// stated by its backend from what the runtime reports: in such a dtype a
/// subnormal input may be read as a signed zero and a subnormal result
/// stored as one (flush-to-zero, denormals-are-zero), where IEEE 754 keeps
/// them (gradual underflow). A default value flushes nothing: every dtype
/// keeps its subnormals. Copies never flush (they move bytes).
struct Subnormals {
    /// The dtypes flushed, each at most once; empty: none.
    std::vector<DType> flushed;
    /// Why (what the runtime reports), one sentence for accel-info; empty
    /// when nothing is flushed.
    std::string basis;
    /// Whether `t`'s subnormals may be flushed. Never throws; thread-safe.
    bool flushes(DType t) const noexcept {
        for (DType f : flushed)
            if (f == t) return true;
        return false;
    }
};

/// What a device is, as reported by its runtime.
struct DeviceInfo {
    std::string backend;          ///< the backend's name, e.g. "host", "opencl", "cuda", "hip", "vulkan"
    int index = 0;                ///< index within the backend
    std::string name;             ///< e.g. "NVIDIA H100 80GB HBM3"
    std::string vendor;           ///< e.g. "NVIDIA Corporation"
    std::string type;             ///< "cpu" or "gpu" (or "accelerator")
    std::string driver_version;   ///< driver / platform version text
    std::string runtime_version;  ///< runtime / library version text
    int compute_units = 0;        ///< SMs, OpenCL compute units, CPU threads, Kokkos concurrency
    std::uint64_t global_memory_bytes = 0;  ///< device memory, bytes
    LaunchLimits limits;          ///< launch-geometry limits
    std::string timer;            ///< how kernel_ms is measured, e.g. "cudaEvent"
    /// A selector naming this device that survives a reordering of the
    /// runtime's device list, e.g. "opencl:pocl:0" (platform, index within
    /// it) where "opencl:2" depends on which ICDs are installed; empty where
    /// the index is stable already. Device::selector() returns it where set.
    std::string stable_selector;
    std::vector<std::pair<std::string, std::string>> extra;  ///< backend-specific key/value facts
    // ---- physical identity (what ties a device to one piece of hardware) ----
    /// The device's UUID as the runtime reports it, 32 lower-case hex digits
    /// in 8-4-4-4-12 groups ("5e3a0c0e-..."), e.g. CUDA's cudaDeviceProp::uuid
    /// or OpenCL's CL_DEVICE_UUID_KHR; empty where the runtime has none (the
    /// host backend, OpenCL without cl_khr_device_uuid).
    std::string uuid;
    /// PCI address "DDDD:BB:DD.F" (domain, bus, device, function; lower-case
    /// hex), e.g. "0000:65:00.0"; empty where unknown (CPUs, OpenCL without
    /// cl_khr_pci_bus_info).
    std::string pci_bus_id;
    /// Name of the machine the device is attached to (gethostname). Filled
    /// by libaccel when the device is created; backends leave it empty.
    std::string host;
    /// What the native kernels promise in deterministic mode (Determinism).
    Determinism determinism;
    /// The dtypes whose subnormals the kernels may flush to zero (Subnormals).
    Subnormals subnormals;
    /// The languages of KernelSource::code this device builds a program's
    /// kernel from, in the order it tries them, e.g. {"hip", "cuda"};
    /// "host" is KernelSource::host's C++ callable. Empty: it builds none.
    std::vector<std::string> kernel_languages;
};

/// The memory a device holds for accel (Device::memory_info()), in bytes.
struct MemoryInfo {
    std::uint64_t in_use = 0;  ///< allocated through Device::allocate (Buffer, Tensor) and not yet freed
    std::uint64_t peak_in_use = 0;  ///< the most in_use has been since the device was opened
    /// Freed by accel but kept by the backend for reuse (the CUDA backend's
    /// cache of freed blocks); 0 on backends without such a cache.
    std::uint64_t cached = 0;
    std::uint64_t limit = 0;   ///< Device::set_memory_limit's cap; 0: none
    std::uint64_t total = 0;   ///< the device's global memory (DeviceInfo::global_memory_bytes); 0: unknown
};

/// Whether `a` and `b` are one physical device seen twice, e.g. a GPU seen
/// through CUDA and through OpenCL: both report the same non-empty UUID, or
/// the same non-empty PCI bus id, and the same host. Devices of one backend
/// with one index are the same device too. Never throws; thread-safe.
bool same_physical_device(const DeviceInfo& a, const DeviceInfo& b) noexcept;

/// The DeviceInfo::uuid text of 16 raw UUID bytes (8-4-4-4-12 lower-case hex
/// groups); "" when every byte is 0 (runtimes report zeros for "unknown").
/// Never throws beyond std::bad_alloc; thread-safe.
std::string format_uuid(const unsigned char (&bytes)[16]);

/// The DeviceInfo::pci_bus_id text "DDDD:BB:DD.F" of a PCI address (lower-case
/// hex); "" when all four parts are 0 (unknown). Thread-safe.
std::string format_pci_bus_id(unsigned domain, unsigned bus, unsigned device, unsigned function);

/// This machine's host name (gethostname), or "unknown". Thread-safe.
std::string host_name();

/// One device of one backend. Obtain with accel::open_device(); shared by
/// every Buffer/Tensor allocated on it, so it lives as long as they do.
///
/// Thread-safety (the same contract on every backend, after the CUDA
/// runtime's): any host thread may call any method of a Device at any time,
/// concurrently with other threads. Work submitted to different streams from
/// different threads is independent; the default stream may be shared by
/// every thread, and work submitted to it from several threads runs in some
/// serial order. open_device() returns one shared Device per selector, so
/// threads that open the same selector share it safely. What stays the
/// caller's: two ops that write the same tensor, or one that reads a tensor
/// another is writing, without ordering them (same stream, or a synchronize
/// in between), race on its contents, as on any device. How each backend
/// keeps the contract is in its <name>_device.hpp.
class Device : public std::enable_shared_from_this<Device> {
public:
    virtual ~Device();
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    /// The device's facts (name, memory, limits, timer, ...).
    const DeviceInfo& info() const noexcept { return info_; }
    /// The selector that names this device, and keeps naming it when other
    /// runtimes are installed: info().stable_selector where the backend gives
    /// one (e.g. "opencl:pocl:0", the platform and the index within it),
    /// else "<backend>:<index>" (e.g. "host:0", "cuda:1"). open_device() of
    /// it opens this device.
    std::string selector() const;
    /// The device's name as its runtime reports it (info().name), e.g.
    /// "NVIDIA H100 80GB HBM3" or "pthread-Intel(R) Xeon(R) ...".
    const std::string& name() const noexcept { return info_.name; }

    // ---- memory -----------------------------------------------------------
    /// Allocates `bytes` of device memory. bytes == 0 returns nullptr.
    /// Throws OutOfMemory (naming the bytes asked and the device's total)
    /// when bytes exceeds global memory or the runtime refuses.
    /// Prefer Buffer, which frees automatically.
    DeviceHandle allocate(std::size_t bytes);
    /// Frees memory from allocate(); nullptr is ignored. Never throws.
    void deallocate(DeviceHandle h) noexcept;
    /// A handle through which this device's kernels read and write `bytes`
    /// of existing host memory at `data` in place, without a copy (as
    /// torch.from_numpy shares a NumPy array's memory), or nullptr where the
    /// device cannot address host memory so (the default; the host backend
    /// can, and its handle is `data` itself). `data` must stay valid until
    /// unmap_host_memory. Not counted in memory_info(). Prefer Buffer's
    /// host-memory constructor, which releases it. Throws InvalidArgument for
    /// null data with bytes > 0. Thread-safe.
    DeviceHandle map_host_memory(void* data, std::size_t bytes);
    /// Releases a handle from map_host_memory (not the host memory itself);
    /// nullptr is ignored. Never throws.
    void unmap_host_memory(DeviceHandle h) noexcept;
    /// Bytes in use and cached now, the cap and the total (MemoryInfo).
    /// Thread-safe; never throws.
    MemoryInfo memory_info() const noexcept;
    /// Caps what accel holds on this device: an allocation that would bring
    /// in-use plus cached bytes past `bytes` first makes the backend release
    /// its cache, then, if still past it, throws OutOfMemory. For tests and
    /// for sharing a device with another program (as PyTorch's
    /// set_per_process_memory_fraction); 0 removes the cap. Allocations
    /// already made stay. Thread-safe.
    void set_memory_limit(std::uint64_t bytes) noexcept;

    // ---- deterministic mode ------------------------------------------------
    /// Turns deterministic mode on or off for this device's ops that do not
    /// choose themselves (ops::Options::deterministic): every op then runs
    /// its native kernel, whose results are bitwise reproducible (and
    /// batch-invariant for matmul, dense and dense_backward) as
    /// info().determinism promises, and an op that cannot keep the promise
    /// throws Unsupported saying why (the vendor path asked for, a backend
    /// that promises nothing). The device starts with ACCEL_DETERMINISTIC
    /// (read when it is first opened; off when unset). Affects ops enqueued
    /// after the call. Thread-safe; never throws.
    void set_deterministic(bool on) noexcept { deterministic_.store(on, std::memory_order_relaxed); }
    /// Whether deterministic mode is on for this device (set_deterministic).
    /// Thread-safe; never throws.
    bool deterministic() const noexcept { return deterministic_.load(std::memory_order_relaxed); }

    // ---- copies (bounds-checked; InvalidArgument on a range past a buffer's
    // end or a buffer of another device). Blocking forms return when the copy
    // is complete. *_async forms enqueue on `stream` and may return before
    // the copy ran: host memory must stay valid and unchanged until the
    // stream is synchronized. Offsets and sizes are in bytes. --------------
    void copy_host_to_device(Buffer& dst, std::size_t dst_offset, const void* src, std::size_t bytes);
    void copy_device_to_host(void* dst, const Buffer& src, std::size_t src_offset, std::size_t bytes);
    void copy_device_to_device(Buffer& dst, std::size_t dst_offset, const Buffer& src,
                               std::size_t src_offset, std::size_t bytes);
    void copy_host_to_device_async(Buffer& dst, std::size_t dst_offset, const void* src,
                                   std::size_t bytes, Stream& stream);
    void copy_device_to_host_async(void* dst, const Buffer& src, std::size_t src_offset,
                                   std::size_t bytes, Stream& stream);
    void copy_device_to_device_async(Buffer& dst, std::size_t dst_offset, const Buffer& src,
                                     std::size_t src_offset, std::size_t bytes, Stream& stream);
    /// Blocking copy of `bytes` at byte `offset` of the memory behind
    /// `src` into host memory at `dst`, on `stream` after its earlier work
    /// (the others' work is not waited for). `src` is a handle this device
    /// handed out and has not freed (allocate, map_host_memory), e.g. an
    /// operand of a KernelArgs. Throws InvalidArgument when it is not, when
    /// the range runs past its end, for a null `dst` with bytes > 0, or for
    /// a stream of another device. Thread-safe.
    void read_handle(void* dst, DeviceHandle src, std::size_t offset, std::size_t bytes, Stream& stream);

    // ---- streams, events, synchronization ---------------------------------
    /// The stream used when an op or copy is given none. Created on first use
    /// (exactly once, also when several threads ask at once); lives as long as
    /// the device. Throws DeviceError if the runtime cannot create it.
    Stream& default_stream();
    /// A new independent stream on this device.
    std::unique_ptr<Stream> create_stream();
    /// A new event (not yet recorded).
    std::unique_ptr<Event> create_event();
    /// Milliseconds (≥ 0) between two completed events of this device.
    /// Throws InvalidArgument if either was not recorded or belongs to another
    /// device, or if `end` was recorded before `start` (events swapped).
    /// Precision: backend timer, see info().timer.
    double elapsed_ms(Event& start, Event& end);
    /// elapsed_ms(*start, *end), for the handles create_event() returns.
    /// Throws InvalidArgument for a null event, and as above.
    double elapsed_ms(const std::unique_ptr<Event>& start, const std::unique_ptr<Event>& end);
    /// Blocks until all work on every stream of this device has finished.
    void synchronize();

    // ---- launch geometry --------------------------------------------------
    /// The geometry the backend uses for `op` on tensors of `dtype` when the
    /// caller gives none. `rows`/`cols` describe the output in elements
    /// (elementwise: rows = 1, cols = n). The dtype matters where a kernel
    /// handles several elements per work-item in some dtypes only (OpenCL's
    /// f32 vector kernels). Thread-safe.
    LaunchGeometry default_geometry(Op op, DType dtype, std::size_t rows, std::size_t cols) const;

    /// The tile layout of this device's native kernel for tiled op `op`
    /// (op_info(op).tiled: matmul, dense) on a rows × cols output of
    /// `dtype`, or
    /// nullopt when that kernel accepts any geometry within the limits (or
    /// `op` is not tiled). The op front-end builds default geometry from it
    /// and rejects a caller's geometry that does not fit it
    /// (check_tiled_geometry). The layout may differ by dtype where a
    /// tuning record gives a dtype its own tile. Thread-safe.
    std::optional<TileLayout> tile_layout(Op op, DType dtype, std::size_t rows, std::size_t cols) const;

    // ---- kernels ------------------------------------------------------------
    /// The kernels this device runs and the ones its backend claims
    /// (KernelTable): where a program registers a kernel of an op it defined
    /// (define_op) and where tools ask supports(). Lives as long as the
    /// device. Thread-safe (see KernelTable).
    KernelTable& kernel_table() noexcept { return kernel_table_; }
    const KernelTable& kernel_table() const noexcept { return kernel_table_; }
    /// Deprecated since 0.2, removed in 0.3: kernel_table().supports(op, dtype, path).
    [[deprecated("use device.kernel_table().supports(op, dtype, path)")]] bool supports(Op op, DType dtype,
                                                                                    OpPath path) const noexcept {
        return kernel_table_.supports(op, dtype, path);
    }
    /// Deprecated since 0.2, removed in 0.3: kernel_table().supports(op, path) (f32).
    [[deprecated("use device.kernel_table().supports(op, path)")]] bool supports(Op op, OpPath path) const noexcept {
        return kernel_table_.supports(op, path);
    }

    /// The capability C of this device (accel/capability.hpp: Probes,
    /// Tuning, NativeInterop, KernelBuilder, PageLockedMemory, ...), or
    /// nullptr where its backend has none. Lives as long as the device.
    /// Thread-safe, never throws.
    template <class C>
    C* capability() noexcept {
        return static_cast<C*>(do_capability(capability_name_of<C>()));
    }

    /// The device's benchmark probes, or nullptr where the backend has none.
    Probes* probes() noexcept { return capability<Probes>(); }

    // ---- tuning (accel/tuning.hpp) -------------------------------------------
    /// The device's tunable kernels, or nullptr where it has none to tune.
    Tuning* tuning() noexcept { return capability<Tuning>(); }
    /// Reads this device's tuning record from record_folders() (the cache,
    /// then the installed database) and sets the parameters of its best
    /// entries (Tuning::set_params); a damaged, foreign or stale record is
    /// refused with a warning on stderr naming the file and what is wrong,
    /// and the next folder is tried (the defaults stay when none is usable).
    /// States the outcome in DeviceInfo::extra ("tuning record": the file
    /// used, or why none) and in tuning_record(). libaccel calls it once
    /// when it opens the device; a tuner calls it again after writing a
    /// record. Not concurrent with itself. Throws only std::bad_alloc (a bad
    /// ACCEL_CACHE_DIR is reported in the line, and the database still read).
    void load_tuning_record();
    /// The file of the record in use, or "" when the device runs its defaults.
    /// Not concurrent with load_tuning_record.
    const std::string& tuning_record() const noexcept { return tuning_record_; }

    /// Builds a program's own kernel for this device from the code
    /// `source` has for this backend (KernelSource; accel::UserKernel
    /// builds and launches through it). Throws InvalidArgument for a source
    /// without a name, Unsupported when it has no code for this backend
    /// (naming the field to fill) or the backend builds no kernels,
    /// DeviceError when the code fails to build (with the build log).
    /// Thread-safe.
    std::shared_ptr<BuiltKernel> build_kernel(const KernelSource& source);

    // ---- interop with the runtime underneath (accel/native.hpp; typed by
    // accel/interop/<backend>.hpp). `backend` names the runtime the caller
    // expects ("opencl", "cuda", ...): a device of another backend throws
    // InvalidArgument naming both, so a handle is never reinterpreted; a
    // backend without interop throws Unsupported. Thread-safe. -------------
    /// The runtime object `name` of this device (as the backend's interop
    /// header names it, e.g. "context"), as an integer. Throws
    /// InvalidArgument when `backend` is not this device's, Unsupported when
    /// the backend has no interop or no object so named (naming the ones it
    /// has). Thread-safe.
    std::uint64_t native_object(const std::string& backend, const std::string& name);
    /// Deprecated since 0.2, removed in 0.3: native_object(backend, name).
    [[deprecated("name the object: native_object(backend, \"context\")")]] std::uint64_t native_object(
        const std::string& backend, NativeObject what) {
        return native_object(backend, std::string(native_object_name(what)));
    }
    /// The native queue behind `stream`; InvalidArgument for a stream of another device.
    std::uint64_t native_queue(const std::string& backend, Stream& stream);
    /// The runtime's memory behind `buffer`; InvalidArgument for an empty
    /// buffer or one of another device.
    NativeMemory native_memory(const std::string& backend, const Buffer& buffer);
    /// A handle through which this device's copies and kernels use `memory`,
    /// which another library owns and keeps (accel never frees it): for
    /// Buffer's native-memory constructor, which releases it. Not counted in
    /// memory_info(). Throws InvalidArgument for a zero handle or zero bytes,
    /// or where the backend cannot use the memory so (naming why).
    DeviceHandle adopt_native_memory(const std::string& backend, const NativeMemory& memory);
    /// Releases a handle of adopt_native_memory (not the memory); nullptr
    /// is ignored. Never throws.
    void release_native_memory(DeviceHandle h) noexcept;
    /// A stream whose work goes to the program's own `queue` (a
    /// cl_command_queue, cudaStream_t, ... of this device's context), so
    /// accel's ops run in order with the program's work there. The queue
    /// stays the program's: it must outlive the stream, which never destroys
    /// it. Throws InvalidArgument for a zero queue where 0 names none (on
    /// CUDA and HIP it is the legacy default stream).
    std::unique_ptr<Stream> stream_over_native_queue(const std::string& backend, std::uint64_t queue);

protected:
    /// Takes the device's facts; fills DeviceInfo::host when empty.
    explicit Device(DeviceInfo info);
    DeviceInfo& mutable_info() noexcept { return info_; }

    // Backends implement these; arguments are already validated.
    virtual DeviceHandle do_allocate(std::size_t bytes) = 0;
    virtual void do_deallocate(DeviceHandle h) noexcept = 0;
    /// Default: nullptr (this device cannot address host memory in place).
    /// data is non-null and bytes > 0.
    virtual DeviceHandle do_map_host_memory(void* data, std::size_t bytes);
    /// Default: nothing. Called once per handle do_map_host_memory returned.
    virtual void do_unmap_host_memory(DeviceHandle h) noexcept;
    virtual void do_copy_h2d(DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes,
                             Stream& s, bool blocking) = 0;
    virtual void do_copy_d2h(void* dst, DeviceHandle src, std::size_t off, std::size_t bytes, Stream& s,
                             bool blocking) = 0;
    virtual void do_copy_d2d(DeviceHandle dst, std::size_t dst_off, DeviceHandle src, std::size_t src_off,
                             std::size_t bytes, Stream& s, bool blocking) = 0;
    virtual std::unique_ptr<Stream> do_create_stream() = 0;
    virtual std::unique_ptr<Event> do_create_event() = 0;
    virtual double do_elapsed_ms(Event& start, Event& end) = 0;
    virtual void do_synchronize() = 0;
    /// Default: elementwise 1-D blocks of 256; matmul/dense 16×16 tiles.
    virtual LaunchGeometry do_default_geometry(Op op, DType dtype, std::size_t rows, std::size_t cols) const;
    /// Default: nullopt (the tiled kernels take any geometry). Called only
    /// for tiled ops.
    virtual std::optional<TileLayout> do_tile_layout(Op op, DType dtype, std::size_t rows, std::size_t cols) const;
    /// The capability named `name` (capability_name of its class) as a
    /// pointer to exactly that class, converted to void*, or nullptr where
    /// the device has none of that name (accel::offer_capability writes
    /// it). Default: none. Never throws.
    virtual void* do_capability(std::string_view name) noexcept {
        (void)name;
        return nullptr;
    }
    /// Bytes freed by accel that the backend keeps for reuse (a caching
    /// allocator); default 0. Thread-safe, never throws.
    virtual std::uint64_t do_cached_bytes() const noexcept { return 0; }
    /// Gives the cache of freed memory back to the runtime; returns the
    /// bytes released. Default: nothing cached. Thread-safe, never throws.
    virtual std::uint64_t do_release_cached() noexcept { return 0; }
    /// Why (op, dtype, path), which this device does not claim, is not run
    /// here, e.g. "the device has no cl_khr_fp16"; "" for the default text
    /// (KernelTable::unsupported_reason asks it).
    virtual std::string do_unsupported_reason(Op, DType, OpPath) const { return ""; }

private:
    template <class Copy>
    void traced_copy(const char* name, std::size_t bytes, Stream& s, bool blocking, Copy copy);

    DeviceInfo info_;
    KernelTable kernel_table_;
    /// memory_info(); the caller holds memory_mutex_.
    MemoryInfo memory_info_locked() const noexcept;
    /// What allocate() handed out and not freed yet (memory_info, the cap).
    mutable std::mutex memory_mutex_;
    std::unordered_map<DeviceHandle, std::size_t> allocations_;
    NativeInterop& interop_for(const std::string& backend, const char* what);
    /// Drops one hand-out of `h` from mapped_. Never throws.
    void forget_mapped(DeviceHandle h) noexcept;
    /// What map_host_memory and adopt_native_memory handed out and not
    /// released yet: handle → bytes, once per hand-out (host memory or a
    /// device pointer adopted twice gives the same handle twice).
    std::unordered_multimap<DeviceHandle, std::size_t> mapped_;
    std::uint64_t in_use_ = 0, peak_in_use_ = 0, limit_ = 0;
    std::once_flag default_stream_once_;
    std::unique_ptr<Stream> default_stream_;
    std::atomic<bool> deterministic_{false};
    std::string tuning_record_;  ///< load_tuning_record's file, "" when none
};

/// Whether a backend can be used here, and why not.
struct Availability {
    bool available = false;
    std::string reason;     ///< why not (driver text, no device, ...); empty when available
    int device_count = 0;   ///< devices opened by index (NAME:0 .. NAME:device_count-1) and listed by `all`
    bool has_gpu = false;   ///< at least one device is a real GPU (not a simulator; used by `auto`)
    /// The device `auto` opens on this backend: its first real GPU, else 0.
    int preferred_index = 0;
    /// Devices opened only by name, never by an index, `auto` or `all`: the
    /// selector of each (e.g. "opencl:oclgrind:0"), for simulators, which are
    /// thousands of times slower than hardware. find_device resolves them to
    /// indices device_count .. device_count + named_only.size() - 1.
    std::vector<std::string> named_only;
};

/// One backend (host, opencl, kokkos, cuda, hip, vulkan, ...), implemented by a plugin.
class Backend {
public:
    virtual ~Backend() = default;
    /// The backend's name as selectors write it, e.g. "host", "opencl", "cuda".
    virtual std::string name() const = 0;
    /// Probes the runtime. A failure is either returned in Availability::reason
    /// or thrown as a std::exception: the registry turns the exception into the
    /// reason ("<backend>: <what()>"), so a probe need not catch.
    virtual Availability probe() = 0;
    /// Opens device `index` (0-based, < probe().device_count). Called by the
    /// registry after the index was checked. Throws DeviceError on failure.
    virtual std::shared_ptr<Device> create_device(int index) = 0;
    /// The index of the device a selector names by something other than its
    /// index: `spec` is the lower-case text after "<backend>:", e.g. "pocl",
    /// "intel:1" or "gpu" on OpenCL. Called by the registry (under its lock)
    /// before create_device. Default: every device is named by its index
    /// only, so this throws InvalidArgument saying so. Throws
    /// BackendUnavailable when no device matches, naming what there is.
    virtual int find_device(const std::string& spec);
};

}  // namespace accel
