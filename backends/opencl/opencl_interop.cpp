// What a program brings to an OpenCL device: its own kernels (OpenCL C,
// built in the device's context) and its runtime's objects (cl_context,
// cl_device_id, cl_command_queue, cl_mem), both ways.
#include "opencl_device.hpp"
#include "../common/cache_file.hpp"

#include <accel/environment.hpp>
#include <accel/error.hpp>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace accel {
namespace opencl {

namespace {

std::string build_log(cl_program p, cl_device_id id) {
    std::size_t n = 0;
    std::string log;
    if (clGetProgramBuildInfo(p, id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) == CL_SUCCESS && n) {
        log.assign(n, '\0');
        clGetProgramBuildInfo(p, id, CL_PROGRAM_BUILD_LOG, n, &log[0], nullptr);
    }
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) log.pop_back();
    return log;
}

std::string device_text(cl_device_id id, cl_device_info what) {
    std::size_t n = 0;
    if (clGetDeviceInfo(id, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
    std::string s(n, '\0');
    if (clGetDeviceInfo(id, what, n, &s[0], nullptr) != CL_SUCCESS) return "";
    return s;
}

// Built programs are kept in ACCEL_CACHE_DIR/opencl-kernels/ as binaries
// (cache_file.hpp's keyed entries), under a key of the device, its driver,
// the build options and the source.
constexpr char kProgramMagic[9] = "accelCL1";

std::string program_key(cl_device_id id, const KernelSource& s) {
    return device_text(id, CL_DEVICE_NAME) + '\n' + device_text(id, CL_DEVICE_VERSION) + '\n' +
           device_text(id, CL_DRIVER_VERSION) + '\n' + s.build_options + '\n' + s.code_for("opencl");
}

void store_binary(cl_program p, const std::string& file, const std::string& key) {
    std::size_t size = 0;
    if (file.empty() || clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS ||
        size == 0)
        return;
    std::vector<unsigned char> binary(size);
    unsigned char* bytes = binary.data();
    if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bytes, &bytes, nullptr) == CL_SUCCESS)
        cache_file::write_keyed(file, kProgramMagic, key, binary.data(), binary.size());
}

// A program's kernel. clSetKernelArg on one cl_kernel is not thread-safe,
// and PoCL also breaks when one cl_kernel runs on two queues at once
// (pocl_release_dlhandle_cache: "Assertion `found->ref_count > 0' failed",
// with a cold PoCL cache): so each launch leases a cl_kernel of its own from
// a pool, as the backend's own kernels do (OpenclDevice::acquire_kernels).
class OpenclBuiltKernel final : public BuiltKernel {
public:
    OpenclBuiltKernel(std::string name, cl_program program, cl_kernel first)
        : name_(std::move(name)), program_(program), all_{first}, free_{first} {}
    ~OpenclBuiltKernel() override {
        if (runtime_may_be_torn_down()) return;
        for (cl_kernel k : all_) clReleaseKernel(k);
        clReleaseProgram(program_);
    }

    void launch(const LaunchGeometry& g, const std::vector<ResolvedArg>& args, Stream& s) override {
        note_runtime_user_thread();
        struct Lease {
            OpenclBuiltKernel& owner;
            cl_kernel kernel;
            ~Lease() {
                std::lock_guard<std::mutex> lock(owner.mutex_);
                owner.free_.push_back(kernel);
            }
        } lease{*this, acquire()};
        cl_kernel k = lease.kernel;
        if (CommandBufferRecording* r = static_cast<OpenclStream&>(s).recording()) k = r->kernel_like(k);
        for (cl_uint i = 0; i < args.size(); ++i) {
            const ResolvedArg& a = args[i];
            cl_mem m = static_cast<cl_mem>(a.handle);
            const cl_int err = a.type == ParamType::tensor ? clSetKernelArg(k, i, sizeof m, &m)
                                                           : clSetKernelArg(k, i, param_type_size(a.type), &a.bits);
            check_cl(err, "kernel '" + name_ + "': clSetKernelArg " + std::to_string(i),
                     std::string(" (") + param_type_name(a.type) + "; does the kernel's parameter have this type?)");
        }
        const std::size_t local[3] = {g.block.x, g.block.y, g.block.z};
        const std::size_t global[3] = {g.grid.x * g.block.x, g.grid.y * g.block.y, g.grid.z * g.block.z};
        const cl_uint dims = g.grid.z * g.block.z > 1 ? 3 : g.grid.y * g.block.y > 1 ? 2 : 1;
        check_cl(static_cast<OpenclDevice&>(s.device()).enqueue_kernel(s, k, dims, global, local),
                 "kernel '" + name_ + "': clEnqueueNDRangeKernel", " with " + g.to_string());
    }

private:
    // A cl_kernel no other launch holds: a free one, or a new one of the program.
    cl_kernel acquire() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!free_.empty()) {
                cl_kernel k = free_.back();
                free_.pop_back();
                return k;
            }
        }
        cl_int err = CL_SUCCESS;
        cl_kernel k = clCreateKernel(program_, name_.c_str(), &err);
        check_cl(err, "kernel '" + name_ + "': clCreateKernel");
        std::lock_guard<std::mutex> lock(mutex_);
        all_.push_back(k);
        return k;
    }

    std::string name_;
    cl_program program_;
    std::mutex mutex_;             ///< guards all_ and free_
    std::vector<cl_kernel> all_;   ///< every cl_kernel made, released with the kernel
    std::vector<cl_kernel> free_;  ///< those no launch holds now
};

}  // namespace

void* OpenclDevice::allocate_page_locked(std::size_t bytes) {
    note_runtime_user_thread();
    const std::string asked = "page-locked memory: " + std::to_string(bytes) + " bytes asked on " + selector();
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err);
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY ||
        err == CL_INVALID_BUFFER_SIZE)
        throw OutOfMemory(asked + ": " + cl_error_text("clCreateBuffer", err));
    check_cl(err, asked + ": clCreateBuffer");
    const cl_command_queue q = static_cast<OpenclStream&>(default_stream()).queue();
    void* p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr, nullptr, &err);
    if (err != CL_SUCCESS || !p) {
        clReleaseMemObject(m);
        check_cl(err == CL_SUCCESS ? CL_OUT_OF_HOST_MEMORY : err, asked + ": clEnqueueMapBuffer");
    }
    try {
        std::lock_guard<std::mutex> lock(page_locked_mutex_);
        page_locked_.emplace(p, m);
    } catch (...) {
        clEnqueueUnmapMemObject(q, m, p, 0, nullptr, nullptr);
        clFinish(q);
        clReleaseMemObject(m);
        throw;
    }
    return p;
}

void OpenclDevice::free_page_locked(void* data) noexcept {
    cl_mem m = nullptr;
    {
        std::lock_guard<std::mutex> lock(page_locked_mutex_);
        const auto it = page_locked_.find(data);
        if (it == page_locked_.end()) return;
        m = it->second;
        page_locked_.erase(it);
    }
    if (runtime_may_be_torn_down()) return;
    const cl_command_queue q = static_cast<OpenclStream&>(default_stream()).queue();
    clEnqueueUnmapMemObject(q, m, data, 0, nullptr, nullptr);
    clFinish(q);  // the unmap is done before the buffer goes
    clReleaseMemObject(m);
}

std::shared_ptr<BuiltKernel> OpenclDevice::build_program_kernel(const KernelSource& source) {
    note_runtime_user_thread();
    const std::string code = source.code_for("opencl");
    const char* text = code.c_str();
    const std::string what = "kernel '" + source.name + "' for " + selector() + " (" + info().name + ")";
    const std::string key = program_key(id_, source);
    const std::string file = cache_file::keyed_path("opencl-kernels", key, "bin");
    cl_int err = CL_SUCCESS;
    cl_program p = nullptr;
    // The cached binary first; one the runtime refuses is rebuilt from source and replaced.
    if (const auto binary = cache_file::read_keyed(file, kProgramMagic, key, std::uint64_t{256} << 20);
        !binary.empty()) {
        const unsigned char* bytes = binary.data();
        const std::size_t size = binary.size();
        cl_int status = CL_SUCCESS;
        p = clCreateProgramWithBinary(context_, 1, &id_, &size, &bytes, &status, &err);
        if (p && (err != CL_SUCCESS || status != CL_SUCCESS ||
                  clBuildProgram(p, 1, &id_, source.build_options.c_str(), nullptr, nullptr) != CL_SUCCESS)) {
            clReleaseProgram(p);
            p = nullptr;
        }
    }
    const bool from_cache = p != nullptr;
    if (!p) {
        p = clCreateProgramWithSource(context_, 1, &text, nullptr, &err);
        check_cl(err, what + ": clCreateProgramWithSource");
        err = clBuildProgram(p, 1, &id_, source.build_options.c_str(), nullptr, nullptr);
    }
    if (err != CL_SUCCESS) {
        const std::string log = build_log(p, id_);
        clReleaseProgram(p);
        check_cl(err, what + ": clBuildProgram",
                 " with options '" + source.build_options + "'; build log:\n" + log);
    }
    cl_kernel k = clCreateKernel(p, source.name.c_str(), &err);
    if (err != CL_SUCCESS) {
        clReleaseProgram(p);
        check_cl(err, what + ": clCreateKernel",
                 " (is there a __kernel void " + source.name + "(...) in KernelSource::code[\"opencl\"]?)");
    }
    cl_uint count = 0;
    if (clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof count, &count, nullptr) == CL_SUCCESS &&
        count != source.params.size()) {
        clReleaseKernel(k);
        clReleaseProgram(p);
        throw InvalidArgument(what + ": the OpenCL C kernel takes " + std::to_string(count) +
                              " argument(s), its declared signature " + std::to_string(source.params.size()));
    }
    if (!from_cache) store_binary(p, file, key);
    return std::make_shared<OpenclBuiltKernel>(source.name, p, k);
}

std::uint64_t OpenclDevice::object(const std::string& name) {
    if (name == "context") return reinterpret_cast<std::uint64_t>(context_);
    if (name == "device") return reinterpret_cast<std::uint64_t>(id_);
    throw Unsupported("an OpenCL device has no object '" + name +
                      "'; it has a context (cl_context) and a device (cl_device_id)");
}

std::uint64_t OpenclDevice::queue(Stream& stream) {
    return reinterpret_cast<std::uint64_t>(static_cast<OpenclStream&>(stream).queue());
}

NativeMemory OpenclDevice::memory(void* handle, std::size_t bytes) {
    return {reinterpret_cast<std::uint64_t>(handle), 0, bytes};
}

void* OpenclDevice::adopt(const NativeMemory& m) {
    cl_mem user = reinterpret_cast<cl_mem>(m.handle);
    const std::string what = "adopt_native_memory on " + selector();
    cl_context ctx = nullptr;
    check_cl(clGetMemObjectInfo(user, CL_MEM_CONTEXT, sizeof ctx, &ctx, nullptr),
             what + ": clGetMemObjectInfo(CL_MEM_CONTEXT)", " (is the handle a cl_mem?)");
    if (ctx != context_)
        throw InvalidArgument(what + ": the cl_mem belongs to another cl_context; create it in the device's own "
                                     "(accel::interop::opencl::context)");
    // A sub-buffer of a sub-buffer is not allowed: go to its parent.
    cl_mem parent = nullptr;
    std::size_t origin = m.offset, size = 0, base = 0;
    check_cl(clGetMemObjectInfo(user, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, nullptr),
             what + ": clGetMemObjectInfo(CL_MEM_ASSOCIATED_MEMOBJECT)");
    check_cl(clGetMemObjectInfo(user, CL_MEM_SIZE, sizeof size, &size, nullptr), what + ": clGetMemObjectInfo(CL_MEM_SIZE)");
    if (m.offset > size || m.bytes > size - m.offset)
        throw InvalidArgument(what + ": bytes [" + std::to_string(m.offset) + ", " + std::to_string(m.offset + m.bytes) +
                              ") asked of a cl_mem of " + std::to_string(size) + " bytes");
    if (parent) {
        check_cl(clGetMemObjectInfo(user, CL_MEM_OFFSET, sizeof base, &base, nullptr), what + ": clGetMemObjectInfo(CL_MEM_OFFSET)");
        origin += base;
    }
    cl_uint align_bits = 0;
    check_cl(clGetDeviceInfo(id_, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, nullptr),
             what + ": clGetDeviceInfo(CL_DEVICE_MEM_BASE_ADDR_ALIGN)");
    const std::size_t align = align_bits / 8;
    if (align && origin % align != 0)
        throw InvalidArgument(what + ": offset " + std::to_string(origin) + " is not a multiple of " +
                              std::to_string(align) + " bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN), which an OpenCL "
                              "sub-buffer needs; pass an aligned offset");
    const cl_buffer_region region{origin, m.bytes};
    cl_int err = CL_SUCCESS;
    cl_mem sub = clCreateSubBuffer(parent ? parent : user, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    check_cl(err, what + ": clCreateSubBuffer");
    return sub;  // a distinct cl_mem per adoption; it keeps the program's buffer alive
}

void OpenclDevice::release(void* handle) noexcept {
    if (!runtime_may_be_torn_down()) clReleaseMemObject(static_cast<cl_mem>(handle));
}

std::unique_ptr<Stream> OpenclDevice::stream_over(std::uint64_t native) {
    cl_command_queue q = reinterpret_cast<cl_command_queue>(native);
    const std::string what = "stream_over_native_queue on " + selector();
    cl_context ctx = nullptr;
    cl_device_id dev = nullptr;
    cl_command_queue_properties props = 0;
    check_cl(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, nullptr),
             what + ": clGetCommandQueueInfo(CL_QUEUE_CONTEXT)", " (is the handle a cl_command_queue?)");
    check_cl(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, nullptr), what + ": clGetCommandQueueInfo(CL_QUEUE_DEVICE)");
    check_cl(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr),
             what + ": clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)");
    if (ctx != context_ || dev != id_)
        throw InvalidArgument(what + ": the queue belongs to another " + (ctx != context_ ? "context" : "device") +
                              "; create it with the device's own context and device id");
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        throw InvalidArgument(what + ": the queue runs out of order; a stream is in order (create the queue "
                                     "without CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)");
    if (!(props & CL_QUEUE_PROFILING_ENABLE))
        throw InvalidArgument(what + ": the queue has no profiling; accel times its work with the queue's events "
                                     "(create it with CL_QUEUE_PROFILING_ENABLE)");
    return std::make_unique<OpenclStream>(*this, q, queues_);
}

OpenclStream::OpenclStream(Device& d, cl_command_queue borrowed, std::shared_ptr<QueueList> list)
    : Stream(d), queue_(borrowed), owned_(false), list_(std::move(list)) {
    note_runtime_user_thread();
    std::lock_guard<std::mutex> lock(list_->mutex);
    list_->queues.push_back(queue_);
}

}  // namespace opencl
}  // namespace accel
