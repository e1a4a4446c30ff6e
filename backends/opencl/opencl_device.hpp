// The OpenCL backend: any OpenCL 1.2 platform (PoCL on CPUs, GPU drivers)
// through the ICD loader. Devices are numbered across all platforms in
// platform order: opencl:N is the N-th device of the concatenated lists.
//
// Devices are also named stably as opencl:PLATFORM[:I] (the platform's short
// name — pocl, intel, oclgrind, ... — and the index within it) or
// opencl:gpu|cpu|accelerator; `auto` takes the first real GPU, never a
// simulator such as Oclgrind (see accel/registry.hpp).
//
// Kernels are the .cl files in kernels/, embedded at build time. Every op
// runs in f32, f16, bf16 and, where the device has cl_khr_fp64, f64: the same
// sources are built into one cl_program per dtype and device (context), each
// on the first use of its dtype, with build options that set the element
// macros of kernels/common.cl (storage type, compute type, LOAD/STORE).
//
// Thread-safety (the contract of accel/device.hpp). OpenCL makes every API
// call thread-safe except clSetKernelArg on one cl_kernel: a kernel object
// holds its arguments until the enqueue captures them, so two threads setting
// arguments of one cl_kernel at once launch each other's buffers. Each launch
// therefore leases a whole set of cl_kernel objects from a pool for the span
// of set-arguments + enqueue; there are as many sets as launches ever ran at
// once, so threads never wait on each other's enqueues; each dtype's program
// has its own pool. Each program is built once (std::call_once per dtype).
// Command queues are thread-safe by the specification, so the default stream
// is shared as it is. CLBlast keeps process-wide caches that it does not
// fully protect, so its calls are serialized (opencl_vendor.cpp).
//
// Resources: when the last handle to the device goes, its kernels, program,
// queues and context are released, and CLBlast's caches, which hold programs
// of this context (and with them the context), are cleared. Objects still
// alive once the process is exiting (a device held in a static) are left to
// the operating system instead: see runtime_may_be_torn_down().
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <accel/device.hpp>
#include <accel/graph.hpp>
#include <accel/page_locked.hpp>
#include <accel/plugin.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <map>
#include <shared_mutex>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace accel {
namespace opencl {

/// Symbolic name of an OpenCL error code, e.g. "CL_OUT_OF_RESOURCES" for -5
/// or "CL_PLATFORM_NOT_FOUND_KHR" for -1001; "unknown OpenCL error" otherwise.
const char* cl_error_name(cl_int code) noexcept;

/// "<where>: CL_NAME (code)", the text every OpenCL failure message starts with.
std::string cl_error_text(const std::string& where, cl_int code);

/// Throws DeviceError("<where> failed: CL_NAME (code)<detail>", code, name)
/// when code is not CL_SUCCESS; `where` names the call site (op and cl* call).
void check_cl(cl_int code, const std::string& where, const std::string& detail = "");

/// The kernels of the program (names as in kernels/*.cl).
/// On CPU devices, gemm_direct serves C = op(A)·op(B) with K at most this, or
/// M at most kDirectGemmMaxM (OpenclDevice::gemm_kernel).
constexpr std::size_t kDirectGemmMaxK = 16;
constexpr std::size_t kDirectGemmMaxM = 4;
/// On CPU devices, in f32, A·Bᵀ with K above kDirectGemmMaxK and below this
/// runs as A·(B transposed into a scratch buffer), and Aᵀ·B with N below it
/// (and M above N) as the transpose of Bᵀ·A (OpenclDevice::k_matmul).
constexpr std::size_t kShortDotK = 64;

// The kernels of the program that are not one elementwise op each (names
// as in kernels/*.cl), written once: the enum and kKernelNames come from this
// list. Elementwise ops of the op table are not here: their kernel is named
// after the op and takes (inputs..., output, n) (OpenclDevice::launch_elementwise).
#define ACCEL_OPENCL_KERNELS(X)                                                                             \
    X(bce_with_logits_backward)                                                                             \
    X(adam_step)                                                                                            \
    X(fma_throughput)                                                                                       \
    X(bias_activation)                                                                                      \
    X(column_sum)                                                                                           \
    X(scale)        /* y = s·x and a = b + s·c (kernels/elementwise.cl) */                                \
    X(triad)                                                                                                \
    X(dot_blocks)   /* dot's partial sums per work-group, then their total (kernels/reduce.cl) */         \
    X(dot_total)                                                                                            \
    X(gemm)                                                                                                 \
    X(gemm_direct)  /* gemm without local memory (kernels/matmul.cl), same tiles */                         \
    X(gemm_dot)     /* gemm_direct for A·Bᵀ as dot products (CPU devices: programs with MM_VW > 1 only) */ \
    X(gemm_rows)    /* gemm_direct for Aᵀ·B, rows as vectors (programs whose MM_WM is a vector size) */    \
    X(transpose)    /* a matrix's transpose, for operands gemm_direct reads faster so (kernels/matmul.cl) */ \
    X(empty)                                                                                                \
    X(convert_f32)  /* convert from f32 into the program's dtype (kernels/convert.cl) */                    \
    X(convert_f64)  /* from f64: only in programs of devices with fp64 (else a null entry) */               \
    X(convert_f16)                                                                                          \
    X(convert_bf16)

/// A kernel of the device's built programs, by its name in kernels/*.cl (not
/// accel::Kernel, a registered callable of the kernel table).
enum class ProgramKernel {
#define ACCEL_OPENCL_KERNEL_ENUM(name) name,
    ACCEL_OPENCL_KERNELS(ACCEL_OPENCL_KERNEL_ENUM)
#undef ACCEL_OPENCL_KERNEL_ENUM
    count_
};

/// The command queues alive on one device, shared by the device and its
/// streams so that Device::synchronize() can finish every one of them.
/// `mutex` guards `queues`.
struct QueueList {
    std::mutex mutex;
    std::vector<cl_command_queue> queues;
};

/// A command buffer being recorded and the kernels its commands use.
struct CommandBufferRecording {
    cl_command_buffer_khr cb = nullptr;
    std::vector<cl_kernel> kernels;  ///< each command's own; released with the command buffer
    /// A new cl_kernel of `k`'s program and function, no argument set, kept
    /// in `kernels`: each recorded command gets a kernel whose arguments
    /// nothing changes later (PoCL 3.1 reads a recorded kernel's arguments
    /// when the command buffer is enqueued, not when it is recorded).
    /// Throws DeviceError.
    cl_kernel kernel_like(cl_kernel k);
};

/// A stream is one in-order cl_command_queue created with
/// CL_QUEUE_PROFILING_ENABLE. The default stream is one such queue too.
class OpenclStream final : public Stream {
public:
    /// Creates the queue on `id` in `context`; throws DeviceError on failure.
    OpenclStream(Device& d, cl_context context, cl_device_id id, std::shared_ptr<QueueList> list);
    /// A stream over a program's own `queue` (checked by the caller: in
    /// order, profiling on, this device's context), which it never releases
    /// (opencl_interop.cpp).
    OpenclStream(Device& d, cl_command_queue borrowed, std::shared_ptr<QueueList> list);
    ~OpenclStream() override;
    /// clFinish on the queue; throws DeviceError on failure.
    void do_synchronize() override;
    cl_command_queue queue() const noexcept { return queue_; }
    /// What the stream's kernel launches are recorded into instead of
    /// enqueued (OpenclDevice::record_graph), or null.
    CommandBufferRecording* recording() const noexcept { return recording_; }
    void set_recording(CommandBufferRecording* r) noexcept { recording_ = r; }

private:
    cl_command_queue queue_ = nullptr;
    CommandBufferRecording* recording_ = nullptr;
    bool owned_ = true;  ///< false: the program's queue (released by the program)
    std::shared_ptr<QueueList> list_;
};

/// An event is a marker (clEnqueueMarkerWithWaitList) enqueued on a stream's
/// queue: it completes when all earlier work of that queue has completed.
/// Recording again replaces the marker.
class OpenclEvent final : public Event {
public:
    explicit OpenclEvent(Device& d) : Event(d) {}
    ~OpenclEvent() override;
    /// The marker's profiling time CL_PROFILING_COMMAND_END in ns (device
    /// clock), after waiting for it. Throws DeviceError when the runtime
    /// cannot report it.
    cl_ulong end_ns();

protected:
    void do_record(Stream& stream) override;
    void do_synchronize() override;

private:
    cl_event marker_ = nullptr;
};

/// Whether this plugin was built with CLBlast (the vendor path of matmul/dense).
bool have_vendor_blas() noexcept;
/// Clears CLBlast's process-wide caches (compiled programs, which keep their
/// contexts alive, binaries and tuning parameters), under the lock that
/// serializes every CLBlast call. Called when a device is destroyed; devices
/// still open rebuild what they need on their next vendor call. Never throws.
void release_vendor_caches() noexcept;

/// Marks the calling thread as one that uses the OpenCL runtime, so that its
/// exit is noticed (see runtime_may_be_torn_down()). Cheap; called on every
/// device creation, stream creation and launch.
void note_runtime_user_thread() noexcept;

/// True once the main thread has begun to exit. At exit the C++ runtime
/// destroys the main thread's thread_local objects before any static object,
/// and OpenCL runtimes keep per-thread state that way (Oclgrind's LLVM
/// contexts), so an OpenCL object released from a static destructor reaches a
/// runtime that has torn itself down (heap corruption in clReleaseContext).
/// From that point accel releases no OpenCL object: the process is ending and
/// the operating system reclaims them. Thread-safe.
bool runtime_may_be_torn_down() noexcept;

/// True on the process's main thread (Linux: thread id == process id).
bool on_main_thread() noexcept;
/// The vendor BLAS for accel-info: "CLBlast 1.5.3 ..." or why there is none.
std::string vendor_blas_description();

/// Compile-time parameters of the gemm kernel (kernels/matmul.cl, passed as
/// -D build options), chosen per device by gemm_params_for().
///
/// A work-group of bx × by work-items computes a tile_rows() × tile_cols()
/// tile of C; each work-item keeps wm rows × wn vectors of vw columns of
/// accumulators in registers; K is staged through local memory tk at a time.
struct GemmParams {
    std::size_t bx = 16, by = 16;  ///< work-group size (x: columns, y: rows)
    std::size_t wm = 4;            ///< rows of C per work-item (MM_WM)
    std::size_t wn = 4;            ///< accumulator vectors per row of a work-item (MM_WN)
    std::size_t vw = 1;            ///< accumulator vector width (MM_VW)
    std::size_t tk = 16;           ///< K slice staged in local memory (MM_TK)
    std::size_t ku = 1;            ///< unroll factor of the loop over one slice (MM_KU)
    bool fma = false;              ///< fma() rather than mad() (MM_FMA)
    bool k_break = false;          ///< K-tail exit inside the slice loop (MM_KBREAK)

    std::size_t tile_rows() const noexcept { return by * wm; }
    std::size_t tile_cols() const noexcept { return bx * wn * vw; }
    /// Bytes of local memory one work-group uses, for `element`-byte
    /// elements of the compute type (4: float; 8: double, the f64 program).
    std::size_t local_bytes(std::size_t element = sizeof(float)) const noexcept {
        return tk * (tile_rows() + tile_cols()) * element;
    }
    /// " -DMM_BX=... -DMM_KBREAK=..." for clBuildProgram.
    std::string build_options() const;
    /// The tunable fields as TuningParams ("bx", "by", "wm", "wn", "vw", "tk", "ku").
    TuningParams tuning_params() const;
    bool operator==(const GemmParams& o) const noexcept;
    /// One line for DeviceInfo::extra (accel-info).
    std::string describe() const;
};

/// The gemm tiles of one device, chosen per output shape by choose(): a
/// work-group computes a whole tile, so a tile much wider than C computes
/// mostly padding. Index 0 is the general tile (gemm_params_for()); CPU
/// devices add `narrow` (gemm_tiles_for() in opencl_platform.cpp documents
/// it and the measurements behind it). Each tile is one compiled variant of
/// kernels/matmul.cl: its own program per dtype, built on first use.
struct GemmTiles {
    enum Index : std::size_t { general = 0, narrow = 1, max_count = 2 };
    std::array<GemmParams, max_count> tiles{};
    std::size_t count = 1;  ///< tiles[0, count) exist on this device

    /// The tile for C[m,n] (row-major; m rows, n columns; any m, n ≥ 0), the
    /// one rule that picks it: `narrow` where the device has it and
    /// n ≤ tiles[narrow].tile_cols(), else `general`. Depends on the output
    /// shape only (never on K or the dtype), so the launch geometry of a
    /// matmul or dense follows from it. Never throws.
    std::size_t choose(std::size_t m, std::size_t n) const noexcept;
};

// ---- the platforms and their devices (opencl_platform.cpp) -------------------

/// One device as numbered by this backend: the platform order, then the
/// device order within each platform.
struct DeviceRef {
    cl_platform_id platform;
    cl_device_id device;
    int within_platform;  ///< index among its platform's devices
};

/// Every device of every platform, in the loader's platform order, the
/// simulators' devices last (indices 0 .. real devices - 1 name real devices
/// only). A platform whose device list cannot be read adds none and its
/// failure is appended to *problems. Throws DeviceError when the loader
/// lists no platform (CL_PLATFORM_NOT_FOUND_KHR).
std::vector<DeviceRef> all_devices(std::string* problems = nullptr);
/// The platform's short name in stable selectors: "pocl", "intel", "oclgrind", ...
std::string platform_key(cl_platform_id p);
/// Whether the platform is a simulator (Oclgrind): opened only when named.
bool is_simulator(cl_platform_id p);
/// A GPU that is not a simulator's: what `auto` prefers.
bool is_real_gpu(const DeviceRef& r);
/// The index in `devices` that opencl:SPEC names (SPEC = gpu | cpu |
/// accelerator | PLATFORM[:I], see accel/registry.hpp), or -1.
int find_device_in(const std::vector<DeviceRef>& devices, const std::string& spec);
/// A CPU device (CL_DEVICE_TYPE_CPU without GPU; not Oclgrind).
bool is_cpu_device(cl_device_id d);
/// Whether the device reports the CPU type, Oclgrind included.
bool reports_cpu_type(cl_device_id d);
/// EW_VW, the vector width of kernels/elementwise.cl's f32 kernels, for the device.
std::size_t elementwise_width_for(cl_device_id d);
/// The general gemm parameters for the device within limits `l`
/// (opencl_platform.cpp documents the choice).
GemmParams gemm_params_for(cl_platform_id p, cl_device_id d, const LaunchLimits& l);
/// The device's gemm tiles: `general`, and `narrow` on CPU devices.
GemmTiles gemm_tiles_for(const GemmParams& general, cl_device_id d);
/// Whether the device computes in double precision (CL_DEVICE_DOUBLE_FP_CONFIG or cl_khr_fp64).
bool device_has_fp64(cl_device_id d);

/// The cl_khr_command_buffer calls accel makes (Khronos' provisional
/// extension, cl_ext.h): create, record a kernel, finalize, enqueue,
/// release. Their layout is the same in versions 0.9.0 to 0.9.7, the ones
/// accel uses; all null on a device without them.
struct CommandBufferCalls {
    clCreateCommandBufferKHR_fn create = nullptr;
    clCommandNDRangeKernelKHR_fn kernel = nullptr;
    clFinalizeCommandBufferKHR_fn finalize = nullptr;
    clEnqueueCommandBufferKHR_fn enqueue = nullptr;
    clReleaseCommandBufferKHR_fn release = nullptr;
    bool simultaneous_use = false;  ///< CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR
    std::string version;            ///< the device's extension version, e.g. "0.9.0"
    explicit operator bool() const noexcept { return create && kernel && finalize && enqueue && release; }
};
/// Thrown by a kernel call that cannot be recorded into a command buffer
/// (CLBlast enqueues on a queue itself): record_graph then answers null.
struct CannotRecord {};

/// The calls of device `d` of platform `p` where it reports
/// cl_khr_command_buffer at a version in 0.9.0..0.9.7 (CL_DEVICE_EXTENSIONS_WITH_VERSION),
/// needs no queue property beyond profiling, and the platform hands out all
/// five entry points; else empty, with `why` saying which of these failed.
/// Never throws but std::bad_alloc.
CommandBufferCalls command_buffer_calls(cl_platform_id p, cl_device_id d, std::string& why);
/// The DeviceInfo of device `d` of platform `p`, backend index `index`.
DeviceInfo make_info(int index, cl_platform_id p, cl_device_id d, int within_platform);
/// clGetDeviceInfo's `what` (named `name` in the error) as T; throws
/// DeviceError naming the query when it fails.
template <class T>
T device_value(cl_device_id d, cl_device_info what, const char* name) {
    T v{};
    check_cl(clGetDeviceInfo(d, what, sizeof(T), &v, nullptr), std::string("clGetDeviceInfo(") + name + ")");
    return v;
}
#define ACCEL_DEVICE_VALUE(T, d, what) device_value<T>(d, what, #what)
/// `s` without leading and trailing blanks (a build log, a runtime's text).
std::string trimmed(std::string s);

/// One OpenCL device with its context and programs (one per dtype).
///
/// Launch geometry (OpenCL terms: local size = block, global NDRange = grid ×
/// block per dimension):
///  - elementwise ops, column_sum, fma_throughput: any geometry within the
///    limits (grid-stride loops over the flattened NDRange).
///    default_geometry gives sigmoid, relu, relu_backward, sigmoid_backward,
///    bce_with_logits, bce_with_logits_backward and bias_activation one
///    work-item per vector of EW_VW elements (the vector width of their kernels) in work-groups
///    of 256 (or fewer, as many as there are vectors), and column_sum one
///    per EW_VW columns; add the same except on CPU devices, where it gives
///    one work-item per element in work-groups of min(4096,
///    CL_DEVICE_MAX_WORK_GROUP_SIZE); the others one work-item per element.
///  - matmul and dense, native path: for C[M,N] (dense: M = batch, N = out)
///    let P = the tile of GemmTiles::choose(M, N) (it depends on M and N only;
///    see GemmTiles::choose): block must be (P.bx, P.by, 1) and grid.z 1;
///    each work-group computes a TM × TN output tile (P.tile_rows() ×
///    P.tile_cols()), so the grid must be at least (ceil(N / TN),
///    ceil(M / TM)) (do_tile_layout; the op front-end rejects anything
///    else, naming the accepted geometry).
///  - vendor path (CLBlast): the geometry is ignored; CLBlast chooses its own.
/// Every dtype's kernels accept the same geometries (the f64 program may
/// stage a shorter K slice, which does not change the tile).
/// Dtypes: every op natively in f32, f16 and bf16, and in f64 where the
/// device reports double precision (cl_khr_fp64); vendor gemm (CLBlast) in
/// f32, and in f64 where the device has it; not in bf16 (CLBlast has none)
/// nor in f16 (CLBlast's HGEMM accumulates in half, accel's f16 in float).
/// Timing: OpenCL profiling events (CL_PROFILING_COMMAND_END of markers).
///
/// Tuning (opencl_tuning.cpp): matmul and dense in every dtype and shape
/// class are tunable (accel/device.hpp's Tuning); a key set by a tuning
/// record or a tuner runs a variant of its own (a GemmParams beyond the
/// device's GemmTiles, with its own programs), chosen by do_tile_layout.
class OpenclDevice final : public Device,
                           public Probes,
                           public NativeInterop,
                           public Tuning,
                           public KernelBuilder,
                           public PageLockedMemory,
                           public GraphRecorder {
public:
    // Probes (contracts in accel/device.hpp; the `empty` and `fma_throughput` kernels of kernels/*.cl).
    ACCEL_PROBES_OVERRIDES

    // PageLockedMemory (accel/page_locked.hpp; opencl_interop.cpp): a
    // CL_MEM_ALLOC_HOST_PTR buffer mapped for the host, the memory OpenCL
    // implementations pin for DMA; copies from and to it reach the device
    // without an extra copy where the implementation pins it.
    ACCEL_PAGE_LOCKED_MEMORY_OVERRIDES

    // GraphRecorder (accel/graph.hpp; opencl_backend.cpp), offered where the
    // device has cl_khr_command_buffer: a run of kernels recorded into one
    // command buffer, a replay one clEnqueueCommandBufferKHR.
    ACCEL_GRAPH_RECORDER_OVERRIDES
    /// clEnqueueNDRangeKernel of `k` on `s`'s queue, or, while `s` records a
    /// graph, clCommandNDRangeKernelKHR into its command buffer (the
    /// arguments set now are captured either way). The runtime's code.
    cl_int enqueue_kernel(Stream& s, cl_kernel k, cl_uint dims, const std::size_t* global, const std::size_t* local);

    // NativeInterop (opencl_interop.cpp): cl_context, cl_device_id, a
    // stream's cl_command_queue, a buffer's cl_mem; adopted memory is a
    // sub-buffer of the program's cl_mem (retaining it).
    ACCEL_NATIVE_INTEROP_OVERRIDES  // accel/plugin.hpp

    /// Opens device `id` of `platform` as opencl:`index`, the
    /// `within_platform`-th device of its platform (for its stable selector):
    /// creates its context (the program is built on first kernel use).
    /// Throws DeviceError.
    OpenclDevice(int index, cl_platform_id platform, cl_device_id id, int within_platform);
    ~OpenclDevice() override;

    /// The compile-time parameters of the general gemm tile on this device
    /// (what accel-info shows; do_tile_layout gives the one a shape uses).
    const GemmParams& gemm_params() const noexcept { return tiles_.tiles[GemmTiles::general]; }

    // Tuning (contracts in accel/device.hpp; opencl_tuning.cpp). Parameters
    // "bx", "by", "wm", "wn", "vw", "tk", "ku" of GemmParams; fma() and the
    // K-tail exit stay the device's (gemm_params_for).
    std::vector<TuningKey> tunable() const override;
    TuningParams default_params(const TuningKey& key) const override;
    std::vector<TuningParams> candidates(const TuningKey& key, bool quick) const override;
    TuningParams params(const TuningKey& key) const override;
    void set_params(const TuningKey& key, const TuningParams& p) override;
    void reset_params() noexcept override;
    std::string describe(const TuningKey& key, const TuningParams& p) const override;
    /// Whether f64 kernels are registered: the device reports double
    /// precision (CL_DEVICE_DOUBLE_FP_CONFIG or cl_khr_fp64).
    bool has_fp64() const noexcept { return fp64_; }
    /// Whether CLBlast runs gemm in `t` on this device (see the class comment).
    bool has_vendor_gemm(DType t) const noexcept;

    /// Runs elementwise op `op` (an op of the table with an
    /// elementwise_reference and a kernel of its name in kernels/*.cl, taking
    /// its inputs, its output and n) with the arguments `a`. Thread-safe.
    void launch_elementwise(Op op, const KernelArgs& a);

    // The other kernels, one member per op, for tensors of dtype `t` (opencl_ops.cpp;
    // register_kernels() registers them). Arguments as unpacked from
    // KernelArgs: handles of this device, sizes in elements (the op family's
    // view), a checked geometry, the stream; op scalars are passed to the
    // kernels in the dtype's compute type. Semantics are the op table's
    // (accel/op_table.hpp). matmul and dense launch the tile the front-end
    // chose (`tile`, from do_tile_layout), never another.
    void k_matmul(DType t, DeviceHandle a, DeviceHandle b, DeviceHandle c, const GemmArgs& p, const TileLayout& tile,
                  const LaunchGeometry& g, Stream& s);
    void k_dense(DType t, DeviceHandle x, DeviceHandle w, DeviceHandle bias, DeviceHandle y, const DenseArgs& p,
                 const TileLayout& tile, const LaunchGeometry& g, Stream& s);
    void k_bias_activation(DType t, DeviceHandle bias, DeviceHandle y, std::size_t rows, std::size_t cols,
                           bool read_y, Activation act, const LaunchGeometry& g, Stream& s);
    void k_column_sum(DType t, DeviceHandle x, DeviceHandle y, std::size_t rows, std::size_t cols,
                      const LaunchGeometry& g, Stream& s);
    void k_bce_with_logits_backward(DType t, DeviceHandle z, DeviceHandle tg, DeviceHandle dz, std::size_t n,
                                    double scale, const LaunchGeometry& g, Stream& s);
    void k_adam_step(DType t, DeviceHandle p, DeviceHandle grad, DeviceHandle m, DeviceHandle v, std::size_t n,
                     double beta1, double beta2, double eps, double step_size, double bias_correction2_sqrt,
                     const LaunchGeometry& g, Stream& s);
    /// y[i] = x[i] for i < n, x of dtype `from` and y of dtype `t` (any two
    /// of the device's dtypes, equal ones included): widening is exact,
    /// narrowing rounds once to nearest, ties to even (from f64 to f16 or bf16
    /// too: not through a float rounding), NaN and ±Inf are kept, values
    /// beyond t's range become ±Inf (kernels/convert.cl). x and y hold n
    /// elements each and do not overlap unless from == t. Any geometry (a
    /// grid-stride loop). Throws Unsupported when `from` is f64 and the device
    /// has no double precision, DeviceError when the enqueue fails.
    /// Thread-safe, as every k_*.
    void k_convert(DType from, DType t, DeviceHandle x, DeviceHandle y, std::size_t n, const LaunchGeometry& g,
                   Stream& s);
    /// C[m,n] = op(A)·op(B) + beta·C with CLBlast (opencl_vendor.cpp); only
    /// where has_vendor_gemm(t).
    void k_gemm_vendor(DType t, DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t m, std::size_t n,
                       std::size_t k, bool trans_a, bool trans_b, double beta, Stream& s);

protected:
    ACCEL_DEVICE_RUNTIME_OVERRIDES  // the runtime every device has (accel/plugin.hpp)
    /// Its capabilities (accel/capability.hpp).
    void* do_capability(std::string_view name) noexcept override {
        if (name == GraphRecorder::capability_name && !command_buffers_) return nullptr;  // no cl_khr_command_buffer
        return accel::offer_capability<Probes, NativeInterop, Tuning, KernelBuilder, PageLockedMemory, GraphRecorder>(
            this, name);
    }
    // KernelBuilder: a program's own kernels.
    std::shared_ptr<accel::BuiltKernel> build_program_kernel(const accel::KernelSource& source) override;
    LaunchGeometry do_default_geometry(Op op, DType dtype, std::size_t rows, std::size_t cols) const override;
    std::optional<TileLayout> do_tile_layout(Op op, DType dtype, std::size_t rows, std::size_t cols) const override;
    std::string do_unsupported_reason(Op op, DType dtype, OpPath path) const override;

private:
    std::mutex page_locked_mutex_;
    std::unordered_map<void*, cl_mem> page_locked_;  ///< mapped address → its buffer
    /// One cl_kernel per ProgramKernel, then one per op of elementwise_ops_of_every_backend(),
    /// created from one dtype's program.
    using KernelSet = std::vector<cl_kernel>;
    /// One program — of a dtype and a gemm tile — and its pool of kernel
    /// sets. The general tile's program holds every kernel; another tile's
    /// holds only gemm (its set's other entries are null).
    struct Program {
        std::once_flag once;
        cl_program program = nullptr;  ///< written once under `once`
        std::mutex mutex;              ///< guards the two vectors below
        std::vector<std::unique_ptr<KernelSet>> sets;  ///< every set made, released with the device
        std::vector<KernelSet*> free;                  ///< sets not leased now
    };
    /// Registers every kernel of every dtype this device runs (constructor).
    void register_kernels();
    std::vector<DType> native_dtypes() const;  ///< every dtype but f64 without cl_khr_fp64
    /// Leases an unused kernel set of the program of dtype `t` and gemm tile
    /// `tile` (a GemmTiles index below tiles_.count), creating one when every
    /// set is in use, building the program on first use: DeviceError with the
    /// build log when the OpenCL C compiler rejects it. Thread-safe.
    KernelSet* acquire_kernels(DType t, std::size_t tile);
    /// Returns a set from acquire_kernels(t, tile) to its pool. Thread-safe.
    void release_kernels(DType t, std::size_t tile, KernelSet* set) noexcept;
    void build_program(DType t, std::size_t tile);
    /// The clBuildProgram options of the program of dtype `t` and gemm tile `tile`.
    std::string build_options(DType t, std::size_t tile) const;
    /// Sets the arguments of kernel `k` of the program of dtype `t` (and gemm
    /// tile `tile`; other kernels than gemm only in tile 0's) in order and
    /// enqueues it on `s` with local size = g.block and global size =
    /// g.grid × g.block.
    template <class... Args>
    void launch_tile(DType t, std::size_t tile, ProgramKernel k, const LaunchGeometry& g, Stream& s, const Args&... args) {
        launch_slot(t, tile, static_cast<std::size_t>(k), g, s, args...);
    }
    /// launch_tile for the kernel at `slot` of a KernelSet.
    template <class... Args>
    void launch_slot(DType t, std::size_t tile, std::size_t slot, const LaunchGeometry& g, Stream& s,
                     const Args&... args);
    /// The GEMM kernel of tile `tile`'s program for C[m,n] = op(A)·op(B) with
    /// inner dimension k (ta, tb: A, B transposed): gemm, gemm_direct or
    /// gemm_dot (see the definition for the measurements behind it).
    ProgramKernel gemm_kernel(std::size_t tile, std::size_t m, std::size_t k, bool ta, bool tb) const noexcept;
    /// A buffer of `bytes` for one launch's rearranged operand (do_allocate's
    /// errors), released when it goes out of scope, after the commands that
    /// use it are enqueued: OpenCL keeps a buffer until they have finished.
    struct Scratch {
        cl_mem buffer;
        Scratch(OpenclDevice& d, std::size_t bytes);
        ~Scratch();
        Scratch(const Scratch&) = delete;
        Scratch& operator=(const Scratch&) = delete;
    };
    /// Enqueues C[m,n] = act(op(A)·op(B) + bias) (bias may be null) with tile
    /// `tile`'s GEMM kernel for the shape and layout (gemm_kernel), or, for a
    /// short A·Bᵀ on a CPU device, gemm_direct over B transposed into a
    /// scratch buffer (see opencl_ops.cpp).
    void launch_gemm(DType t, std::size_t tile, const LaunchGeometry& g, Stream& s, cl_mem a, cl_mem b, cl_mem c,
                     cl_mem bias, Activation act, std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb);
    /// Enqueues dst [cols, rows] = src [rows, cols]ᵀ (kernels/matmul.cl transpose) on `s`.
    void transpose_into(DType t, cl_mem src, cl_mem dst, std::size_t rows, std::size_t cols, Stream& s);
    /// Whether a program of `p` has gemm_dot: matmul.cl builds it where
    /// MM_VW > 1 and a work-item's MM_WN·MM_VW columns are a multiple of 4.
    static bool has_gemm_dot(const GemmParams& p) noexcept { return p.vw > 1 && p.wn * p.vw % 4 == 0; }
    bool has_gemm_dot(std::size_t tile) const noexcept { return has_gemm_dot(variant(tile)); }
    /// Whether tile `tile`'s program has gemm_rows: built where MM_WM is a
    /// vector size (2, 4, 8, 16) and MM_WN·MM_VW a multiple of 4.
    bool has_gemm_rows(std::size_t tile) const noexcept {
        const GemmParams& p = variant(tile);
        return (p.wm == 2 || p.wm == 4 || p.wm == 8 || p.wm == 16) && p.wn * p.vw % 4 == 0;
    }
    /// The parameters of variant `v` (< variant_count_): the GemmTiles
    /// first, then those tuning added (add_variant). Thread-safe.
    const GemmParams& variant(std::size_t v) const noexcept { return variants_[v]; }
    /// The variant of `p`, added when new (its programs built on first use).
    /// Throws InvalidArgument past kMaxVariants. Thread-safe.
    std::size_t add_variant(const GemmParams& p);
    /// Why `p` is not a valid gemm variant on this device (the limits, the
    /// summation order: opencl_tuning.cpp), or "".
    std::string invalid_params(const GemmParams& p) const;
    /// launch_tile() in the general program (tile 0).
    template <class... Args>
    void launch(DType t, ProgramKernel k, const LaunchGeometry& g, Stream& s, const Args&... args) {
        launch_tile(t, GemmTiles::general, k, g, s, args...);
    }

    cl_platform_id platform_;
    cl_device_id id_;
    cl_context context_ = nullptr;
    /// The most gemm variants a device holds (its tiles and every parameter
    /// set a record or a tuner asked for); programs are never released while
    /// the device lives (a launch may still use them).
    static constexpr std::size_t kMaxVariants = 512;
    /// Indexed by variant · kDTypeCount + DType (variant: a GemmTiles index,
    /// or one add_variant made).
    std::unique_ptr<Program[]> programs_{new Program[kDTypeCount * kMaxVariants]};
    std::unique_ptr<GemmParams[]> variants_{new GemmParams[kMaxVariants]};
    std::atomic<std::size_t> variant_count_{0};  ///< written under tuning_mutex_
    /// The variant of each key a record or a tuner set (do_tile_layout).
    mutable std::shared_mutex tuning_mutex_;
    std::map<TuningKey, std::size_t> tuned_;
    std::shared_ptr<QueueList> queues_ = std::make_shared<QueueList>();
    std::uint64_t max_alloc_ = 0;  ///< CL_DEVICE_MAX_MEM_ALLOC_SIZE, bytes
    GemmTiles tiles_;  ///< the gemm tiles (gemm_tiles_for())
    std::size_t ew_width_ = 4;  ///< EW_VW of kernels/elementwise.cl (f32 program), from elementwise_width_for()
    std::size_t add_width_ = 4;  ///< ADD_VW of the f32 program: 1 on CPU devices, else ew_width_
    std::size_t add_block_ = 0;  ///< add's default work-group size on CPU devices (≤ 4096); 0 elsewhere
    bool fp64_ = false;         ///< double precision: f64 kernels registered
    CommandBufferCalls command_buffers_;  ///< cl_khr_command_buffer, where the device has it
    bool direct_gemm_ = false;  ///< CPU type (Oclgrind too): gemm_direct and gemm_dot where they win
    std::uint64_t local_mem_ = 0;  ///< CL_DEVICE_LOCAL_MEM_SIZE, bytes
    /// elementwise_[op value]: the KernelSet index and input count of each op
    /// of elementwise_ops_of_every_backend() (after the Kernels, in that
    /// order), read per launch without the op table's lock. Fixed when the
    /// device is created.
    struct ElementwiseKernel {
        std::size_t slot = 0;
        std::size_t inputs = 0;
    };
    std::vector<ElementwiseKernel> elementwise_;
};

}  // namespace opencl
}  // namespace accel
