// OpenCL backend: Backend (probe over all platforms, opencl_platform.cpp), context and
// program, memory (cl_mem), copies, command queues, marker events.
#include "opencl_device.hpp"
#include "../common/kernel_table.hpp"

#include <accel/error.hpp>
#include <accel/plugin.hpp>

#include <CL/cl_ext.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <limits>
#include <utility>

#include <sys/syscall.h>
#include <unistd.h>

// The kernel sources, embedded from kernels/*.cl by accel_embed_text().
extern const char accel_cl_activation_codes[];
extern const char accel_cl_common[];
extern const char accel_cl_elementwise[];
extern const char accel_cl_reduce[];
extern const char accel_cl_matmul[];
extern const char accel_cl_convert[];

namespace accel {
namespace opencl {

namespace {

class OpenclBackend final : public Backend {
public:
    std::string name() const override { return "opencl"; }

    Availability probe() override {
        Availability a;
        try {
            std::string problems;
            const auto devices = all_devices(&problems);
            for (const auto& r : devices) {
                if (is_simulator(r.platform)) {
                    a.named_only.push_back("opencl:" + platform_key(r.platform) + ":" + std::to_string(r.within_platform));
                    continue;
                }
                if (!a.has_gpu && is_real_gpu(r)) {
                    a.has_gpu = true;
                    a.preferred_index = a.device_count;
                }
                ++a.device_count;
            }
            a.available = a.device_count > 0 || !a.named_only.empty();
            if (!a.available) a.reason = "the OpenCL platforms report no device" + problems;
        } catch (const DeviceError& e) {
            if (e.code() != CL_PLATFORM_NOT_FOUND_KHR) throw;  // the registry makes it the reason
            a = Availability{};
            a.reason = std::string(e.what()) +
                       " — no OpenCL platform is installed (install an ICD such as pocl-opencl-icd or a GPU "
                       "driver's OpenCL package)";
        }
        return a;
    }

    std::shared_ptr<Device> create_device(int index) override {
        std::string problems;
        const auto devices = all_devices(&problems);
        if (index < 0 || static_cast<std::size_t>(index) >= devices.size())
            throw DeviceError("opencl:" + std::to_string(index) + " does not exist; the OpenCL platforms report " +
                                  std::to_string(devices.size()) + " device(s)" + problems,
                              CL_DEVICE_NOT_FOUND, cl_error_name(CL_DEVICE_NOT_FOUND));
        const DeviceRef& r = devices[static_cast<std::size_t>(index)];
        return std::make_shared<OpenclDevice>(index, r.platform, r.device, r.within_platform);
    }

    int find_device(const std::string& spec) override { return find_device_in(all_devices(), spec); }
};

cl_mem mem(DeviceHandle h) { return static_cast<cl_mem>(h); }
cl_command_queue queue_of(Stream& s) { return static_cast<OpenclStream&>(s).queue(); }

}  // namespace

// ---- process exit ------------------------------------------------------------

namespace {
std::atomic<bool> g_main_thread_exiting{false};

// One per thread that touched the runtime; its destructor runs among the
// thread's thread_local destructors, which on the main thread come before
// every static destructor.
struct ThreadExitSentinel {
    ~ThreadExitSentinel() {
        if (on_main_thread()) g_main_thread_exiting.store(true);
    }
};
}  // namespace

bool on_main_thread() noexcept { return ::getpid() == static_cast<pid_t>(::syscall(SYS_gettid)); }

void note_runtime_user_thread() noexcept {
    static thread_local ThreadExitSentinel sentinel;
    (void)sentinel;
}

bool runtime_may_be_torn_down() noexcept { return g_main_thread_exiting.load(); }

// ---- streams and events ---------------------------------------------------

OpenclStream::OpenclStream(Device& d, cl_context context, cl_device_id id, std::shared_ptr<QueueList> list)
    : Stream(d), list_(std::move(list)) {
    note_runtime_user_thread();
    cl_int err = CL_SUCCESS;
    queue_ = clCreateCommandQueue(context, id, CL_QUEUE_PROFILING_ENABLE, &err);
    check_cl(err, "create_stream: clCreateCommandQueue");
    std::lock_guard<std::mutex> lock(list_->mutex);
    list_->queues.push_back(queue_);
}

OpenclStream::~OpenclStream() {
    {
        std::lock_guard<std::mutex> lock(list_->mutex);
        auto& q = list_->queues;
        q.erase(std::find(q.begin(), q.end(), queue_));  // one entry: a program's queue may back two streams
    }
    if (runtime_may_be_torn_down()) return;
    clFinish(queue_);  // work still queued must not outlive the host memory it uses
    if (owned_) clReleaseCommandQueue(queue_);
}

void OpenclStream::do_synchronize() { check_cl(clFinish(queue_), "Stream::synchronize: clFinish"); }

OpenclEvent::~OpenclEvent() {
    if (marker_ && !runtime_may_be_torn_down()) clReleaseEvent(marker_);
}

void OpenclEvent::do_record(Stream& stream) {
    cl_event e = nullptr;
    check_cl(clEnqueueMarkerWithWaitList(queue_of(stream), 0, nullptr, &e), "Event::record: clEnqueueMarkerWithWaitList");
    if (marker_) clReleaseEvent(marker_);
    marker_ = e;
}

void OpenclEvent::do_synchronize() { check_cl(clWaitForEvents(1, &marker_), "Event::synchronize: clWaitForEvents"); }

cl_ulong OpenclEvent::end_ns() {
    do_synchronize();
    cl_ulong t = 0;
    check_cl(clGetEventProfilingInfo(marker_, CL_PROFILING_COMMAND_END, sizeof(t), &t, nullptr),
             "elapsed_ms: clGetEventProfilingInfo(CL_PROFILING_COMMAND_END)");
    return t;
}

// ---- the device -----------------------------------------------------------

OpenclDevice::OpenclDevice(int index, cl_platform_id platform, cl_device_id id, int within_platform)
    : Device(make_info(index, platform, id, within_platform)), platform_(platform), id_(id) {
    note_runtime_user_thread();
    max_alloc_ = ACCEL_DEVICE_VALUE(cl_ulong, id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    tiles_ = gemm_tiles_for(gemm_params_for(platform, id, info().limits), id);
    for (std::size_t v = 0; v < tiles_.count; ++v) variants_[v] = tiles_.tiles[v];
    variant_count_.store(tiles_.count);
    ew_width_ = elementwise_width_for(id);
    add_width_ = is_cpu_device(id) ? 1 : ew_width_;
    add_block_ = is_cpu_device(id) ? std::min<std::size_t>({4096, info().limits.max_block_size,
                                                            info().limits.max_block_dims.x})
                                   : 0;
    fp64_ = device_has_fp64(id);
    std::string no_command_buffers;  // DeviceInfo ("command buffers") says why
    command_buffers_ = command_buffer_calls(platform, id, no_command_buffers);
    direct_gemm_ = reports_cpu_type(id);
    local_mem_ = ACCEL_DEVICE_VALUE(cl_ulong, id, CL_DEVICE_LOCAL_MEM_SIZE);
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
    cl_int err = CL_SUCCESS;
    context_ = clCreateContext(props, 1, &id_, nullptr, nullptr, &err);
    check_cl(err, "opening " + selector() + " (" + info().name + "): clCreateContext");
    register_kernels();
}

OpenclDevice::~OpenclDevice() {
    // Queues (the default stream is destroyed after this body) keep the
    // context alive until they are released, as OpenCL reference counting says.
    if (runtime_may_be_torn_down()) return;
    for (std::size_t i = 0; i < variant_count_.load() * kDTypeCount; ++i) {
        Program& p = programs_[i];
        for (const auto& set : p.sets)
            for (cl_kernel k : *set)
                if (k) clReleaseKernel(k);
        if (p.program) clReleaseProgram(p.program);
    }
    release_vendor_caches();
    if (context_) clReleaseContext(context_);
}

namespace {
const char* const kKernelNames[] = {
#define ACCEL_OPENCL_KERNEL_NAME(name) #name,
    ACCEL_OPENCL_KERNELS(ACCEL_OPENCL_KERNEL_NAME)
#undef ACCEL_OPENCL_KERNEL_NAME
};
}  // namespace

// f32: the gemm parameters and EW_VW chosen for the device, and no element
// macros (kernels/common.cl defaults to float). Other dtypes: their element
// macros (ACCEL_REAL_*) and EW_VW = 1 (the vector elementwise kernels are
// float32 only); f64 with the K slice halved, if need be, until its double
// slices fit the local memory (the tile, and so the launch geometry, stays).
// Every dtype's program on a device with double precision also gets
// ACCEL_HAS_FP64 (its convert_f64 kernel, kernels/convert.cl).
// The gemm parameters are those of variant `tile` (GemmTiles, then tuned ones).
std::string OpenclDevice::build_options(DType t, std::size_t tile) const {
    const std::string fp64 = fp64_ ? " -DACCEL_HAS_FP64" : "";
    const GemmParams& general = variant(tile);
    if (t == DType::f32)
        return "-cl-std=CL1.2" + general.build_options() + " -DEW_VW=" + std::to_string(ew_width_) +
               " -DADD_VW=" + std::to_string(add_width_) + fp64;
    GemmParams g = general;
    const char* real = "ACCEL_REAL_F16";
    if (t == DType::f64) {
        real = "ACCEL_REAL_F64";
        while (g.tk > 4 && g.local_bytes(sizeof(cl_double)) > local_mem_) g.tk /= 2;
    } else if (t == DType::bf16) {
        real = "ACCEL_REAL_BF16";
    }
    return "-cl-std=CL1.2" + g.build_options() + " -DEW_VW=1 -DADD_VW=1 -D" + real + fp64;
}

// The general tile's program: every kernel; another tile's: common.cl and
// matmul.cl only (its gemm kernel).
void OpenclDevice::build_program(DType t, std::size_t tile) {
    // accel::Activation's codes first (accel/activation_codes.h, for activate()
    // in common.cl), so dense's activation passes to the kernels unchanged.
    const char* all[] = {accel_cl_activation_codes, accel_cl_common, accel_cl_elementwise, accel_cl_reduce,
                         accel_cl_matmul, accel_cl_convert};
    const char* gemm_only[] = {accel_cl_activation_codes, accel_cl_common, accel_cl_matmul};
    const bool general = tile == GemmTiles::general;
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(context_, general ? 6 : 3, general ? all : gemm_only, nullptr, &err);
    check_cl(err, std::string("building the ") + dtype_name(t) + " kernels: clCreateProgramWithSource");
    const std::string options = build_options(t, tile);
    err = clBuildProgram(p, 1, &id_, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
        std::size_t n = 0;
        std::string log;
        if (clGetProgramBuildInfo(p, id_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) == CL_SUCCESS && n) {
            log.assign(n, '\0');
            clGetProgramBuildInfo(p, id_, CL_PROGRAM_BUILD_LOG, n, &log[0], nullptr);
        }
        clReleaseProgram(p);
        check_cl(err,
                 std::string("building the ") + dtype_name(t) + " kernels for " + selector() + " (" + info().name +
                     "): clBuildProgram",
                 " with options '" + options + "'; build log:\n" + trimmed(log));
    }
    programs_[tile * kDTypeCount + static_cast<std::size_t>(t)].program = p;
}

OpenclDevice::KernelSet* OpenclDevice::acquire_kernels(DType t, std::size_t tile) {
    Program& prog = programs_[tile * kDTypeCount + static_cast<std::size_t>(t)];
    std::call_once(prog.once, [this, t, tile] { build_program(t, tile); });
    {
        std::lock_guard<std::mutex> lock(prog.mutex);
        if (!prog.free.empty()) {
            KernelSet* set = prog.free.back();
            prog.free.pop_back();
            return set;
        }
    }
    // Every set is leased: make another, outside the lock (clCreateKernel is thread-safe).
    auto set = std::make_unique<KernelSet>(static_cast<std::size_t>(ProgramKernel::count_) + elementwise_ops_of_every_backend().size(), nullptr);
    auto create = [&](std::size_t slot, const char* name) {
        cl_int err = CL_SUCCESS;
        (*set)[slot] = clCreateKernel(prog.program, name, &err);
        if (err != CL_SUCCESS) {
            for (cl_kernel k : *set)
                if (k) clReleaseKernel(k);
            check_cl(err, std::string("clCreateKernel(\"") + name + "\", " + dtype_name(t) + ")");
        }
    };
    for (std::size_t i = 0; i < static_cast<std::size_t>(ProgramKernel::count_); ++i) {
        const ProgramKernel k = static_cast<ProgramKernel>(i);
        if (k == ProgramKernel::convert_f64 && !fp64_) continue;  // not in the program: no double
        if ((k == ProgramKernel::gemm_dot && !has_gemm_dot(tile)) || (k == ProgramKernel::gemm_rows && !has_gemm_rows(tile)))
            continue;  // not in the program
        const bool gemm =
            k == ProgramKernel::gemm || k == ProgramKernel::gemm_direct || k == ProgramKernel::gemm_dot || k == ProgramKernel::gemm_rows;
        if (tile != GemmTiles::general && !gemm) continue;  // a program of the gemm kernels only
        create(i, kKernelNames[i]);
    }
    if (tile == GemmTiles::general)
        for (Op op : elementwise_ops_of_every_backend()) create(elementwise_[static_cast<std::size_t>(op)].slot, op_name(op));
    std::lock_guard<std::mutex> lock(prog.mutex);
    // Room for every set in the free list, so release_kernels never allocates.
    prog.free.reserve(prog.sets.size() + 1);
    prog.sets.push_back(std::move(set));
    return prog.sets.back().get();
}

void OpenclDevice::release_kernels(DType t, std::size_t tile, KernelSet* set) noexcept {
    Program& prog = programs_[tile * kDTypeCount + static_cast<std::size_t>(t)];
    std::lock_guard<std::mutex> lock(prog.mutex);
    prog.free.push_back(set);  // never reallocates: capacity reserved in acquire_kernels()
}

DeviceHandle OpenclDevice::do_allocate(std::size_t bytes) {
    const std::string asked = "allocate: " + std::to_string(bytes) + " bytes asked on " + selector() + " (" +
                              info().name + ")";
    if (bytes > max_alloc_)
        throw OutOfMemory(asked + ", above its largest single allocation of " + std::to_string(max_alloc_) +
                          " bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE; " + std::to_string(info().global_memory_bytes) +
                          " bytes of global memory in total)");
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY ||
        err == CL_INVALID_BUFFER_SIZE)
        throw OutOfMemory(asked + ": " + cl_error_text("clCreateBuffer", err) + "; the device has " +
                          std::to_string(info().global_memory_bytes) + " bytes of global memory in total");
    check_cl(err, asked + ": clCreateBuffer");
    return m;
}

void OpenclDevice::do_deallocate(DeviceHandle h) noexcept {
    if (!runtime_may_be_torn_down()) clReleaseMemObject(mem(h));
}

void OpenclDevice::do_copy_h2d(DeviceHandle dst, std::size_t off, const void* src, std::size_t bytes, Stream& s,
                               bool blocking) {
    // A blocking write promises only that `src` may be reused (OpenCL 1.2): Intel's CPU runtime returned before the
    // write ran (kernels on other queues read old bytes), so a blocking copy also waits for the write's event.
    cl_event done = nullptr;
    check_cl(clEnqueueWriteBuffer(queue_of(s), mem(dst), blocking ? CL_TRUE : CL_FALSE, off, bytes, src, 0, nullptr,
                                  blocking ? &done : nullptr),
             "copy host to device: clEnqueueWriteBuffer");
    if (!blocking) return;
    const cl_int err = clWaitForEvents(1, &done);
    clReleaseEvent(done);
    check_cl(err, "copy host to device: clWaitForEvents");
}

void OpenclDevice::do_copy_d2h(void* dst, DeviceHandle src, std::size_t off, std::size_t bytes, Stream& s,
                               bool blocking) {
    check_cl(clEnqueueReadBuffer(queue_of(s), mem(src), blocking ? CL_TRUE : CL_FALSE, off, bytes, dst, 0, nullptr,
                                 nullptr),
             "copy device to host: clEnqueueReadBuffer");
}

void OpenclDevice::do_copy_d2d(DeviceHandle dst, std::size_t doff, DeviceHandle src, std::size_t soff,
                               std::size_t bytes, Stream& s, bool blocking) {
    check_cl(clEnqueueCopyBuffer(queue_of(s), mem(src), mem(dst), soff, doff, bytes, 0, nullptr, nullptr),
             "copy device to device: clEnqueueCopyBuffer");
    if (blocking) s.synchronize();
}

std::unique_ptr<Stream> OpenclDevice::do_create_stream() {
    return std::make_unique<OpenclStream>(*this, context_, id_, queues_);
}

std::unique_ptr<Event> OpenclDevice::do_create_event() { return std::make_unique<OpenclEvent>(*this); }

double OpenclDevice::do_elapsed_ms(Event& start, Event& end) {
    const cl_ulong a = static_cast<OpenclEvent&>(start).end_ns(), b = static_cast<OpenclEvent&>(end).end_ns();
    return (static_cast<double>(b) - static_cast<double>(a)) * 1e-6;
}

// ---- graphs -------------------------------------------------------------------

namespace {

// A finalized command buffer and its commands' kernels. Where the device
// cannot run one command buffer twice at once (no simultaneous use), a
// launch first waits for the previous one.
class OpenclGraph final : public NativeGraph {
public:
    OpenclGraph(const CommandBufferCalls& calls, std::unique_ptr<Stream> queue, CommandBufferRecording recorded)
        : calls_(calls), queue_(std::move(queue)), recorded_(std::move(recorded)) {}
    ~OpenclGraph() override {
        if (runtime_may_be_torn_down()) return;
        if (last_) {
            clWaitForEvents(1, &last_);
            clReleaseEvent(last_);
        }
        release(calls_, recorded_);
    }
    OpenclGraph(const OpenclGraph&) = delete;
    OpenclGraph& operator=(const OpenclGraph&) = delete;

    void launch(Stream& stream) override {
        note_runtime_user_thread();
        cl_command_queue q = static_cast<OpenclStream&>(stream).queue();
        std::lock_guard<std::mutex> lock(mutex_);
        if (last_ && !calls_.simultaneous_use) check_cl(clWaitForEvents(1, &last_), "Graph::launch: clWaitForEvents");
        cl_event done = nullptr;  // asked for always: PoCL 3.1 sets a callback on it unasked
        check_cl(calls_.enqueue(1, &q, recorded_.cb, 0, nullptr, &done), "Graph::launch: clEnqueueCommandBufferKHR");
        if (last_) clReleaseEvent(last_);
        last_ = done;
    }

    // Releases a recording's command buffer, then its kernels.
    static void release(const CommandBufferCalls& calls, CommandBufferRecording& r) noexcept {
        if (r.cb) calls.release(r.cb);  // the runtime keeps it until pending launches complete
        for (cl_kernel k : r.kernels) clReleaseKernel(k);
        r = CommandBufferRecording{};
    }

private:
    const CommandBufferCalls calls_;
    std::unique_ptr<Stream> queue_;  // the stream whose queue the command buffer was created on
    CommandBufferRecording recorded_;
    std::mutex mutex_;
    cl_event last_ = nullptr;
};

}  // namespace

cl_kernel CommandBufferRecording::kernel_like(cl_kernel k) {
    cl_program program = nullptr;
    check_cl(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof program, &program, nullptr),
             "recording a graph: clGetKernelInfo(CL_KERNEL_PROGRAM)");
    std::size_t bytes = 0;
    check_cl(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &bytes),
             "recording a graph: clGetKernelInfo(CL_KERNEL_FUNCTION_NAME)");
    std::string name(bytes, '\0');
    check_cl(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, bytes, name.data(), nullptr),
             "recording a graph: clGetKernelInfo(CL_KERNEL_FUNCTION_NAME)");
    cl_int err = CL_SUCCESS;
    kernels.reserve(kernels.size() + 1);  // the push below cannot throw once the kernel exists
    cl_kernel own = clCreateKernel(program, name.c_str(), &err);
    check_cl(err, "recording a graph: clCreateKernel");
    kernels.push_back(own);
    return own;
}

cl_int OpenclDevice::enqueue_kernel(Stream& s, cl_kernel k, cl_uint dims, const std::size_t* global,
                                    const std::size_t* local) {
    auto& os = static_cast<OpenclStream&>(s);
    if (CommandBufferRecording* r = os.recording())
        return command_buffers_.kernel(r->cb, nullptr, nullptr, k, dims, nullptr, global, local, 0, nullptr, nullptr,
                                       nullptr);
    return clEnqueueNDRangeKernel(os.queue(), k, dims, nullptr, global, local, 0, nullptr, nullptr);
}

std::string OpenclDevice::graph_mechanism() const {
    return "OpenCL command buffer (cl_khr_command_buffer " + command_buffers_.version +
           "): each run of captured kernels recorded once and replayed as one clEnqueueCommandBufferKHR (a run "
           "with a CLBlast call enqueued call by call)";
}

std::shared_ptr<NativeGraph> OpenclDevice::record_graph(const std::function<void(Stream&)>& enqueue) {
    note_runtime_user_thread();
    if (!command_buffers_) throw Unsupported("record_graph: " + selector() + " has no cl_khr_command_buffer");
    auto stream = std::make_unique<OpenclStream>(*this, context_, id_, queues_);
    const cl_command_buffer_properties_khr simultaneous[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                                             CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
    cl_command_queue q = stream->queue();
    cl_int err = CL_SUCCESS;
    CommandBufferRecording r;
    r.cb = command_buffers_.create(1, &q, command_buffers_.simultaneous_use ? simultaneous : nullptr, &err);
    check_cl(err, "recording a graph: clCreateCommandBufferKHR");
    stream->set_recording(&r);
    try {
        enqueue(*stream);
        stream->set_recording(nullptr);
        check_cl(command_buffers_.finalize(r.cb), "recording a graph: clFinalizeCommandBufferKHR");
    } catch (const CannotRecord&) {
        stream->set_recording(nullptr);
        OpenclGraph::release(command_buffers_, r);
        return nullptr;
    } catch (...) {
        stream->set_recording(nullptr);
        OpenclGraph::release(command_buffers_, r);
        throw;
    }
    return std::make_shared<OpenclGraph>(command_buffers_, std::move(stream), std::move(r));
}

void OpenclDevice::do_synchronize() {
    // Each queue is retained while it is finished: another thread may destroy
    // its stream meanwhile.
    // A queue that cannot be retained is not finished (its stream may go
    // meanwhile) and not released: the failure is reported after the others.
    std::vector<cl_command_queue> qs;
    cl_int first_error = CL_SUCCESS;
    std::string failed_call;
    const auto note = [&](cl_int err, const char* call) {
        if (err != CL_SUCCESS && first_error == CL_SUCCESS) {
            first_error = err;
            failed_call = call;
        }
    };
    {
        std::lock_guard<std::mutex> lock(queues_->mutex);
        for (cl_command_queue q : queues_->queues) {
            const cl_int err = clRetainCommandQueue(q);
            if (err == CL_SUCCESS) qs.push_back(q);
            note(err, "clRetainCommandQueue");
        }
    }
    for (cl_command_queue q : qs) {
        note(clFinish(q), "clFinish");
        clReleaseCommandQueue(q);
    }
    check_cl(first_error, "Device::synchronize: " + failed_call);
}

bool OpenclDevice::has_vendor_gemm(DType t) const noexcept {
    switch (t) {
        case DType::f32: return have_vendor_blas();
        case DType::f64: return have_vendor_blas() && fp64_;
        case DType::f16:   // CLBlast's HGEMM accumulates in half (opencl_vendor.cpp)
        case DType::bf16:  // CLBlast has no bfloat16
            return false;
    }
    return false;
}

}  // namespace opencl
}  // namespace accel

// auto: an OpenCL GPU after CUDA (never a simulator: has_gpu leaves Oclgrind out).
ACCEL_DEFINE_PLUGIN("opencl", accel::opencl::OpenclBackend,
                    "opencl:PLATFORM[:I] (a piece of the platform's name or vendor, I the device within it; e.g. "
                    "opencl:pocl, opencl:intel:1) | opencl:gpu|cpu|accelerator",
                    20, 0)

