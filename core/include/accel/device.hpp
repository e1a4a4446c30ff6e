// accel/device.hpp — the abstract device interface every backend implements.
//
// Design (after ggml-backend and TVM's DeviceAPI): public methods are
// non-virtual and validate their arguments (bounds, sizes, same device), then
// call protected do_* virtuals that backends implement and that trust their
// inputs. Kernels are reached only through the op front-end (accel/ops.hpp),
// which validates shapes once before any backend is called.
#pragma once

#include <accel/geometry.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace accel {

class Device;
class Buffer;

/// Opaque device-memory handle: a device pointer (CUDA, Kokkos, host) or a
/// cl_mem (OpenCL). Only the backend that produced it may interpret it.
using DeviceHandle = void*;

/// The ops every backend implements (see accel/ops.hpp for their semantics).
enum class Op {
    add,
    sigmoid,
    relu,
    relu_backward,
    sigmoid_backward,
    matmul,
    dense,
    column_sum,
    bce_with_logits,
    bce_with_logits_backward,
    adam_step,
    fma_throughput,
};

/// Name of an op, e.g. "matmul".
const char* op_name(Op op) noexcept;

/// Whether `op` has a vendor path on backends whose library is present:
/// matmul and dense (BLAS sgemm and its equivalents).
bool has_vendor_path(Op op) noexcept;

/// Which implementation of an op runs: accel's own kernel (the same
/// algorithm on every backend) or the platform's library (CPU BLAS, CLBlast,
/// cuBLAS, Kokkos Kernels).
enum class OpPath { native, vendor };

/// "native" or "vendor".
const char* path_name(OpPath p) noexcept;

/// Activation fused into `dense`.
enum class Activation { none, sigmoid, relu };

/// "none", "sigmoid" or "relu".
const char* activation_name(Activation a) noexcept;

/// An in-order queue of device work (CUDA stream, OpenCL command queue,
/// Kokkos execution-space instance). Work on one stream runs in submission
/// order. Created by Device::create_stream(); must not outlive its device.
/// Thread-safety: any thread may submit to and synchronize any stream, also
/// concurrently (see Device); destroying a stream while another thread still
/// submits to it is a use-after-free, as for any object.
class Stream {
public:
    virtual ~Stream() = default;
    /// Blocks the calling host thread until all work submitted to this stream
    /// has finished. Throws DeviceError if the runtime reports a failure.
    virtual void synchronize() = 0;
    /// The device this stream belongs to.
    Device& device() const noexcept { return *device_; }

protected:
    explicit Stream(Device& d) : device_(&d) {}

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

/// What a device is, as reported by its runtime.
struct DeviceInfo {
    std::string backend;          ///< "host", "opencl", "kokkos", "cuda"
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
    /// the index is stable already (Device::selector() then serves).
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
    /// Selector that names this device, e.g. "opencl:0".
    std::string selector() const;

    // ---- memory -----------------------------------------------------------
    /// Allocates `bytes` of device memory. bytes == 0 returns nullptr.
    /// Throws OutOfMemory (naming the bytes asked and the device's total)
    /// when bytes exceeds global memory or the runtime refuses.
    /// Prefer Buffer, which frees automatically.
    DeviceHandle allocate(std::size_t bytes);
    /// Frees memory from allocate(); nullptr is ignored. Never throws.
    void deallocate(DeviceHandle h) noexcept;

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
    /// Blocks until all work on every stream of this device has finished.
    void synchronize();

    // ---- launch geometry --------------------------------------------------
    /// The geometry the backend uses for `op` when the caller gives none.
    /// `rows`/`cols` describe the output (elementwise: rows = 1, cols = n).
    LaunchGeometry default_geometry(Op op, std::size_t rows, std::size_t cols) const;

    /// Enqueues a kernel that does nothing (one block of one thread) on
    /// `stream`: the runtime's bare launch, without accel's op front-end.
    /// accel-bench compares it with a 1-element add to measure what accel's
    /// dispatch adds per launch. On host there is nothing to launch.
    /// Throws InvalidArgument if the stream belongs to another device.
    void launch_empty(Stream& stream);

    /// Whether this device implements `op` on `path`: every op natively;
    /// matmul and dense (has_vendor_path) on the vendor path when the
    /// backend's vendor library is present.
    bool supports(Op op, OpPath path) const {
        return path == OpPath::native || (has_vendor_path(op) && do_has_vendor_library());
    }

protected:
    /// Takes the device's facts; fills DeviceInfo::host when empty.
    explicit Device(DeviceInfo info);
    DeviceInfo& mutable_info() noexcept { return info_; }

    // Backends implement these; arguments are already validated.
    virtual DeviceHandle do_allocate(std::size_t bytes) = 0;
    virtual void do_deallocate(DeviceHandle h) noexcept = 0;
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
    virtual void do_launch_empty(Stream& s) = 0;
    /// Default: elementwise 1-D blocks of 256; matmul/dense 16×16 tiles.
    virtual LaunchGeometry do_default_geometry(Op op, std::size_t rows, std::size_t cols) const;
    /// Whether the backend's vendor library (CPU BLAS, CLBlast, cuBLAS, Kokkos
    /// Kernels) was found and started. Default: none.
    virtual bool do_has_vendor_library() const { return false; }

    // ---- kernels ------------------------------------------------------------
    // Called only by the op front-end (accel/ops.hpp) after validation, with
    // handles of this device, sizes in elements, a geometry already checked
    // against the limits, and the stream to enqueue on. Matrices are
    // row-major float32. All are asynchronous with respect to the host.
    friend struct KernelAccess;
    /// c[i] = a[i] + b[i], i < n.
    virtual void k_add(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t n,
                       const LaunchGeometry& g, Stream& s) = 0;
    /// y[i] = 1 / (1 + exp(-x[i])), stable for large |x|.
    virtual void k_sigmoid(DeviceHandle x, DeviceHandle y, std::size_t n, const LaunchGeometry& g,
                           Stream& s) = 0;
    /// y[i] = max(x[i], 0), NaN kept (x <= 0 ? 0 : x).
    virtual void k_relu(DeviceHandle x, DeviceHandle y, std::size_t n, const LaunchGeometry& g,
                        Stream& s) = 0;
    /// dx[i] = x[i] > 0 ? dy[i] : 0 (0 where x is NaN).
    virtual void k_relu_backward(DeviceHandle dy, DeviceHandle x, DeviceHandle dx, std::size_t n,
                                 const LaunchGeometry& g, Stream& s) = 0;
    /// dx[i] = dy[i] * y[i] * (1 - y[i]) where y = sigmoid(x).
    virtual void k_sigmoid_backward(DeviceHandle dy, DeviceHandle y, DeviceHandle dx, std::size_t n,
                                    const LaunchGeometry& g, Stream& s) = 0;
    /// C[M,N] = op(A)·op(B); op(A) is A[M,K], or A[K,M] transposed when
    /// trans_a; op(B) is B[K,N], or B[N,K] transposed when trans_b. K == 0
    /// writes zeros.
    virtual void k_matmul(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t m, std::size_t n,
                          std::size_t k, bool trans_a, bool trans_b, OpPath path,
                          const LaunchGeometry& g, Stream& s) = 0;
    /// y[batch,out] = act(x[batch,in]·W[out,in]ᵀ + bias[out]); bias may be null.
    virtual void k_dense(DeviceHandle x, DeviceHandle w, DeviceHandle bias, DeviceHandle y,
                         std::size_t batch, std::size_t in, std::size_t out, Activation act, OpPath path,
                         const LaunchGeometry& g, Stream& s) = 0;
    /// y[c] = Σ_r x[r,c] for x[rows,cols].
    virtual void k_column_sum(DeviceHandle x, DeviceHandle y, std::size_t rows, std::size_t cols,
                              const LaunchGeometry& g, Stream& s) = 0;
    /// l[i] = max(z,0) - z*t + log1p(exp(-|z|)) for logits z, targets t.
    virtual void k_bce_with_logits(DeviceHandle z, DeviceHandle t, DeviceHandle l, std::size_t n,
                                   const LaunchGeometry& g, Stream& s) = 0;
    /// dz[i] = scale * (sigmoid(z[i]) - t[i]).
    virtual void k_bce_with_logits_backward(DeviceHandle z, DeviceHandle t, DeviceHandle dz,
                                            std::size_t n, float scale, const LaunchGeometry& g,
                                            Stream& s) = 0;
    /// PyTorch's Adam (torch.optim.Adam, single-tensor form), per element:
    ///   m = beta1*m + (1-beta1)*g;  v = beta2*v + (1-beta2)*g*g;
    ///   p -= step_size * m / (sqrt(v) / bias_correction2_sqrt + eps)
    /// with step_size = lr / (1 - beta1^t), bias_correction2_sqrt = sqrt(1 - beta2^t).
    virtual void k_adam_step(DeviceHandle p, DeviceHandle grad, DeviceHandle m, DeviceHandle v,
                             std::size_t n, float beta1, float beta2, float eps, float step_size,
                             float bias_correction2_sqrt, const LaunchGeometry& g, Stream& s) = 0;
    /// Peak-FMA probe (clpeak-style): work-item i keeps 8 independent
    /// accumulators a_j = (float)i * 1e-9f + j, runs `iterations` rounds of
    /// a_j = a_j * 0.9999f + 1e-4f on each, and writes y[i] = Σ_j a_j.
    /// FLOPs = 16 * iterations * n.
    virtual void k_fma_throughput(DeviceHandle y, std::size_t n, std::size_t iterations,
                                  const LaunchGeometry& g, Stream& s) = 0;

private:
    DeviceInfo info_;
    std::once_flag default_stream_once_;
    std::unique_ptr<Stream> default_stream_;
};

/// Whether a backend can be used here, and why not.
struct Availability {
    bool available = false;
    std::string reason;     ///< why not (driver text, no device, ...); empty when available
    int device_count = 0;   ///< devices this backend can open
    bool has_gpu = false;   ///< at least one device is a real GPU (not a simulator; used by `auto`)
    /// The device `auto` opens on this backend: its first real GPU, else 0.
    int preferred_index = 0;
};

/// One backend (host, opencl, kokkos, cuda), implemented by a plugin.
class Backend {
public:
    virtual ~Backend() = default;
    /// "host", "opencl", "kokkos" or "cuda".
    virtual std::string name() const = 0;
    /// Probes the runtime: never throws; failures become Availability::reason.
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
