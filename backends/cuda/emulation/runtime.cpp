// accel's CUDA emulation: the CUDA runtime calls of the CUDA backend,
// answered on the CPU, with fault injection (control.h); a kernel's blocks
// run in blocks.cpp, the cuBLAS calls in cublas.cpp.
//
// Test infrastructure. The CUDA plugin's sources, compiled as host C++
// against include/ (instead of the toolkit's headers) and linked with this
// file, make an emulated `cuda` plugin: the same backend code and the same
// kernel source, run end to end without a GPU.
//
// Model (after the CUDA Runtime API reference):
//   - devices: "devices" of them (control.h), each 4 GiB of host memory;
//     cudaMalloc/cudaMallocHost are aligned host allocations.
//   - the current device is per host thread (cudaSetDevice), default 0.
//   - every call that fails leaves its code in the calling thread's
//     last-error slot (cudaGetLastError returns and clears it); an
//     unrecoverable (sticky) error makes every later call on its device
//     return it.
//   - a stream is an in-order queue run by one thread; events complete when
//     the stream reaches them; the null stream is one more queue per device.
//   - a kernel launch runs the kernel on the stream's thread: blocks one after
//     another, the threads of a block as fibers (own stacks, switched by a
//     few lines of x86-64 assembly) at __syncthreads. Thread 0 of a block runs first; when it finishes without
//     reaching a barrier the other threads are plain calls (no fiber switch).
//   - cublasSgemm, cublasDgemm and cublasGemmEx (f32, f64, f16, bf16) are one
//     reference GEMM summing in float64.
//   - stream capture (graphs.cpp): while a stream captures, what would be
//     queued on it is recorded instead; a synchronize of it or an event
//     recorded on it is refused (cudaErrorStreamCaptureUnsupported) and
//     invalidates the capture.
#include "blocks.hpp"
#include "runtime_internal.hpp"
#include "control.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

thread_local uint3 threadIdx;
thread_local uint3 blockIdx;
thread_local dim3 blockDim;
thread_local dim3 gridDim;
thread_local int warpSize = 32;

struct CUstream_st;
struct CUevent_st;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxDevices = 8;

// The build may name its own fault variable and default warp width (the HIP
// emulation: ACCEL_HIP_EMULATION_FAULTS, 64).
#ifndef ACCEL_EMULATION_FAULTS_VARIABLE
#define ACCEL_EMULATION_FAULTS_VARIABLE "ACCEL_CUDA_EMULATION_FAULTS"
#endif
#ifndef ACCEL_EMULATION_WARP_SIZE
#define ACCEL_EMULATION_WARP_SIZE 32
#endif
constexpr std::size_t kDeviceMemory = std::size_t{4} << 30;  // bytes per emulated device

bool is_sticky_code(int e) {
    // The codes the CUDA documentation says leave the process unusable.
    switch (e) {
        case cudaErrorContained: case cudaErrorIllegalAddress: case cudaErrorLaunchTimeout: case cudaErrorAssert:
        case cudaErrorHardwareStackError: case cudaErrorIllegalInstruction: case cudaErrorMisalignedAddress:
        case cudaErrorInvalidAddressSpace: case cudaErrorInvalidPc: case cudaErrorLaunchFailure:
        case cudaErrorTensorMemoryLeak: case cudaErrorMpsClientTerminated: case cudaErrorExternalDevice:
            return true;
        default:
            return false;
    }
}

struct Device {
    std::atomic<int> sticky{0};            // an unrecoverable error, returned by every later call
    std::atomic<std::size_t> used{0};      // bytes allocated with cudaMalloc
    std::atomic<long> event_not_ready{0};  // faults, see control.h
    std::atomic<long> malloc_fail{0};
    std::atomic<long> launch_error{0};
    std::atomic<long> hang{0};          // launches until the one that never finishes (0: none)
    std::atomic<long> kill_process{0};  // launches until the one that kills the process (0: none)
    std::atomic<int> compute_mode{cudaComputeModeDefault};
    std::atomic<int> compute_capability{90};  // major·10 + minor
    std::atomic<int> warp_size{ACCEL_EMULATION_WARP_SIZE};
    std::atomic<bool> busy{false};
    std::atomic<bool> no_kernel_image{false};
    std::atomic<long> event_time_percent{100};
    std::atomic<long> mallocs{0}, frees{0}, host_funcs{0}, graph_launches{0};  // counters, see control.h
    std::mutex mutex;                       // guards the members below
    std::map<std::string, int> fail_call;   // runtime function -> code of its next call
    // Every stream of the device, for cudaDeviceSynchronize; shared so that a
    // synchronize never drains a stream another thread is destroying.
    std::map<CUstream_st*, std::shared_ptr<CUstream_st>> streams;
    CUstream_st* legacy = nullptr;          // the null stream, created on first use
};

struct State {
    std::atomic<int> device_count{1};
    std::atomic<int> driver_version{13000};  // CUDA's encoding; 0: no driver installed
    Device devices[kMaxDevices];
    std::mutex alloc_mutex;
    std::map<void*, std::pair<std::size_t, int>> allocations;  // device pointer -> bytes, device
    std::map<const char*, std::size_t, std::less<>> pinned;   // cudaMallocHost pointer -> bytes
    std::size_t pinned_bytes = 0, pinned_peak = 0;              // guarded by alloc_mutex
};

// Sets a fault of control.h on `st` (accel_cuda_emulation_fault's work).
int set_fault(State& st, const char* name, int device, long value) {
    const std::string n = name ? name : "";
    if (n == "driver_version") {
        if (value < 0 || value > 99990) return -1;
        st.driver_version = static_cast<int>(value);
        return 0;
    }
    if (n == "devices") {
        if (value < 1 || value > kMaxDevices) return -1;
        st.device_count = static_cast<int>(value);
        return 0;
    }
    if (device < 0 || device >= kMaxDevices) return -1;
    Device& v = st.devices[device];
    if (n == "event_not_ready") v.event_not_ready = value;
    else if (n == "malloc_fail") v.malloc_fail = value;
    else if (n == "launch_error") v.launch_error = value;
    else if (n == "hang" || n == "kill_process") {
        if (value < 0) return -1;
        (n == "hang" ? v.hang : v.kill_process) = value;
    }
    else if (n == "compute_mode") v.compute_mode = static_cast<int>(value);
    else if (n == "compute_capability") {
        if (value < 50 || value > 129) return -1;
        v.compute_capability = static_cast<int>(value);
    }
    else if (n == "warp_size") {
        if (value != 32 && value != 64) return -1;
        v.warp_size = static_cast<int>(value);
    }
    else if (n == "busy") v.busy = value != 0;
    else if (n == "no_kernel_image") v.no_kernel_image = value != 0;
    else if (n == "event_time_percent") {
        if (value < 0) return -1;
        v.event_time_percent = value;
    } else if (n.rfind("fail_call:", 0) == 0) {
        std::lock_guard<std::mutex> lock(v.mutex);
        v.fail_call[n.substr(10)] = static_cast<int>(value);
    } else
        return -1;
    return 0;
}

// Faults from ACCEL_CUDA_EMULATION_FAULTS (see control.h), for tests that run
// a program they cannot reach into (e.g. one rank of an MPI job). A malformed
// entry is reported on stderr and ends the process: a test must not run
// without the fault it asked for.
void apply_env_faults(State& st) {
    const char* env = std::getenv(ACCEL_EMULATION_FAULTS_VARIABLE);
    if (!env || !*env) return;
    std::string text = env;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find(';', start);
        if (end == std::string::npos) end = text.size();
        const std::string item = text.substr(start, end - start);
        start = end + 1;
        if (item.empty()) continue;
        const auto eq = item.find('=');
        std::string name = item.substr(0, eq);
        int device = 0;
        const auto at = name.find('@');
        char* stop = nullptr;
        bool ok = eq != std::string::npos;
        if (ok && at != std::string::npos) {
            device = static_cast<int>(std::strtol(name.c_str() + at + 1, &stop, 10));
            ok = *stop == '\0';
            name = name.substr(0, at);
        }
        const long value = ok ? std::strtol(item.c_str() + eq + 1, &stop, 10) : 0;
        ok = ok && *stop == '\0' && eq + 1 < item.size();
        if (!ok || set_fault(st, name.c_str(), device, value) != 0) {
            std::fprintf(stderr, ACCEL_EMULATION_FAULTS_VARIABLE ": bad entry '%s'; expected NAME[@DEVICE]=VALUE;... "
                                 "with a fault name of control.h\n", item.c_str());
            std::exit(2);
        }
    }
}

// Never destroyed: stream threads and late frees at process exit may still use it.
State& state() {
    static State* s = [] {
        auto* st = new State;
        apply_env_faults(*st);
        return st;
    }();
    return *s;
}

// The pinned allocation that holds p, or null; the caller holds alloc_mutex.
const std::pair<const char* const, std::size_t>* pinned_at(const void* p) {
    const char* c = static_cast<const char*>(p);
    auto& pinned = state().pinned;
    auto it = pinned.upper_bound(c);
    if (it == pinned.begin()) return nullptr;
    --it;
    return c < it->first + it->second ? &*it : nullptr;
}

thread_local int tl_current = 0;
// The stream whose worker thread this is (null on other threads): what a
// task uses, so that a task recorded by a capture runs on any stream.
thread_local CUstream_st* tl_running = nullptr;
thread_local cudaError_t tl_last = cudaSuccess;

cudaError_t ret(cudaError_t e) {
    if (e != cudaSuccess) tl_last = e;
    return e;
}

bool valid_device(int d) { return d >= 0 && d < state().device_count.load(); }
Device& dev(int d) { return state().devices[d]; }

// The sticky error of device d, or an injected failure of `call`, or success.
cudaError_t enter(int d, const char* call = nullptr) {
    Device& v = dev(d);
    if (int s = v.sticky.load()) return static_cast<cudaError_t>(s);
    if (call) {
        std::lock_guard<std::mutex> lock(v.mutex);
        auto it = v.fail_call.find(call);
        if (it != v.fail_call.end()) {
            const int code = it->second;
            v.fail_call.erase(it);
            return static_cast<cudaError_t>(code);
        }
    }
    return cudaSuccess;
}

// Creating a context: what cudaSetDevice/cudaInitDevice/cudaFree(0) do first.
cudaError_t context_error(int d) {
    Device& v = dev(d);
    if (int s = v.sticky.load()) return static_cast<cudaError_t>(s);
    if (v.compute_mode.load() == cudaComputeModeProhibited) return cudaErrorDevicesUnavailable;
    if (v.busy.load()) return cudaErrorDevicesUnavailable;
    return cudaSuccess;
}

}  // namespace

// ---- streams ------------------------------------------------------------------

struct CUstream_st {
    explicit CUstream_st(int d) : device(d), worker([this] { loop(); }) {}
    ~CUstream_st() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            stop = true;
        }
        wake.notify_all();
        worker.join();
    }
    void push(std::function<void()> task) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (capture) {
                capture->push_back(std::move(task));
                return;
            }
            queue.push_back(std::move(task));
        }
        wake.notify_all();
    }
    // Stream capture: from begin_capture, push() records into the capture
    // instead of queueing; end_capture hands the tasks over.
    cudaError_t begin_capture() {
        std::lock_guard<std::mutex> lock(mutex);
        if (capture) return cudaErrorIllegalState;
        capture = std::make_unique<std::vector<std::function<void()>>>();
        capture_invalidated = false;
        return cudaSuccess;
    }
    cudaError_t end_capture(std::vector<std::function<void()>>& tasks) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!capture) return cudaErrorIllegalState;
        std::unique_ptr<std::vector<std::function<void()>>> ended = std::move(capture);
        if (capture_invalidated) return cudaErrorStreamCaptureInvalidated;
        tasks = std::move(*ended);
        return cudaSuccess;
    }
    // True when the stream captures; the capture is then invalidated (a call
    // that cannot be captured was made on it).
    bool refuse_while_capturing() {
        std::lock_guard<std::mutex> lock(mutex);
        if (capture) capture_invalidated = true;
        return static_cast<bool>(capture);
    }
    // Waits until the queue is empty and idle; returns (and clears) an
    // asynchronous error of this stream, or the device's sticky error.
    cudaError_t drain() {
        std::unique_lock<std::mutex> lock(mutex);
        idle.wait(lock, [this] { return queue.empty() && !running; });
        if (int s = dev(device).sticky.load()) return static_cast<cudaError_t>(s);
        const cudaError_t e = error;
        error = cudaSuccess;
        return e;
    }
    void fail(cudaError_t e) {
        if (is_sticky_code(e)) {
            int zero = 0;
            dev(device).sticky.compare_exchange_strong(zero, e);
        } else {
            std::lock_guard<std::mutex> lock(mutex);
            error = e;
        }
    }

    const int device;

private:
    void loop() {
        tl_current = device;
        tl_running = this;
        std::unique_lock<std::mutex> lock(mutex);
        for (;;) {
            wake.wait(lock, [this] { return stop || !queue.empty(); });
            if (queue.empty()) return;  // stop, and nothing left
            std::function<void()> task = std::move(queue.front());
            queue.pop_front();
            running = true;
            lock.unlock();
            // After an unrecoverable error the device runs nothing more.
            if (!dev(device).sticky.load()) task();
            lock.lock();
            running = false;
            if (queue.empty()) idle.notify_all();
        }
    }

    std::mutex mutex;
    std::condition_variable wake, idle;
    std::deque<std::function<void()>> queue;
    std::unique_ptr<std::vector<std::function<void()>>> capture;
    bool capture_invalidated = false;
    bool running = false, stop = false;
    cudaError_t error = cudaSuccess;
    std::thread worker;
};

struct CUevent_st {
    explicit CUevent_st(int d) : device(d) {}
    const int device;
    std::mutex mutex;
    std::condition_variable done_cv;
    std::uint64_t recorded = 0, completed = 0;  // generations: complete when equal
    Clock::time_point when{};
};

namespace {

// The stream a call means: `s`, or the current device's null stream.
CUstream_st* resolve(cudaStream_t s) {
    if (s) return s;
    Device& v = dev(tl_current);
    std::lock_guard<std::mutex> lock(v.mutex);
    if (!v.legacy) {
        auto s = std::make_shared<CUstream_st>(tl_current);
        v.legacy = s.get();
        v.streams[v.legacy] = std::move(s);  // lives as long as the process
    }
    return v.legacy;
}

void run_grid(CUstream_st* s, dim3 grid, dim3 block, const std::function<void()>& body) {
    gridDim = grid;
    blockDim = block;
    warpSize = dev(s->device).warp_size.load();
    const std::size_t threads = static_cast<std::size_t>(block.x) * block.y * block.z;
    try {
        for (unsigned z = 0; z < grid.z; ++z)
            for (unsigned y = 0; y < grid.y; ++y)
                for (unsigned x = 0; x < grid.x; ++x) {
                    blockIdx = uint3{x, y, z};
                    accel::cuda::emulation::run_block(body, threads);
                }
    } catch (const accel::cuda::emulation::IllegalInBlock& e) {
        std::fprintf(stderr, "accel CUDA emulation: block (%u,%u,%u)%s: the launch fails with "
                             "cudaErrorIllegalInstruction\n",
                     blockIdx.x, blockIdx.y, blockIdx.z, e.what);
        s->fail(cudaErrorIllegalInstruction);
    }
}

}  // namespace

namespace accel {
namespace cuda {
namespace emulation {

int current_device() noexcept { return tl_current; }

cudaError_t device_state(int device) { return enter(device); }

cudaError_t begin_capture(cudaStream_t stream) {
    if (!stream) return ret(cudaErrorStreamCaptureUnsupported);  // the legacy stream cannot capture
    if (cudaError_t e = enter(stream->device, "cudaStreamBeginCapture")) return ret(e);
    return ret(stream->begin_capture());
}

cudaError_t end_capture(cudaStream_t stream, std::vector<std::function<void()>>& tasks) {
    if (!stream) return ret(cudaErrorIllegalState);
    return ret(stream->end_capture(tasks));
}

void count_graph_launch(int device) { ++dev(device).graph_launches; }

cudaError_t returned(cudaError_t e) { return ret(e); }

bool enqueue(int device, cudaStream_t stream, std::function<void()> task) {
    CUstream_st* s = stream ? stream : resolve(nullptr);
    if (s->device != device || enter(device)) return false;
    s->push(std::move(task));
    return true;
}

cudaError_t launch(dim3 grid, dim3 block, cudaStream_t stream, std::function<void()> body) {
    const int d = tl_current;
    CUstream_st* s = resolve(stream);
    if (s->device != d) return ret(cudaErrorInvalidResourceHandle);
    if (cudaError_t e = enter(d)) return ret(e);
    if (dev(d).no_kernel_image.load()) return ret(cudaErrorNoKernelImageForDevice);
    const std::size_t threads = static_cast<std::size_t>(block.x) * block.y * block.z;
    if (threads == 0 || threads > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64 || grid.x == 0 ||
        grid.y == 0 || grid.z == 0 || grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535)
        return ret(cudaErrorInvalidConfiguration);
    // Counts down to the launch a fault picked; true on that one.
    auto reached = [](std::atomic<long>& left) {
        long n = left.load();
        while (n > 0 && !left.compare_exchange_weak(n, n - 1)) {}
        return n == 1;
    };
    if (reached(dev(d).kill_process)) {
        std::fprintf(stderr, "accel CUDA emulation: fault kill_process: killing process %ld at a kernel launch\n",
                     static_cast<long>(getpid()));
        std::fflush(stderr);
        raise(SIGKILL);
    }
    if (reached(dev(d).hang)) {
        // A kernel that never finishes: the stream's worker blocks for good,
        // and so does everything that waits for the stream.
        s->push([] {
            for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
        });
        return cudaSuccess;
    }
    if (const long code = dev(d).launch_error.exchange(0)) {
        s->push([code] { tl_running->fail(static_cast<cudaError_t>(code)); });
        return cudaSuccess;
    }
    s->push([grid, block, body = std::move(body)] { run_grid(tl_running, grid, block, body); });
    return cudaSuccess;
}

cudaError_t func_attributes(cudaFuncAttributes* attr) {
    if (cudaError_t e = enter(tl_current)) return ret(e);
    if (dev(tl_current).no_kernel_image.load()) return ret(cudaErrorNoKernelImageForDevice);
    *attr = cudaFuncAttributes{32, 90, 90, 1024};
    return cudaSuccess;
}

}  // namespace emulation
}  // namespace cuda
}  // namespace accel

// ---- errors -------------------------------------------------------------------

namespace {
// Each code the emulation can return: its name and, where the emulation
// gives one, CUDA's message for it.
struct ErrorText {
    cudaError_t code;
    const char* name;
    const char* message;
};
#define ACCEL_EMU_ERROR(code, message) \
    ErrorText { code, #code, message }
constexpr ErrorText kErrors[] = {
    ACCEL_EMU_ERROR(cudaSuccess, "no error"),
    ACCEL_EMU_ERROR(cudaErrorInvalidValue, nullptr),
    ACCEL_EMU_ERROR(cudaErrorMemoryAllocation, "out of memory"),
    ACCEL_EMU_ERROR(cudaErrorInitializationError, nullptr),
    ACCEL_EMU_ERROR(cudaErrorCudartUnloading, nullptr),
    ACCEL_EMU_ERROR(cudaErrorInvalidConfiguration, "invalid configuration argument"),
    ACCEL_EMU_ERROR(cudaErrorStubLibrary, nullptr),
    ACCEL_EMU_ERROR(cudaErrorInsufficientDriver, nullptr),
    ACCEL_EMU_ERROR(cudaErrorDevicesUnavailable, "CUDA-capable device(s) is/are busy or unavailable"),
    ACCEL_EMU_ERROR(cudaErrorNoDevice, nullptr),
    ACCEL_EMU_ERROR(cudaErrorInvalidDevice, nullptr),
    ACCEL_EMU_ERROR(cudaErrorNoKernelImageForDevice,
                    "no kernel image is available for execution on the device"),
    ACCEL_EMU_ERROR(cudaErrorInvalidPtx, nullptr),
    ACCEL_EMU_ERROR(cudaErrorJitCompilerNotFound, nullptr),
    ACCEL_EMU_ERROR(cudaErrorUnsupportedPtxVersion, nullptr),
    ACCEL_EMU_ERROR(cudaErrorContained, "uncorrectable error contained by the hardware"),
    ACCEL_EMU_ERROR(cudaErrorInvalidResourceHandle, "invalid resource handle"),
    ACCEL_EMU_ERROR(cudaErrorIllegalState, "the operation cannot be performed in the present state"),
    ACCEL_EMU_ERROR(cudaErrorSymbolNotFound, "named symbol not found"),
    ACCEL_EMU_ERROR(cudaErrorNotReady, "device not ready"),
    ACCEL_EMU_ERROR(cudaErrorIllegalAddress, "an illegal memory access was encountered"),
    ACCEL_EMU_ERROR(cudaErrorLaunchTimeout, nullptr),
    ACCEL_EMU_ERROR(cudaErrorAssert, nullptr),
    ACCEL_EMU_ERROR(cudaErrorHardwareStackError, nullptr),
    ACCEL_EMU_ERROR(cudaErrorIllegalInstruction, nullptr),
    ACCEL_EMU_ERROR(cudaErrorMisalignedAddress, nullptr),
    ACCEL_EMU_ERROR(cudaErrorInvalidAddressSpace, nullptr),
    ACCEL_EMU_ERROR(cudaErrorInvalidPc, nullptr),
    ACCEL_EMU_ERROR(cudaErrorLaunchFailure, nullptr),
    ACCEL_EMU_ERROR(cudaErrorTensorMemoryLeak, nullptr),
    ACCEL_EMU_ERROR(cudaErrorNotSupported, "operation not supported"),
    ACCEL_EMU_ERROR(cudaErrorMpsClientTerminated, nullptr),
    ACCEL_EMU_ERROR(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing"),
    ACCEL_EMU_ERROR(cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture"),
    ACCEL_EMU_ERROR(cudaErrorExternalDevice, nullptr),
    ACCEL_EMU_ERROR(cudaErrorUnknown, nullptr),
};
#undef ACCEL_EMU_ERROR
}  // namespace

const char* cudaGetErrorName(cudaError_t e) {
    for (const ErrorText& t : kErrors)
        if (t.code == e) return t.name;
    return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t e) {
    for (const ErrorText& t : kErrors)
        if (t.code == e && t.message) return t.message;
    return "error reported by the accel CUDA emulation";
}

cudaError_t cudaGetLastError() {
    if (int s = dev(tl_current).sticky.load()) return static_cast<cudaError_t>(s);
    const cudaError_t e = tl_last;
    tl_last = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError() {
    if (int s = dev(tl_current).sticky.load()) return static_cast<cudaError_t>(s);
    return tl_last;
}

// ---- devices ------------------------------------------------------------------

cudaError_t cudaGetDeviceCount(int* count) {
    *count = 0;
    // As CUDA's runtime: no driver, or one older than the runtime (13.0), has no devices to count.
    if (state().driver_version.load() < 13000) return ret(cudaErrorInsufficientDriver);
    *count = state().device_count.load();
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int d) {
    if (!valid_device(d)) return ret(cudaErrorInvalidDevice);
    // As CUDA 12+: cudaSetDevice initializes the device's primary context.
    if (cudaError_t e = context_error(d)) return ret(e);
    tl_current = d;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* d) {
    *d = tl_current;
    return cudaSuccess;
}

cudaError_t cudaInitDevice(int d, unsigned, unsigned) {
    if (!valid_device(d)) return ret(cudaErrorInvalidDevice);
    return ret(context_error(d));
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int d) {
    if (!valid_device(d)) return ret(cudaErrorInvalidDevice);
    std::memset(p, 0, sizeof *p);
    std::snprintf(p->name, sizeof p->name, "accel CUDA emulation (CPU)");
    p->totalGlobalMem = kDeviceMemory;
    p->sharedMemPerBlock = 48 * 1024;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
    p->major = dev(d).compute_capability.load() / 10, p->minor = dev(d).compute_capability.load() % 10;
    p->multiProcessorCount = 2;
    p->warpSize = dev(d).warp_size.load();
    // A fixed UUID per emulated device ("accel-emu" + index) and no PCI
    // address (zeros: unknown), so that identity code sees what it would on
    // a real GPU without claiming a slot on the bus.
    std::memcpy(p->uuid.bytes, "accel-emu\0\0\0\0\0\0", 16);
    p->uuid.bytes[15] = static_cast<char>(d + 1);
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr a, int d) {
    if (!valid_device(d)) return ret(cudaErrorInvalidDevice);
    switch (a) {
        case cudaDevAttrComputeMode: *value = dev(d).compute_mode.load(); return cudaSuccess;
        case cudaDevAttrWarpSize: *value = dev(d).warp_size.load(); return cudaSuccess;
        case cudaDevAttrComputeCapabilityMajor: *value = dev(d).compute_capability.load() / 10; return cudaSuccess;
        case cudaDevAttrComputeCapabilityMinor: *value = dev(d).compute_capability.load() % 10; return cudaSuccess;
        case cudaDevAttrClockRate:
        case cudaDevAttrMemoryClockRate: *value = 0; return cudaSuccess;
    }
    return ret(cudaErrorInvalidValue);
}

cudaError_t cudaDriverGetVersion(int* v) {
    *v = state().driver_version.load();
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* v) {
    *v = 13000;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
    Device& v = dev(tl_current);
    std::vector<std::shared_ptr<CUstream_st>> all;
    {
        std::lock_guard<std::mutex> lock(v.mutex);
        for (const auto& s : v.streams) all.push_back(s.second);
    }
    cudaError_t first = cudaSuccess;
    for (const auto& s : all)
        if (s->refuse_while_capturing()) first = cudaErrorStreamCaptureUnsupported;
    if (first) return ret(first);
    for (const auto& s : all) {
        const cudaError_t e = s->drain();
        if (e && !first) first = e;
    }
    if (int s = v.sticky.load()) first = static_cast<cudaError_t>(s);
    return ret(first);
}

// ---- memory -------------------------------------------------------------------

cudaError_t cudaMalloc(void** p, std::size_t bytes) {
    const int d = tl_current;
    *p = nullptr;
    if (cudaError_t e = enter(d, "cudaMalloc")) return ret(e);
    Device& v = dev(d);
    if (v.malloc_fail.load() > 0 && v.malloc_fail.fetch_sub(1) > 0) return ret(cudaErrorMemoryAllocation);
    if (bytes == 0) return cudaSuccess;
    if (bytes > kDeviceMemory - std::min(kDeviceMemory, v.used.load())) return ret(cudaErrorMemoryAllocation);
    void* q = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (!q) return ret(cudaErrorMemoryAllocation);
    v.used += bytes;
    ++v.mallocs;
    std::lock_guard<std::mutex> lock(state().alloc_mutex);
    state().allocations[q] = {bytes, d};
    *p = q;
    return cudaSuccess;
}

cudaError_t cudaFree(void* p) {
    const int d = tl_current;
    if (cudaError_t e = enter(d, "cudaFree")) return ret(e);
    if (!p) return ret(context_error(d));  // cudaFree(0): the idiom that creates the context
    std::pair<std::size_t, int> a;
    {
        std::lock_guard<std::mutex> lock(state().alloc_mutex);
        auto it = state().allocations.find(p);
        if (it == state().allocations.end()) return ret(cudaErrorInvalidValue);
        a = it->second;
        state().allocations.erase(it);
    }
    // cudaFree waits for the device's work, which may still use the memory.
    cudaDeviceSynchronize();
    dev(a.second).used -= a.first;
    ++dev(a.second).frees;
    std::free(p);
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void** p, std::size_t bytes) {
    if (cudaError_t e = enter(tl_current, "cudaMallocHost")) return ret(e);
    const std::size_t size = (std::max<std::size_t>(bytes, 1) + 4095) / 4096 * 4096;
    *p = std::aligned_alloc(4096, size);
    if (!*p) return ret(cudaErrorMemoryAllocation);
    State& st = state();
    std::lock_guard<std::mutex> lock(st.alloc_mutex);
    st.pinned[static_cast<const char*>(*p)] = size;
    st.pinned_bytes += size;
    st.pinned_peak = std::max(st.pinned_peak, st.pinned_bytes);
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void* p) {
    if (!p) return cudaSuccess;
    {
        State& st = state();
        std::lock_guard<std::mutex> lock(st.alloc_mutex);
        auto it = st.pinned.find(static_cast<const char*>(p));
        if (it == st.pinned.end()) return ret(cudaErrorInvalidValue);
        st.pinned_bytes -= it->second;
        st.pinned.erase(it);
    }
    std::free(p);
    return cudaSuccess;
}

// Since CUDA 11: success for any pointer, cudaMemoryTypeUnregistered for memory CUDA does not know.
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p) {
    if (cudaError_t e = enter(tl_current, "cudaPointerGetAttributes")) return ret(e);
    *a = cudaPointerAttributes{cudaMemoryTypeUnregistered, -1, nullptr, nullptr};
    std::lock_guard<std::mutex> lock(state().alloc_mutex);
    if (pinned_at(p)) {
        *a = cudaPointerAttributes{cudaMemoryTypeHost, tl_current, const_cast<void*>(p), const_cast<void*>(p)};
        return cudaSuccess;
    }
    auto& all = state().allocations;
    auto it = all.upper_bound(const_cast<void*>(p));
    if (it != all.begin()) {
        --it;
        if (static_cast<const char*>(p) < static_cast<const char*>(it->first) + it->second.first)
            *a = cudaPointerAttributes{cudaMemoryTypeDevice, it->second.second, const_cast<void*>(p), nullptr};
    }
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
    if (cudaError_t e = enter(tl_current, "cudaMemGetInfo")) return ret(e);
    *total_bytes = kDeviceMemory;
    *free_bytes = kDeviceMemory - std::min(kDeviceMemory, dev(tl_current).used.load());
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind, cudaStream_t stream) {
    CUstream_st* s = resolve(stream);
    if (cudaError_t e = enter(s->device, "cudaMemcpyAsync")) return ret(e);
    s->push([=] { std::memcpy(dst, src, bytes); });
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t stream) {
    CUstream_st* s = resolve(stream);
    if (cudaError_t e = enter(s->device, "cudaMemsetAsync")) return ret(e);
    s->push([=] { std::memset(p, value, bytes); });
    return cudaSuccess;
}

// ---- streams, events ------------------------------------------------------------

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
    const int d = tl_current;
    if (cudaError_t e = enter(d)) return ret(e);
    auto created = std::make_shared<CUstream_st>(d);
    *s = created.get();
    std::lock_guard<std::mutex> lock(dev(d).mutex);
    dev(d).streams[*s] = std::move(created);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
    if (!s) return ret(cudaErrorInvalidResourceHandle);
    std::shared_ptr<CUstream_st> owned;
    {
        std::lock_guard<std::mutex> lock(dev(s->device).mutex);
        auto it = dev(s->device).streams.find(s);
        if (it == dev(s->device).streams.end()) return ret(cudaErrorInvalidResourceHandle);
        owned = std::move(it->second);
        dev(s->device).streams.erase(it);
    }
    owned.reset();  // the last owner runs what is queued, then ends the stream's thread
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    CUstream_st* s = resolve(stream);
    if (s->refuse_while_capturing()) return ret(cudaErrorStreamCaptureUnsupported);
    return ret(s->drain());
}

cudaError_t cudaStreamGetDevice(cudaStream_t s, int* device) {
    *device = resolve(s)->device;
    return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* data) {
    CUstream_st* s = resolve(stream);
    if (cudaError_t e = enter(s->device, "cudaLaunchHostFunc")) return ret(e);
    ++dev(s->device).host_funcs;
    s->push([=] { fn(data); });
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* e) { return cudaEventCreateWithFlags(e, 0); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
    if (cudaError_t r = enter(tl_current)) return ret(r);
    *e = new CUevent_st(tl_current);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
    if (!e) return ret(cudaErrorInvalidResourceHandle);
    // Destroying an event whose record is still queued is allowed in CUDA:
    // wait for it here so that the queued task never touches freed memory.
    cudaEventSynchronize(e);
    delete e;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t stream) {
    CUstream_st* s = resolve(stream);
    if (!e || e->device != s->device) return ret(cudaErrorInvalidResourceHandle);
    if (cudaError_t r = enter(s->device, "cudaEventRecord")) return ret(r);
    if (s->refuse_while_capturing()) return ret(cudaErrorStreamCaptureUnsupported);
    std::uint64_t gen;
    {
        std::lock_guard<std::mutex> lock(e->mutex);
        gen = ++e->recorded;
    }
    s->push([e, gen] {
        std::lock_guard<std::mutex> lock(e->mutex);
        e->when = Clock::now();
        e->completed = std::max(e->completed, gen);
        e->done_cv.notify_all();
    });
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
    if (cudaError_t r = enter(e->device)) return ret(r);
    Device& v = dev(e->device);
    if (v.event_not_ready.load() > 0 && v.event_not_ready.fetch_sub(1) > 0) return ret(cudaErrorNotReady);
    std::lock_guard<std::mutex> lock(e->mutex);
    return e->completed >= e->recorded ? cudaSuccess : ret(cudaErrorNotReady);
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    std::unique_lock<std::mutex> lock(e->mutex);
    // An event on a device that failed for good never completes: report that instead.
    // The device may fail for good while this waits, without notifying the
    // event (its stream stops), so the wait looks again every few ms.
    while (!e->done_cv.wait_for(lock, std::chrono::milliseconds(5),
                                [e] { return e->completed >= e->recorded || dev(e->device).sticky.load(); })) {
    }
    if (int s = dev(e->device).sticky.load()) return ret(static_cast<cudaError_t>(s));
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    std::scoped_lock lock(start->mutex, end->mutex);
    if (start->completed < start->recorded || end->completed < end->recorded) return ret(cudaErrorNotReady);
    *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count() *
          static_cast<float>(dev(start->device).event_time_percent.load()) / 100.0f;
    return cudaSuccess;
}

// ---- fault injection (control.h) -------------------------------------------------

extern "C" __attribute__((visibility("default"))) int accel_cuda_emulation_fault(const char* name, int device,
                                                                               long value) {
    return set_fault(state(), name, device, value);
}

extern "C" __attribute__((visibility("default"))) int accel_cuda_emulation_current_device() { return tl_current; }

extern "C" __attribute__((visibility("default"))) long accel_cuda_emulation_counter(const char* name, int device) {
    const std::string n = name ? name : "";
    State& st = state();
    if (n == "pinned_bytes" || n == "pinned_peak_bytes") {
        std::lock_guard<std::mutex> lock(st.alloc_mutex);
        return static_cast<long>(n == "pinned_bytes" ? st.pinned_bytes : st.pinned_peak);
    }
    if (device < 0 || device >= kMaxDevices) return -1;
    Device& v = dev(device);
    if (n == "cudaMalloc") return v.mallocs.load();
    if (n == "cudaFree") return v.frees.load();
    if (n == "cudaLaunchHostFunc") return v.host_funcs.load();
    if (n == "cudaGraphLaunch") return v.graph_launches.load();
    return -1;
}

extern "C" __attribute__((visibility("default"))) void accel_cuda_emulation_reset_pinned_peak() {
    std::lock_guard<std::mutex> lock(state().alloc_mutex);
    state().pinned_peak = state().pinned_bytes;
}

extern "C" __attribute__((visibility("default"))) void* accel_cuda_emulation_host_alloc(unsigned long bytes) {
    void* p = nullptr;
    return cudaMallocHost(&p, bytes) == cudaSuccess ? p : nullptr;
}

extern "C" __attribute__((visibility("default"))) void accel_cuda_emulation_host_free(void* p) { cudaFreeHost(p); }

extern "C" __attribute__((visibility("default"))) void* accel_cuda_emulation_runtime_function(const char* name) {
    const std::string n = name ? name : "";
    if (n == "cudaSetDevice") return reinterpret_cast<void*>(&cudaSetDevice);
    if (n == "cudaMalloc") return reinterpret_cast<void*>(&cudaMalloc);
    if (n == "cudaFree") return reinterpret_cast<void*>(&cudaFree);
    if (n == "cudaMemcpyAsync") return reinterpret_cast<void*>(&cudaMemcpyAsync);
    if (n == "cudaStreamCreateWithFlags") return reinterpret_cast<void*>(&cudaStreamCreateWithFlags);
    if (n == "cudaStreamDestroy") return reinterpret_cast<void*>(&cudaStreamDestroy);
    if (n == "cudaStreamSynchronize") return reinterpret_cast<void*>(&cudaStreamSynchronize);
    if (n == "cudaLaunchHostFunc") return reinterpret_cast<void*>(&cudaLaunchHostFunc);
    return nullptr;
}
