// CUDA backend (and, compiled as HIP, the HIP backend): Backend + probe,
// memory, copies, streams, events.
#include "cuda_device.hpp"

#include "kernels/kernels.hpp"

#include <accel/error.hpp>
#include <accel/plugin.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

namespace accel {
namespace cuda {

// ---- errors -------------------------------------------------------------------

std::string describe(cudaError_t e) {
    return std::string(cudaGetErrorName(e)) + " (" + std::to_string(static_cast<int>(e)) + "): " +
           cudaGetErrorString(e);
}

cudaError_t cleared(cudaError_t e) noexcept {
    if (e != cudaSuccess && !is_sticky(e)) (void)cudaGetLastError();
    return e;
}

std::string call_site(const char* call, const char* file, int line) {
    const char* slash = std::strrchr(file, '/');
    return std::string(call) + " failed at " + (slash ? slash + 1 : file) + ":" + std::to_string(line);
}

void check(cudaError_t e, const char* call, const char* file, int line) {
    if (e == cudaSuccess) return;
    std::string msg = call_site(call, file, line) + ": " + describe(e);
    if (is_sticky(e))
        msg += "; the " ACCEL_GPU_RUNTIME " context is now unusable; restart the process";
    else
        (void)cudaGetLastError();  // clear it, so that the next launch check does not report it again
    throw DeviceError(msg, static_cast<long>(e), cudaGetErrorName(e));
}

namespace {

cudaStream_t native(Stream& s) { return static_cast<CudaStream&>(s).handle(); }

Availability unavailable(std::string why) {
    Availability a;
    a.reason = std::move(why);
    return a;
}

class CudaBackend final : public Backend {
public:
    std::string name() const override { return ACCEL_GPU_BACKEND; }

    /// The first probe that finds devices checks each one (unusable_reason)
    /// and fixes the list of usable ones for the process; later probes
    /// report that list.
    Availability probe() override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!probed_) {
            int count = 0;
            const cudaError_t e = cleared(cudaGetDeviceCount(&count));
            if (e != cudaSuccess) return unavailable(no_device_reason(e));
            if (count == 0)
                return unavailable("no " ACCEL_GPU_RUNTIME " device found (" ACCEL_GPU_NAME(cudaGetDeviceCount) " returned 0)");
            for (int ordinal = 0; ordinal < count; ++ordinal) {
                const std::string why = unusable_reason(ordinal);
                if (why.empty())
                    usable_.push_back(ordinal);
                else
                    left_out_ += (left_out_.empty() ? "" : "; ") + std::string(ACCEL_GPU_RUNTIME " device ") +
                                 std::to_string(ordinal) + ": " + why;
            }
            probed_ = true;
        }
        if (usable_.empty()) return unavailable("no usable " ACCEL_GPU_RUNTIME " device: " + left_out_);
        Availability a;
        a.available = a.has_gpu = true;
        a.device_count = static_cast<int>(usable_.size());
        return a;
    }

    /// Checks the device again (it may have been taken since the probe):
    /// BackendUnavailable naming why it cannot be used.
    std::shared_ptr<Device> create_device(int index) override {
        int ordinal = 0;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ordinal = usable_.at(static_cast<std::size_t>(index));  // the registry checked the index
        }
        const std::string why = unusable_reason(ordinal);
        if (!why.empty())
            throw BackendUnavailable(ACCEL_GPU_BACKEND ":" + std::to_string(index) + " (" ACCEL_GPU_RUNTIME " device " +
                                     std::to_string(ordinal) + ") cannot be used: " + why);
        return std::make_shared<CudaDevice>(index, ordinal);
    }

    /// "gpu": the first usable device (every device here is a GPU).
    /// BackendUnavailable when there is none, InvalidArgument for any
    /// other name.
    int find_device(const std::string& spec) override {
        if (spec != "gpu")
            throw InvalidArgument("'" ACCEL_GPU_BACKEND ":" + spec + "' names no device: " ACCEL_GPU_BACKEND
                                  " devices are " ACCEL_GPU_BACKEND ":N (an index) or " ACCEL_GPU_BACKEND ":gpu");
        const Availability a = probe();
        if (!a.available) throw BackendUnavailable(ACCEL_GPU_BACKEND ":gpu: " + a.reason);
        return 0;
    }

private:
    std::mutex mutex_;
    bool probed_ = false;
    std::vector<int> usable_;  // accel index -> runtime ordinal
    std::string left_out_;     // the devices left out, and why
};

// Copies staged device→host data into the caller's memory; runs on the
// runtime's callback thread, so it makes no CUDA call.
struct HostCopy {
    void* dst;
    const void* src;
    std::size_t bytes;
};
void CUDART_CB finish_host_copy(void* p) {
    std::unique_ptr<HostCopy> job(static_cast<HostCopy*>(p));
    std::memcpy(job->dst, job->src, job->bytes);
}

// True when [p, p + bytes) is page-locked host memory the runtime knows (both
// ends: cudaPointerGetAttributes has no extent), so a DMA may land there
// directly. Any failure answers false (the staged path is always correct).
bool pinned(const void* p, std::size_t bytes) noexcept {
    return page_locked(p) && (bytes <= 1 || page_locked(static_cast<const char*>(p) + bytes - 1));
}

// Returns a staging buffer to the pool after the work enqueued so far, on
// every path out of a copy.
struct StagingLease {
    StagingPool& pool;
    void* ptr;
    cudaStream_t stream;
    ~StagingLease() { pool.release_after(ptr, stream); }
};

}  // namespace

// ---- device facts ------------------------------------------------------------------

DeviceInfo common_device_info(const cudaDeviceProp& p, int index) {
    DeviceInfo i;
    i.backend = ACCEL_GPU_BACKEND;
    i.index = index;
    i.name = p.name;
    i.type = "gpu";
    i.compute_units = p.multiProcessorCount;
    i.global_memory_bytes = p.totalGlobalMem;
    i.determinism = {true, true,
                     "a product's element is one thread's fused multiply-adds in k order, whatever tile the "
                     "shape takes; column_sum's tree depends on the launch geometry and the warp width only; "
                     "no atomics"};
    i.limits.max_block_size = static_cast<std::size_t>(p.maxThreadsPerBlock);
    const auto dims = [](const int (&d)[3]) {
        return Dim3{static_cast<std::size_t>(d[0]), static_cast<std::size_t>(d[1]), static_cast<std::size_t>(d[2])};
    };
    i.limits.max_block_dims = dims(p.maxThreadsDim);
    i.limits.max_grid_dims = dims(p.maxGridSize);
    i.pci_bus_id = format_pci_bus_id(static_cast<unsigned>(p.pciDomainID), static_cast<unsigned>(p.pciBusID),
                                     static_cast<unsigned>(p.pciDeviceID), 0);
    return i;
}

void add_memory_facts(DeviceInfo& info, int memory_khz, int bus_bits, int l2_bytes) {
    char buf[96];
    info.extra.push_back({"memory clock", std::to_string(memory_khz / 1000) + " MHz"});
    info.extra.push_back({"memory bus width", std::to_string(bus_bits) + " bit"});
    std::snprintf(buf, sizeof buf, "%.1f GB/s (2 x memory clock x bus width)",
                  2.0 * memory_khz * 1e3 * (bus_bits / 8.0) / 1e9);
    info.extra.push_back({"theoretical memory bandwidth", buf});
    info.extra.push_back({"L2 cache", std::to_string(l2_bytes / 1024) + " KiB"});
}

// ---- devices: current, usable -----------------------------------------------------

CurrentDevice::CurrentDevice(int ordinal) {
    ACCEL_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ == ordinal) return;
    ACCEL_CUDA_CHECK(cudaSetDevice(ordinal));
    changed_ = true;
}

CurrentDevice::~CurrentDevice() {
    if (changed_) (void)cleared(cudaSetDevice(previous_));
}

std::string unusable_reason(int ordinal) {
    int mode = cudaComputeModeDefault;
    cudaError_t e = cleared(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, ordinal));
    if (e != cudaSuccess) return ACCEL_GPU_NAME(cudaDeviceGetAttribute) "(" ACCEL_GPU_NAME(cudaDevAttrComputeMode) ") failed: " + describe(e);
    if (mode == cudaComputeModeProhibited)
        return "its compute mode is Prohibited (no process may use it; set it to Default to allow accel)";
    int previous = 0;
    (void)cleared(cudaGetDevice(&previous));
    // cudaSetDevice creates the primary context (CUDA 12 and later); cudaFree(0) makes sure.
    e = cleared(cudaSetDevice(ordinal));
    if (e == cudaSuccess) e = cleared(cudaFree(nullptr));
    std::string why;
    if (e == cudaErrorDevicesUnavailable)
        why = (mode == cudaComputeModeExclusiveProcess ? "it is in exclusive-process compute mode and in use by another "
                                                         "process: "
                                                       : "it is busy or unavailable: ") +
              describe(e);
    else if (e != cudaSuccess)
        why = "no " ACCEL_GPU_RUNTIME " context can be created on it: " + describe(e);
    else if ((e = cleared(elementwise_image_status())) != cudaSuccess ||
             (e = cleared(matmul_image_status())) != cudaSuccess)
        why = "accel's kernels cannot run on it (built for " ACCEL_GPU_ARCHS "): " + describe(e) +
              "; rebuild with " ACCEL_GPU_ARCHS_VARIABLE " naming its architecture";
    if (previous != ordinal) (void)cleared(cudaSetDevice(previous));
    return why;
}

// ---- streams, events ------------------------------------------------------------

CudaStream::CudaStream(Device& d, std::shared_ptr<DeviceMemory> memory) : Stream(d), memory_(std::move(memory)) {
    ACCEL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    memory_->add_stream(stream_);
}
CudaStream::~CudaStream() {
    (void)cleared(cudaStreamSynchronize(stream_));  // no block freed later may still be in use here
    memory_->remove_stream(stream_);
    if (owned_) (void)cleared(cudaStreamDestroy(stream_));
}
void CudaStream::do_synchronize() { ACCEL_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

CudaEvent::CudaEvent(Device& d) : Event(d) { ACCEL_CUDA_CHECK(cudaEventCreate(&event_)); }
CudaEvent::~CudaEvent() { (void)cudaEventDestroy(event_); }
void CudaEvent::do_record(Stream& stream) { ACCEL_CUDA_CHECK(cudaEventRecord(event_, native(stream))); }
void CudaEvent::do_synchronize() { ACCEL_CUDA_CHECK(cudaEventSynchronize(event_)); }

// ---- device memory ----------------------------------------------------------------

namespace {
// Size classes: 512 B steps up to 1 MiB, 1 MiB steps above (waste under 1 MiB per block).
std::size_t size_class(std::size_t bytes) {
    const std::size_t step = bytes <= (std::size_t{1} << 20) ? 512 : (std::size_t{1} << 20);
    return (bytes + step - 1) / step * step;
}
}  // namespace

bool DeviceMemory::ready(const Cached& c) noexcept {
    for (cudaEvent_t e : c.pending)
        if (cleared(cudaEventQuery(e)) != cudaSuccess) return false;  // NotReady, or a failure: do not reuse
    return true;
}

cudaError_t DeviceMemory::allocate(void** p, std::size_t bytes) noexcept {
    const std::size_t size = size_class(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    const auto range = idle_.equal_range(size);
    for (auto it = range.first; it != range.second; ++it) {
        if (!ready(it->second)) continue;
        *p = it->second.ptr;
        spare_events_.insert(spare_events_.end(), it->second.pending.begin(), it->second.pending.end());
        idle_.erase(it);
        in_use_[*p] = size;
        return cudaSuccess;
    }
    cudaError_t e = cudaMalloc(p, size);
    // Refused: cached blocks may be what fills the device. Free them (cudaFree waits) and try once more.
    if (e == cudaErrorMemoryAllocation && !idle_.empty()) {
        (void)cleared(e);
        release_idle();
        e = cudaMalloc(p, size);
    }
    if (e == cudaSuccess) in_use_[*p] = size;
    return e;
}

void DeviceMemory::free(void* p) noexcept {
    if (!p) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = in_use_.find(p);
    if (it == in_use_.end()) return;  // not ours: nothing sane to do
    Cached c{p, {}};
    c.pending.reserve(streams_.size());
    bool recorded = true;
    for (cudaStream_t s : streams_) {
        cudaEvent_t e = nullptr;
        if (!spare_events_.empty()) {
            e = spare_events_.back();
            spare_events_.pop_back();
        } else if (cleared(cudaEventCreateWithFlags(&e, cudaEventDisableTiming)) != cudaSuccess) {
            recorded = false;
            break;
        }
        c.pending.push_back(e);
        if (cleared(cudaEventRecord(e, s)) != cudaSuccess) {
            recorded = false;
            break;
        }
    }
    const std::size_t size = it->second;
    in_use_.erase(it);
    if (recorded) {
        idle_.emplace(size, std::move(c));
        return;
    }
    // Without an event per stream reuse could not be proven safe: free now (cudaFree waits).
    spare_events_.insert(spare_events_.end(), c.pending.begin(), c.pending.end());
    (void)cleared(cudaFree(p));
}

void DeviceMemory::add_stream(cudaStream_t s) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.push_back(s);
}

void DeviceMemory::remove_stream(cudaStream_t s) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.erase(std::remove(streams_.begin(), streams_.end(), s), streams_.end());
}

std::size_t DeviceMemory::release_idle() noexcept {
    std::size_t freed = 0;
    for (auto& kv : idle_) {
        (void)cleared(cudaFree(kv.second.ptr));
        freed += kv.first;
        spare_events_.insert(spare_events_.end(), kv.second.pending.begin(), kv.second.pending.end());
    }
    idle_.clear();
    return freed;
}

std::size_t DeviceMemory::release_all(bool everything) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t freed = release_idle();
    for (cudaEvent_t e : spare_events_) (void)cleared(cudaEventDestroy(e));
    spare_events_.clear();
    if (everything) in_use_.clear();
    return freed;
}

std::size_t DeviceMemory::cached_bytes() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t bytes = 0;
    for (const auto& kv : idle_) bytes += kv.first;
    return bytes;
}

// ---- pinned staging -------------------------------------------------------------

StagingPool::~StagingPool() {
    for (auto& b : blocks_) {
        (void)cudaEventDestroy(b.done);
        (void)cudaFreeHost(b.ptr);
    }
}

void StagingPool::free_idle() {
    auto idle = std::stable_partition(blocks_.begin(), blocks_.end(), [](const Block& b) { return b.busy; });
    for (auto it = idle; it != blocks_.end(); ++it) {
        (void)cleared(cudaEventDestroy(it->done));
        (void)cleared(cudaFreeHost(it->ptr));
        held_ -= it->bytes;
    }
    blocks_.erase(idle, blocks_.end());
}

void* StagingPool::acquire(std::size_t bytes) {
    if (bytes > cap_) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    Block* best = nullptr;
    for (;;) {
        for (auto& b : blocks_) {
            if (b.busy && b.recorded) {
                const cudaError_t q = cudaEventQuery(b.done);
                if (q == cudaSuccess)
                    b.busy = false;
                else if (q == cudaErrorNotReady)
                    (void)cleared(q);  // still in use: not an error
                else
                    ACCEL_CUDA_CHECK(q);
            }
            if (!b.busy && b.bytes >= bytes && (!best || b.bytes < best->bytes)) best = &b;
        }
        if (best) break;
        free_idle();  // the idle buffers are all too small
        if (held_ + bytes <= cap_) break;
        // A new buffer would pass the cap: wait until a busy one (the oldest recorded) is done.
        const auto waitable = std::find_if(blocks_.begin(), blocks_.end(), [](const Block& b) { return b.recorded; });
        if (waitable == blocks_.end()) return nullptr;  // none can come back: the caller copies unstaged
        ACCEL_CUDA_CHECK(cudaEventSynchronize(waitable->done));
        waitable->busy = false;
    }
    if (!best) {
        Block nb{nullptr, bytes, nullptr, false, false};
        const cudaError_t e = cudaMallocHost(&nb.ptr, bytes);
        if (e == cudaErrorMemoryAllocation) {
            (void)cleared(e);
            throw OutOfMemory("copy staging: " ACCEL_GPU_NAME(cudaMallocHost) " refused " + std::to_string(bytes) +
                              " bytes of pinned host memory for an asynchronous copy; use the blocking copy, or "
                              "copy in smaller pieces");
        }
        ACCEL_CUDA_CHECK(e);
        const cudaError_t ev = cudaEventCreateWithFlags(&nb.done, cudaEventDisableTiming);
        if (ev != cudaSuccess) (void)cleared(cudaFreeHost(nb.ptr));
        ACCEL_CUDA_CHECK(ev);
        blocks_.push_back(nb);
        held_ += bytes;
        best = &blocks_.back();
    }
    best->busy = true;
    best->recorded = false;
    return best->ptr;
}

void StagingPool::release_after(void* p, cudaStream_t stream) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& b : blocks_)
        if (b.ptr == p) b.recorded = cleared(cudaEventRecord(b.done, stream)) == cudaSuccess;
}

// ---- the device -------------------------------------------------------------------

namespace {

// Whether device `ordinal` runs the tensor-core GEMM (kernels.hpp).
bool tensor_core_gemm([[maybe_unused]] int ordinal) {
#ifdef ACCEL_HIP
    return false;
#else
    int major = 0, minor = 0;
    ACCEL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal));
    ACCEL_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal));
    return major * 10 + minor >= kTensorCoreGemmMinArch;
#endif
}

}  // namespace

CudaDevice::CudaDevice(int index, int ordinal) : Device(device_info(index, ordinal)), ordinal_(ordinal) {
    const CurrentDevice current(ordinal_);
    int warp = 0;
    ACCEL_CUDA_CHECK(cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, ordinal_));
    if (warp < 1 || warp > 1024)
        throw DeviceError(selector() + ": the runtime reports a warp width of " + std::to_string(warp) +
                              " threads; expected 1 to 1024 (32 on NVIDIA GPUs, 32 or 64 on AMD ones)",
                          warp, "warp width out of range");
    warp_size_ = static_cast<unsigned>(warp);
    tensor_cores_ = tensor_core_gemm(ordinal_);
    mutable_info().extra.push_back({"f16/bf16 matmul", tensor_cores_ ? "tensor cores, mma.sync m16n8k16, f32 accumulation"
                                                                     : "SIMT, f32 FMA accumulation"});
    blas_ = vendor_blas_start(blas_description_);
    mutable_info().extra.push_back({"kernels built for", ACCEL_GPU_ARCHS});
    mutable_info().extra.push_back(
        {"async host copies", "pinned staging buffers (at most 256 MiB); device-to-host into pinned memory direct"});
    mutable_info().extra.push_back({"vendor BLAS", blas_description_});
    register_kernels();
}

CudaDevice::~CudaDevice() {
    // At process exit the runtime may already be gone: then leak, never crash.
    int previous = 0;
    if (cleared(cudaGetDevice(&previous)) == cudaErrorCudartUnloading ||
        cleared(cudaSetDevice(ordinal_)) == cudaErrorCudartUnloading)
        return;
    (void)cleared(cudaDeviceSynchronize());  // no copy may still use a staging buffer or a cached block
    blas_.reset();
    memory_->release_all(true);
    if (previous != ordinal_) (void)cleared(cudaSetDevice(previous));
}

DeviceHandle CudaDevice::do_allocate(std::size_t bytes) {
    const CurrentDevice current(ordinal_);
    void* p = nullptr;
    const cudaError_t e = memory_->allocate(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cleared(e);
        std::size_t free_bytes = 0, total = 0;
        const std::string free_text = cleared(cudaMemGetInfo(&free_bytes, &total)) == cudaSuccess
                                          ? std::to_string(free_bytes) + " bytes free"
                                          : std::string("free memory unknown");
        throw OutOfMemory("allocate: " ACCEL_GPU_NAME(cudaMalloc) " refused " + std::to_string(bytes) + " bytes on " + selector() + " (" +
                          info().name + "): " ACCEL_GPU_NAME(cudaErrorMemoryAllocation) "; " + free_text + " of " +
                          std::to_string(info().global_memory_bytes) + " in total");
    }
    ACCEL_CUDA_CHECK(e);
    return p;
}

std::uint64_t CudaDevice::do_cached_bytes() const noexcept { return memory_->cached_bytes(); }

std::uint64_t CudaDevice::do_release_cached() noexcept {
    int previous = 0;
    if (cleared(cudaGetDevice(&previous)) != cudaSuccess || cleared(cudaSetDevice(ordinal_)) != cudaSuccess) return 0;
    const std::size_t freed = memory_->release_all(false);
    if (previous != ordinal_) (void)cleared(cudaSetDevice(previous));
    return freed;
}

void CudaDevice::do_deallocate(DeviceHandle h) noexcept {
    int previous = 0;
    if (cleared(cudaGetDevice(&previous)) != cudaSuccess || cleared(cudaSetDevice(ordinal_)) != cudaSuccess) return;
    memory_->free(h);  // cached for reuse; never stalls the device
    if (previous != ordinal_) (void)cleared(cudaSetDevice(previous));
}

void* CudaDevice::allocate_page_locked(std::size_t bytes) {
    const CurrentDevice current(ordinal_);
    void* p = nullptr;
    const cudaError_t e = cudaMallocHost(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cleared(e);
        throw OutOfMemory("page-locked memory: " ACCEL_GPU_NAME(cudaMallocHost) " refused " + std::to_string(bytes) +
                          " bytes on " + selector());
    }
    ACCEL_CUDA_CHECK(e);
    return p;
}

void CudaDevice::free_page_locked(void* data) noexcept { (void)cleared(cudaFreeHost(data)); }

void CudaDevice::do_copy_h2d(DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes, Stream& s,
                             bool blocking) {
    const CurrentDevice current(ordinal_);
    char* d = static_cast<char*>(dst) + off;
    if (blocking) {
        ACCEL_CUDA_CHECK(cudaMemcpyAsync(d, src, bytes, cudaMemcpyHostToDevice, native(s)));
        s.synchronize();
        return;
    }
    void* staged = pinned(src, bytes) ? nullptr : staging_.acquire(bytes);
    if (!staged) {  // pinned: one DMA; beyond the staging cap: the runtime takes the pageable bytes before returning
        ACCEL_CUDA_CHECK(cudaMemcpyAsync(d, src, bytes, cudaMemcpyHostToDevice, native(s)));
        return;
    }
    StagingLease lease{staging_, staged, native(s)};
    std::memcpy(lease.ptr, src, bytes);
    ACCEL_CUDA_CHECK(cudaMemcpyAsync(d, lease.ptr, bytes, cudaMemcpyHostToDevice, native(s)));
}

void CudaDevice::do_copy_d2h(void* dst, DeviceHandle src, std::size_t off, std::size_t bytes, Stream& s,
                             bool blocking) {
    const CurrentDevice current(ordinal_);
    const char* from = static_cast<const char*>(src) + off;
    if (blocking) {
        ACCEL_CUDA_CHECK(cudaMemcpyAsync(dst, from, bytes, cudaMemcpyDeviceToHost, native(s)));
        s.synchronize();
        return;
    }
    void* staged = pinned(dst, bytes) ? nullptr : staging_.acquire(bytes);
    if (!staged) {  // pinned: one DMA, no second memcpy; beyond the cap: synchronous pageable copy
        ACCEL_CUDA_CHECK(cudaMemcpyAsync(dst, from, bytes, cudaMemcpyDeviceToHost, native(s)));
        return;
    }
    StagingLease lease{staging_, staged, native(s)};
    ACCEL_CUDA_CHECK(cudaMemcpyAsync(lease.ptr, from, bytes, cudaMemcpyDeviceToHost, native(s)));
    auto job = std::make_unique<HostCopy>(HostCopy{dst, lease.ptr, bytes});
    ACCEL_CUDA_CHECK(cudaLaunchHostFunc(native(s), finish_host_copy, job.get()));
    job.release();  // owned by the callback now
}

void CudaDevice::do_copy_d2d(DeviceHandle dst, std::size_t doff, DeviceHandle src, std::size_t soff,
                             std::size_t bytes, Stream& s, bool blocking) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + doff, static_cast<const char*>(src) + soff, bytes,
                                     cudaMemcpyDeviceToDevice, native(s)));
    if (blocking) s.synchronize();
}

std::unique_ptr<Stream> CudaDevice::do_create_stream() {
    const CurrentDevice current(ordinal_);
    return std::make_unique<CudaStream>(*this, memory_);
}

std::unique_ptr<Event> CudaDevice::do_create_event() {
    const CurrentDevice current(ordinal_);
    return std::make_unique<CudaEvent>(*this);
}

double CudaDevice::do_elapsed_ms(Event& start, Event& end) {
    auto& a = static_cast<CudaEvent&>(start);
    auto& b = static_cast<CudaEvent&>(end);
    ACCEL_CUDA_CHECK(cudaEventSynchronize(a.handle()));
    ACCEL_CUDA_CHECK(cudaEventSynchronize(b.handle()));
    float ms = 0.0f;
    ACCEL_CUDA_CHECK(cudaEventElapsedTime(&ms, a.handle(), b.handle()));
    return ms;
}

void CudaDevice::do_synchronize() {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(cudaDeviceSynchronize());
}

// ---- graphs ------------------------------------------------------------------------

namespace {

// One instantiated graph. Its launches are serialized: an executable graph
// is not internally synchronized (CUDA Programming Guide, "Thread safety"
// of graph objects).
class CudaGraph final : public NativeGraph {
public:
    CudaGraph(int ordinal, cudaGraphExec_t exec) noexcept : ordinal_(ordinal), exec_(exec) {}
    // Launches still in flight finish first (the runtime frees it then).
    ~CudaGraph() override { (void)cleared(cudaGraphExecDestroy(exec_)); }
    CudaGraph(const CudaGraph&) = delete;
    CudaGraph& operator=(const CudaGraph&) = delete;
    void launch(Stream& stream) override {
        const CurrentDevice current(ordinal_);
        std::lock_guard<std::mutex> lock(mutex_);
        ACCEL_CUDA_CHECK(cudaGraphLaunch(exec_, native(stream)));
    }

private:
    const int ordinal_;
    const cudaGraphExec_t exec_;
    std::mutex mutex_;
};

}  // namespace

std::string CudaDevice::graph_mechanism() const {
    return ACCEL_GPU_RUNTIME " graph: each run of captured kernels recorded once by stream capture "
                             "(" ACCEL_GPU_NAME(cudaStreamBeginCapture) ") and replayed as one " ACCEL_GPU_NAME(
                                 cudaGraphLaunch);
}

std::shared_ptr<NativeGraph> CudaDevice::record_graph(const std::function<void(Stream&)>& enqueue) {
    const CurrentDevice current(ordinal_);
    const std::unique_ptr<Stream> recording = do_create_stream();
    const cudaStream_t s = native(*recording);
    ACCEL_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    cudaGraph_t graph = nullptr;
    try {
        enqueue(*recording);
    } catch (...) {
        if (cleared(cudaStreamEndCapture(s, &graph)) == cudaSuccess && graph) (void)cleared(cudaGraphDestroy(graph));
        throw;
    }
    ACCEL_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t e = cudaGraphInstantiateWithFlags(&exec, graph, 0);
    (void)cleared(cudaGraphDestroy(graph));
    ACCEL_CUDA_CHECK(e);
    return std::make_shared<CudaGraph>(ordinal_, exec);
}

// The matmul kernel is written for one block shape and does not loop over
// tiles; its tile depends on the output's shape (matmul_tile in
// kernels/kernels.hpp). Row tiles run along grid x (its limit is the largest).
std::optional<TileLayout> CudaDevice::do_tile_layout(Op, DType, std::size_t rows, std::size_t cols) const {
    const MatmulTile tile = matmul_tile(rows, cols);
    TileLayout t;
    t.block = Dim3{kMatmulThreads, kMatmulThreads, 1};
    t.tile_rows = tile.rows;
    t.tile_cols = tile.cols;
    t.rows_along_x = true;
    return t;
}

LaunchGeometry CudaDevice::do_default_geometry(Op op, DType, std::size_t rows, std::size_t cols) const {
    const std::size_t block = std::min<std::size_t>(256, info().limits.max_block_size);
    // column_sum: one block per chunk of a warp's width of columns (its rows split over the block's threads).
    const std::size_t items = op == Op::column_sum ? ceil_div(cols, warp_size_) * block : rows * cols;
    LaunchGeometry g = geometry_1d(items, block, info().limits);
    // Enough blocks to fill every SM several times over; grid-stride loops cover the rest.
    const std::size_t cap = std::max<std::size_t>(1, static_cast<std::size_t>(info().compute_units) * 32);
    g.grid.x = std::min(g.grid.x, cap);
    return g;
}

}  // namespace cuda
}  // namespace accel

// auto: a CUDA GPU first, then a HIP one (ACCEL_GPU_AUTO_RANK).
ACCEL_DEFINE_PLUGIN(ACCEL_GPU_BACKEND, accel::cuda::CudaBackend, ACCEL_GPU_BACKEND ":gpu (its first device)",
                    ACCEL_GPU_AUTO_RANK, 0)
