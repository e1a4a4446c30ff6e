// The CUDA backend: NVIDIA GPUs through the CUDA runtime, cuBLAS on the vendor path.
//
// Files
//   cuda_device.hpp   this header: error checking, streams, events, pinned
//                     staging, the device class
//   cuda_backend.cpp  Backend + probe, memory, copies, streams, events,
//                     default geometry
//   cuda_platform.cpp what is CUDA's own: sticky error codes, device facts,
//                     page-locked host memory
//   cuda_ops.cpp      the kernels registered per (op, dtype, path): geometry
//                     checks, then the launchers
//   cuda_vendor.cpp   cuBLAS: one handle per device, the gemm of the vendor
//                     path (sgemm, dgemm, gemmEx for f16/bf16)
//   cuda_interop.cpp  a program's own kernels (compiled at run time by the
//                     platform file: NVRTC) and the runtime's objects
//                     (ordinal, context, cudaStream_t, device pointers),
//                     both ways
//   kernels/*.cu      the kernels (elementwise.cu, matmul.cu), templates over
//                     the storage type; kernels.hpp declares their launchers
//                     for plain C++
//
// The HIP backend (backends/hip) compiles these same sources, except
// cuda_platform.cpp and cuda_vendor.cpp, as HIP: its cuda_to_hip.h maps each
// CUDA name to HIP's. So these files name the backend and its runtime only
// through ACCEL_GPU_BACKEND and ACCEL_GPU_RUNTIME, assume no warp width (the
// device's is read: 32 on NVIDIA GPUs, 64 or 32 on AMD ones), and keep what
// differs between the runtimes in the platform and vendor files.
//
// Dtypes: every op runs natively in f32, f64, f16 and bf16 (f16/bf16 stored
// as __half/__nv_bfloat16, computed and accumulated in float, rounded to
// nearest even once per stored value; f64 computed in double). The vendor
// path (gemm, composed by the front-end into matmul and dense) has all four:
// cublasSgemm, cublasDgemm, and cublasGemmEx with 16-bit inputs and output
// and FP32 compute (policy in cuda_vendor.cpp).
//
// Launch geometry: elementwise ops accept any grid/block within the device
// limits (grid-stride loops over the whole launch). column_sum accepts any
// grid/block within the limits and at most 1024 threads per block: each block
// takes chunks of min(32, threads, cols) columns (grid-stride over chunks) and
// splits their rows over its threads (see launch_column_sum); blocks past the
// last chunk idle, so the default gives one block of 256 threads per 32
// columns. matmul and
// dense (native path) accept only block (16,16,1) — the shape the tiled kernel
// is written for — with grid.x·64 ≥ rows of the output (row tiles along x,
// up to 2^31−1 blocks: no output is too tall), grid.y·64 ≥ columns (up to
// 65 535 blocks: 4 194 240 columns), grid.z == 1; anything else is an
// InvalidArgument naming that shape. The vendor path ignores the geometry:
// cuBLAS picks its own launches.
//
// Devices: cuda:N is the N-th CUDA device that can run accel's kernels, as
// found by the backend's first probe (after CUDA_VISIBLE_DEVICES). A device
// in Prohibited compute mode, one in exclusive-process mode held by another
// process (cudaErrorDevicesUnavailable), one that cannot create a context,
// and one for which this build has no kernel image (cudaFuncGetAttributes
// fails: no SASS for its architecture and a PTX JIT failure) are left out;
// when none is left the backend is unavailable and its reason names each
// device and why, so that `auto` moves on.
//
// Current device: every call into the runtime is made with the device
// current (cudaSetDevice), and the calling thread's previous current device
// is restored afterwards (CurrentDevice), so that accel never changes the
// state of a caller's own CUDA code.
//
// The last-error slot: a launch is checked with cudaGetLastError(), which
// also returns what any earlier failed call of the thread left there. Every
// call whose result is handled without throwing clears it (cleared()), and
// every launch clears the slot before launching (kernels/launch.cuh).
//
// Memory: device memory comes from a per-device cache (DeviceMemory), so
// that freeing a temporary (dense_backward, the bce loss) never waits for the
// whole device as cudaFree does; a freed block is reused only after every
// stream's work enqueued before the free has completed.
//
// Asynchronous host copies:
//   host→device from pageable memory: the caller's bytes are copied into a
//     pinned staging buffer (cudaMallocHost) before copy_host_to_device_async
//     returns, so the DMA runs asynchronously; the caller's memory may be
//     reused at once (stronger than Device's contract).
//   host→device from page-locked memory: one DMA straight from it.
//   device→host into page-locked memory (cudaMallocHost, cudaHostAlloc,
//     cudaHostRegister: cudaPointerGetAttributes says cudaMemoryTypeHost at
//     both ends of the range): one DMA straight into it, no extra copy.
//   device→host into pageable memory: the DMA lands in a staging buffer, then
//     a stream callback (cudaLaunchHostFunc) copies it into the caller's
//     memory. That second memcpy runs on CUDA's one callback thread (shared by
//     all streams; about the bytes / host memcpy bandwidth, and later
//     callbacks wait for it); pass pinned memory to avoid it.
//   Either way the caller's memory must stay valid until the stream is
//   synchronized, as Device documents.
//   Staging buffers return to the pool when an event recorded after their
//   last use completes; the pool holds at most StagingPool::kDefaultCapBytes
//   (256 MiB) per device and waits for busy buffers rather than grow past it.
//   A copy larger than the cap (or one finding only buffers it cannot wait
//   for) is a cudaMemcpyAsync on the caller's pageable memory: host→device
//   returns once the runtime has taken the bytes, device→host only once the
//   copy is done. Blocking copies use the caller's memory directly.
//
// Verification status
//   - compiled and linked with nvcc 13.0 for sm_75..sm_90 plus sm_90 PTX, host
//     code -Wall -Wextra clean, device code clean under -Werror=all-warnings;
//     ptxas (sm_90): tiled matmul f32 64 registers, f16/bf16 71-72, f64
//     110-120; 8.3 KB shared memory (16.6 KB for f64); the tensor-core
//     matmul 128 registers (128×128 tile; 55-56 for the smaller), 20-41 KB
//     shared memory; elementwise kernels and column_sum at most 32
//     registers; no spills on any target built.
//   - on a machine without a GPU the plugin loads and reports itself
//     unavailable in one line (cudaErrorInsufficientDriver (35) with no
//     driver; cudaErrorStubLibrary (34) with the stub libcuda on the library
//     path), and conformance.cuda is reported skipped.
//   - the plugin's own sources, kernels included, pass the conformance,
//     training and reliability suites on accel's CUDA emulation
//     (emulation/, tests *.cuda-emulated) and its fault-injection tests
//     (cuda-emulated.*); runs on a GPU (tools/verify-gpu.sh) are pending.
#pragma once

#include <accel/device.hpp>
#include <accel/graph.hpp>
#include <accel/page_locked.hpp>
#include <accel/plugin.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

// The backend's identity in names and messages; the HIP build of these
// sources defines its own (backends/hip/cuda_to_hip.h, included through
// cuda_runtime_api.h above).
#ifndef ACCEL_GPU_BACKEND
#define ACCEL_GPU_BACKEND "cuda"                                     // selectors cuda:N
#define ACCEL_GPU_RUNTIME "CUDA"                                     // in messages
#define ACCEL_GPU_ARCHS_VARIABLE "CMAKE_CUDA_ARCHITECTURES"          // the build setting of the targets
#define ACCEL_GPU_AUTO_RANK 40                                       // auto's order: first of all
#endif

namespace accel {
namespace cuda {

/// "cudaErrorInsufficientDriver (35): CUDA driver version is insufficient ...".
std::string describe(cudaError_t e);

/// Errors after which the CUDA context is unusable and every later call fails
/// the same way (illegal address, launch failure, kernel assert, error
/// containment, tensor-memory leak, MPS client terminated, external device,
/// ...): the process must be restarted. Defined per runtime (cuda_platform.cpp).
bool is_sticky(cudaError_t e);

/// Why the runtime found no device, for accel-info and every selector error,
/// from the error of its device count `e` and the driver's version: no
/// driver installed at all (the runtime reads driver version 0), a driver
/// older than the runtime this plugin was built with (both versions, and the
/// driver series that would do), no device the driver sees, or the error as
/// it is. Defined per runtime (cuda_platform.cpp). Never throws but
/// std::bad_alloc.
std::string no_device_reason(cudaError_t e);

/// The facts of device `ordinal` as accel's <backend>:`index` (name, vendor,
/// versions, limits, UUID, PCI bus id, warp width, clocks). Defined per
/// runtime (cuda_platform.cpp). Throws DeviceError when the runtime fails.
DeviceInfo device_info(int index, int ordinal);

/// The facts of a device both runtimes' properties give alike (the HIP
/// build's cudaDeviceProp is hipDeviceProp_t): backend, index, name, type
/// "gpu", compute units, global memory, block and grid limits, PCI bus id.
/// device_info() adds the rest. Never throws but std::bad_alloc.
DeviceInfo common_device_info(const cudaDeviceProp& p, int index);

/// Appends the memory facts to `info.extra`: the memory clock (`memory_khz`,
/// kHz), the bus width (`bus_bits`), the theoretical bandwidth they give
/// (double data rate: 2 x clock x width, GB/s) and the L2 cache (`l2_bytes`).
void add_memory_facts(DeviceInfo& info, int memory_khz, int bus_bits, int l2_bytes);

/// Whether `p` is page-locked host memory the runtime knows (so that a DMA
/// may land there directly). Any failure answers false. Defined per runtime
/// (cuda_platform.cpp). Never throws.
bool page_locked(const void* p) noexcept;

/// A program's kernel compiled at run time and loaded into the runtime
/// (Device::build_kernel): on CUDA, NVRTC's PTX loaded by cudaLibraryLoadData
/// (cuda_platform.cpp); on HIP, hiprtc's code object loaded by
/// hipModuleLoadData (hip_platform.cpp). Launches are thread-safe.
class ProgramKernel {
public:
    virtual ~ProgramKernel() = default;
    /// Enqueues one launch of grid × block threads on `stream`; `args` holds
    /// a pointer to each argument's value, in the signature's order. Returns
    /// the launch's own error (the last-error slot cleared first), or
    /// cudaSuccess. Never throws.
    virtual cudaError_t launch(dim3 grid, dim3 block, void** args, cudaStream_t stream) noexcept = 0;
};

/// Compiles the CUDA (HIP: `hip`, else `cuda`) code of `source` with the
/// runtime's compiler for device `ordinal`, which is current, and loads its
/// kernel `source.name`. `what` names the kernel and device for messages.
/// Compiled code is cached on disk under accel's cache folder, keyed by the
/// compiler's version, the target, the options and the source. Throws
/// Unsupported when the compiler cannot be loaded (naming what to install),
/// DeviceError with the compiler's log when the code does not compile,
/// InvalidArgument when it has no extern "C" kernel of that name. Defined
/// per runtime.
std::unique_ptr<ProgramKernel> compile_program_kernel(const KernelSource& source, int ordinal, const std::string& what);

/// The ordinal of the device that owns device memory `p` (cudaMalloc'd or
/// managed), or -1 when the runtime does not know `p` as device memory.
/// Defined per runtime. Never throws.
int device_of_pointer(const void* p) noexcept;

/// The ordinal of the device of stream `s`, -1 when the runtime does not
/// know `s`, or -2 when the runtime cannot tell (HIP before 6.0). Defined
/// per runtime. Never throws.
int device_of_stream(cudaStream_t s) noexcept;

/// The primary context of device `ordinal` (CUcontext; hipCtx_t), which is
/// current. Throws Unsupported where the runtime cannot give it. Defined per
/// runtime.
std::uint64_t primary_context(int ordinal);

/// For a call whose failure is handled without an exception (an event still
/// pending, a free during shutdown): clears a non-sticky `e` from the calling
/// thread's last-error slot, so that the next launch does not report it.
/// Returns e. Never throws.
cudaError_t cleared(cudaError_t e) noexcept;

/// Makes CUDA device `ordinal` current for the calling thread for the
/// object's lifetime, then restores the thread's previous current device.
/// Not copyable; use on one thread.
class CurrentDevice {
public:
    /// Throws DeviceError when cudaGetDevice or cudaSetDevice fails.
    explicit CurrentDevice(int ordinal);
    /// Restores the previous device; a failure is cleared, never thrown.
    ~CurrentDevice();
    CurrentDevice(const CurrentDevice&) = delete;
    CurrentDevice& operator=(const CurrentDevice&) = delete;

private:
    int previous_ = 0;
    bool changed_ = false;
};

/// Why CUDA device `ordinal` cannot run accel's kernels (compute mode,
/// context creation, kernel image), or an empty string when it can. Leaves
/// the calling thread's current device as it was. Never throws.
std::string unusable_reason(int ordinal);

/// Throws DeviceError when e != cudaSuccess. The message names `call`, the
/// call site (file:line), the code's name, number and text, and, for sticky
/// errors, that the context is unusable. Non-sticky errors are cleared from
/// the runtime's last-error slot so that they do not resurface later.
void check(cudaError_t e, const char* call, const char* file, int line);

/// "CALL failed at FILE:LINE", the start of every error message of a failed call.
std::string call_site(const char* call, const char* file, int line);

/// The name of runtime function, type or code `x` as this build spells it:
/// "cudaMalloc", or "hipMalloc" in the HIP build (the argument is expanded
/// before it is quoted).
#define ACCEL_GPU_NAME(x) ACCEL_GPU_NAME_QUOTED_(x)
#define ACCEL_GPU_NAME_QUOTED_(x) #x

/// Checks one runtime call (see check()); the message quotes the call as
/// this build makes it.
#define ACCEL_CUDA_CHECK(call) ::accel::cuda::check((call), ACCEL_GPU_NAME(call), __FILE__, __LINE__)

/// Device memory of one CUDA device, kept for reuse when freed, so that a
/// free never stalls the device (cudaFree waits for all of the device's work,
/// on every stream, before it returns).
///
/// Guarantee: a freed block is handed out again only once all the work that
/// any stream of the device had been given before the free has completed.
/// At free() an event is recorded on every registered stream; the block is
/// reused only when cudaEventQuery reports each of them complete (never
/// waiting for them). Work enqueued after the free cannot use the block: its
/// owner gave it up. So every stream that may use device memory must be
/// registered while it lives, and its owner synchronizes it before
/// unregistering it (CudaStream does both).
///
/// Blocks are reused only for requests of the same size class (bytes rounded
/// up to 512 B up to 1 MiB, to 1 MiB above). Cached blocks stay allocated
/// (cudaMemGetInfo counts them as used) until an allocation is refused, when
/// every idle one is freed with cudaFree (which waits for the device) and the
/// allocation is tried once more, or until release_all(). Thread-safe.
class DeviceMemory {
public:
    DeviceMemory() = default;
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;
    /// Frees nothing: the owner calls release_all() while the runtime is alive.
    ~DeviceMemory() = default;

    /// `bytes` (> 0) of device memory in *p, on the current device: a cached
    /// block that no earlier work can still use, else cudaMalloc. Returns
    /// cudaSuccess or cudaMalloc's error (cudaErrorMemoryAllocation when
    /// refused even after the cache was emptied), left in the last-error slot
    /// for the caller to check or clear. Never throws.
    cudaError_t allocate(void** p, std::size_t bytes) noexcept;
    /// Gives back `p` from allocate() (nullptr is ignored), on the current
    /// device: cached for reuse after the events described above. If an
    /// event cannot be created or recorded it is freed at once with cudaFree
    /// (waiting for the device) instead; errors are cleared. Never throws.
    void free(void* p) noexcept;
    /// Registers / unregisters a stream whose work may use device memory.
    /// Never throw (a registration that cannot grow the list terminates, as
    /// any allocation failure under noexcept).
    void add_stream(cudaStream_t s) noexcept;
    void remove_stream(cudaStream_t s) noexcept;
    /// Frees every cached block (cudaFree) and event, on the current device;
    /// with `everything`, also forgets the blocks still handed out. Returns
    /// the bytes freed. Errors are cleared. Never throws.
    std::size_t release_all(bool everything = false) noexcept;
    /// Bytes of the idle (cached) blocks. Never throws.
    std::size_t cached_bytes() noexcept;

private:
    struct Cached {
        void* ptr;
        std::vector<cudaEvent_t> pending;  // one per stream at free time
    };
    bool ready(const Cached& c) noexcept;
    std::size_t release_idle() noexcept;  // caller holds mutex_
    std::mutex mutex_;
    std::vector<cudaStream_t> streams_;
    std::multimap<std::size_t, Cached> idle_;        // size class -> freed blocks
    std::unordered_map<void*, std::size_t> in_use_;  // handed-out block -> size class
    std::vector<cudaEvent_t> spare_events_;
};

/// A non-blocking CUDA stream (cudaStreamNonBlocking: no implicit ordering
/// with the legacy NULL stream), registered with its device's DeviceMemory.
class CudaStream final : public Stream {
public:
    /// Creates the stream on the current CUDA device. Throws DeviceError.
    /// Shares `memory` (the device's default stream may outlive the
    /// CudaDevice members).
    CudaStream(Device& d, std::shared_ptr<DeviceMemory> memory);
    /// Synchronizes the stream (DeviceMemory must see no work of an
    /// unregistered stream), unregisters and destroys it; errors are cleared.
    ~CudaStream() override;
    /// A stream over `borrowed`, a stream of the program's on the current
    /// CUDA device (interop): registered like an own one, synchronized but
    /// never destroyed by the destructor. Never throws but std::bad_alloc.
    CudaStream(Device& d, std::shared_ptr<DeviceMemory> memory, cudaStream_t borrowed);
    /// cudaStreamSynchronize. Throws DeviceError on a failed call or a failed
    /// kernel earlier on the stream.
    void do_synchronize() override;
    /// The native stream, for launches and cuBLAS.
    cudaStream_t handle() const noexcept { return stream_; }

private:
    std::shared_ptr<DeviceMemory> memory_;
    cudaStream_t stream_ = nullptr;
    bool owned_ = true;  ///< false for a program's stream (interop)
};

/// A CUDA event with timing enabled; elapsed time via cudaEventElapsedTime
/// (resolution about 0.5 µs per the CUDA Runtime API reference).
class CudaEvent final : public Event {
public:
    /// Creates the event on the current CUDA device. Throws DeviceError.
    explicit CudaEvent(Device& d);
    ~CudaEvent() override;
    /// The native event, for cudaEventElapsedTime.
    cudaEvent_t handle() const noexcept { return event_; }

protected:
    void do_record(Stream& stream) override;
    void do_synchronize() override;

private:
    cudaEvent_t event_ = nullptr;
};

/// Pinned host buffers for asynchronous copies, reused once the copies that
/// used them have completed, holding at most cap_bytes() in all.
/// Thread-safe.
class StagingPool {
public:
    /// The default cap: 256 MiB of page-locked host memory per device.
    static constexpr std::size_t kDefaultCapBytes = std::size_t{256} << 20;
    /// A pool that holds at most `cap_bytes` of pinned memory.
    explicit StagingPool(std::size_t cap_bytes = kDefaultCapBytes) : cap_(cap_bytes) {}
    std::size_t cap_bytes() const noexcept { return cap_; }
    StagingPool(const StagingPool&) = delete;
    StagingPool& operator=(const StagingPool&) = delete;
    /// Frees every buffer; the owner synchronizes the device first.
    ~StagingPool();
    /// A pinned buffer of at least `bytes` bytes, marked busy, or nullptr
    /// when bytes > cap_bytes() or the pool is full of buffers it cannot wait
    /// for (their event could not be recorded): the caller then copies
    /// unstaged. Reuses the smallest idle buffer that fits; otherwise frees
    /// the idle ones (too small) and allocates, first waiting
    /// (cudaEventSynchronize, blocking the calling thread) for busy buffers
    /// to come back while a new one would pass the cap. Throws OutOfMemory
    /// when cudaMallocHost refuses, DeviceError on other failures.
    void* acquire(std::size_t bytes);
    /// Makes `p` (from acquire) idle once the work now enqueued on `stream`
    /// has completed, by recording an event there. Never throws: if the event
    /// cannot be recorded the buffer stays busy until the pool is destroyed.
    void release_after(void* p, cudaStream_t stream) noexcept;

private:
    struct Block {
        void* ptr;
        std::size_t bytes;
        cudaEvent_t done;  // recorded after the buffer's last use
        bool busy;
        bool recorded;
    };
    void free_idle();  // caller holds mutex_
    const std::size_t cap_;
    std::mutex mutex_;
    std::vector<Block> blocks_;
    std::size_t held_ = 0;  // bytes of all blocks
};

/// The vendor BLAS of one device, opaque here: cuBLAS (cuda_vendor.cpp) or,
/// in the HIP build, rocBLAS loaded at run time (backends/hip/hip_vendor.cpp).
struct VendorBlas;
/// Deletes a VendorBlas (its handle destroyed on the current device). Never throws.
struct VendorBlasDeleter {
    void operator()(VendorBlas* blas) const noexcept;
};
using VendorBlasPtr = std::unique_ptr<VendorBlas, VendorBlasDeleter>;

/// Starts the vendor BLAS on the current device. Returns it, with
/// `description` set to its name, version and math mode; or null, with
/// `description` saying why it could not start (the vendor path is then
/// unsupported, and says so). Throws InvalidArgument only for a malformed
/// setting in the environment (ACCEL_CUDA_TF32 other than 0 or 1).
VendorBlasPtr vendor_blas_start(std::string& description);
/// C[m,n] = op(A)·op(B) + beta·C (beta 0 or 1) on `stream`: op(A) is A[m,k]
/// or, when ta, the transpose of A[k,m]; op(B) is B[k,n] or, when tb, the
/// transpose of B[n,k]; all row-major, computed through the column-major
/// identity Cᵀ = op(B)ᵀ·op(A)ᵀ; k > 0 (the front-end handles K = 0). One
/// overload per dtype. cuBLAS: f32 cublasSgemm (FP32, or TF32 under
/// ACCEL_CUDA_TF32=1), f64 cublasDgemm, f16 (__half) and bf16
/// (__nv_bfloat16) cublasGemmEx with CUBLAS_COMPUTE_32F: FP32 accumulation,
/// C rounded once to 16 bits (rocBLAS: the same with rocblas_sgemm,
/// rocblas_dgemm and rocblas_gemm_ex). Throws Unsupported when a dimension
/// exceeds INT_MAX (the libraries' int interface), DeviceError when the
/// library fails. Calls on one VendorBlas are serialized (its handle is
/// bound to each call's stream).
void vendor_gemm(VendorBlas& blas, const float* a, const float* b, float* c, std::size_t m, std::size_t n,
                 std::size_t k, bool ta, bool tb, double beta, cudaStream_t stream);
void vendor_gemm(VendorBlas& blas, const double* a, const double* b, double* c, std::size_t m, std::size_t n,
                 std::size_t k, bool ta, bool tb, double beta, cudaStream_t stream);
void vendor_gemm(VendorBlas& blas, const __half* a, const __half* b, __half* c, std::size_t m, std::size_t n,
                 std::size_t k, bool ta, bool tb, double beta, cudaStream_t stream);
void vendor_gemm(VendorBlas& blas, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, std::size_t m,
                 std::size_t n, std::size_t k, bool ta, bool tb, double beta, cudaStream_t stream);

/// One CUDA device (made current around each call that needs it).
class CudaDevice final : public Device,
                         public Probes,
                         public NativeInterop,
                         public KernelBuilder,
                         public PageLockedMemory,
                         public GraphRecorder {
public:
    // Probes (contracts in accel/device.hpp; cuda_ops.cpp).
    ACCEL_PROBES_OVERRIDES

    // PageLockedMemory (accel/page_locked.hpp; cuda_backend.cpp):
    // cudaMallocHost, which copies in both directions take by one DMA.
    ACCEL_PAGE_LOCKED_MEMORY_OVERRIDES

    // GraphRecorder (accel/graph.hpp; cuda_backend.cpp): stream capture
    // (relaxed mode) on a stream of its own into a graph, instantiated once;
    // a replay is one cudaGraphLaunch (hipGraphLaunch).
    ACCEL_GRAPH_RECORDER_OVERRIDES

    /// Opens CUDA device `ordinal` as accel's cuda:`index`: reads its
    /// properties and warp width, starts the vendor BLAS, registers the
    /// kernels (register_kernels).
    /// Throws DeviceError when the runtime fails.
    CudaDevice(int index, int ordinal);
    /// Synchronizes the device, then frees cuBLAS and the staging buffers;
    /// errors are ignored, and nothing is freed once the CUDA runtime is being
    /// unloaded at process exit.
    ~CudaDevice() override;

    // Interop (cuda_interop.cpp; contracts in accel/native.hpp): device =
    // the ordinal, context = the primary context, queue = cudaStream_t,
    // memory = a device pointer (offset 0), adopt = a device pointer of this
    // device's.
    ACCEL_NATIVE_INTEROP_OVERRIDES  // accel/plugin.hpp
    /// 0 is the legacy default stream (e.g. PyTorch's default stream).
    bool zero_is_a_queue() const noexcept override { return true; }

    /// Tensor cores through mma.sync m16n8k16 (warp_mma.cuh; compute
    /// capability 8.0 and newer, the CUDA emulation's device too; cuda_ops.cpp).
    /// Throws Unsupported on older devices and in the HIP build.
    void matrix_throughput(DeviceHandle y, DType dtype, std::size_t n, std::size_t iterations, Stream& s) override;
    /// f16/bf16 on the matrix engine on the vendor path (cuBLAS and rocBLAS
    /// run 16-bit GEMMs with f32 compute there) and on the native path where
    /// the device has tensor cores (the mma kernel); else FMA in f32 (f64 for
    /// f64). Never throws.
    GemmCompute gemm_compute(DType dtype, OpPath path) const noexcept override;

protected:
    ACCEL_DEVICE_RUNTIME_OVERRIDES  // the runtime every device has (accel/plugin.hpp)
    /// Its capabilities (accel/capability.hpp).
    void* do_capability(std::string_view name) noexcept override {
        return accel::offer_capability<Probes, NativeInterop, KernelBuilder, PageLockedMemory, GraphRecorder>(this,
                                                                                                             name);
    }
    // KernelBuilder: a program's own kernels.
    std::shared_ptr<accel::BuiltKernel> build_program_kernel(const accel::KernelSource& source) override;
    /// Elementwise: blocks of 256 threads, grid covering the elements but at
    /// most 32 blocks per SM (grid-stride loops do the rest). column_sum
    /// (rows ignored): blocks of 256 threads, one per chunk of a warp's width
    /// of columns (the device's warp width), with the same cap.
    /// matmul/dense: block (16,16,1), grid (⌈rows/BM⌉, ⌈cols/BN⌉, 1): one
    /// block per BM × BN output tile (rows along x), the tile being
    /// matmul_tile(rows, cols) of kernels/kernels.hpp (128×128, 64×64 or
    /// 32×32 by the output's shape).
    LaunchGeometry do_default_geometry(Op op, DType dtype, std::size_t rows, std::size_t cols) const override;
    std::optional<TileLayout> do_tile_layout(Op op, DType dtype, std::size_t rows, std::size_t cols) const override;
    std::string do_unsupported_reason(Op op, DType dtype, OpPath path) const override;  // cuda_ops.cpp
    /// The freed blocks DeviceMemory keeps, and their release (cudaFree).
    std::uint64_t do_cached_bytes() const noexcept override;
    std::uint64_t do_release_cached() noexcept override;

private:
    /// Registers every op's native kernel in f32, f64, f16 and bf16, and gemm
    /// on the vendor path in all four when cuBLAS started (cuda_ops.cpp). The
    /// kernels keep a pointer to this device.
    void register_kernels();
    /// The kernels of one dtype; T is its storage type (float, double, __half,
    /// __nv_bfloat16). Defined and instantiated in cuda_ops.cpp only.
    template <class T>
    void register_dtype(DType dtype);

    int ordinal_;            // the CUDA device ordinal (cudaSetDevice)
    unsigned warp_size_ = 32;  // threads per warp (wavefront): read from the device
    bool tensor_cores_ = false;  // f16/bf16 matmul and dense through launch_matmul_mma
    std::shared_ptr<DeviceMemory> memory_ = std::make_shared<DeviceMemory>();
    StagingPool staging_;
    std::string blas_description_;  // the vendor BLAS, or why it did not start
    VendorBlasPtr blas_;
};

}  // namespace cuda
}  // namespace accel
