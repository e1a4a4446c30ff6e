// What a program brings to a CUDA (HIP) device: its own kernels (CUDA C++
// compiled at run time by the platform file's compiler: NVRTC, hiprtc) and
// its runtime's objects (device ordinal, primary context, cudaStream_t,
// device pointers), both ways.
#include "cuda_device.hpp"

#include <accel/error.hpp>

#include <string>
#include <vector>

namespace accel {
namespace cuda {

namespace {

class CudaBuiltKernel final : public BuiltKernel {
public:
    CudaBuiltKernel(std::string name, int ordinal, std::unique_ptr<ProgramKernel> kernel)
        : name_(std::move(name)), ordinal_(ordinal), kernel_(std::move(kernel)) {}

    void launch(const LaunchGeometry& g, const std::vector<ResolvedArg>& args, Stream& s) override {
        // The runtime reads each argument's value through a pointer to it:
        // a tensor's device pointer, a scalar's bytes.
        std::vector<void*> values(args.size());
        std::vector<void*> pointers(args.size());
        for (std::size_t i = 0; i < args.size(); ++i) {
            values[i] = args[i].handle;
            pointers[i] = args[i].type == ParamType::tensor ? static_cast<void*>(&values[i])
                                                            : const_cast<std::uint64_t*>(&args[i].bits);
        }
        const CurrentDevice current(ordinal_);
        const dim3 grid(static_cast<unsigned>(g.grid.x), static_cast<unsigned>(g.grid.y),
                        static_cast<unsigned>(g.grid.z));
        const dim3 block(static_cast<unsigned>(g.block.x), static_cast<unsigned>(g.block.y),
                         static_cast<unsigned>(g.block.z));
        const cudaError_t e = kernel_->launch(grid, block, pointers.data(), static_cast<CudaStream&>(s).handle());
        if (e == cudaErrorNotSupported) {
            (void)cleared(e);
            throw Unsupported("kernel '" + name_ + "': the " ACCEL_GPU_RUNTIME " runtime of " + s.device().selector() +
                              " cannot run it (" + describe(e) + ")");
        }
        check(e, ACCEL_GPU_RUNTIME " launch of a program's kernel", __FILE__, __LINE__);
    }

private:
    std::string name_;
    int ordinal_;
    std::unique_ptr<ProgramKernel> kernel_;
};

}  // namespace

std::shared_ptr<BuiltKernel> CudaDevice::build_program_kernel(const KernelSource& source) {
    const CurrentDevice current(ordinal_);
    const std::string what = "kernel '" + source.name + "' for " + selector() + " (" + info().name + ")";
    return std::make_shared<CudaBuiltKernel>(source.name, ordinal_, compile_program_kernel(source, ordinal_, what));
}

std::uint64_t CudaDevice::object(const std::string& name) {
    if (name == "device") return static_cast<std::uint64_t>(ordinal_);
    if (name == "context") {
        const CurrentDevice current(ordinal_);
        return primary_context(ordinal_);
    }
    throw Unsupported("a " ACCEL_GPU_RUNTIME " device has no object '" + name +
                      "'; it has a device (the ordinal) and a context (the primary context)");
}

std::uint64_t CudaDevice::queue(Stream& stream) {
    return reinterpret_cast<std::uint64_t>(static_cast<CudaStream&>(stream).handle());
}

NativeMemory CudaDevice::memory(void* handle, std::size_t bytes) {
    return {reinterpret_cast<std::uint64_t>(handle), 0, bytes};
}

void* CudaDevice::adopt(const NativeMemory& m) {
    // The whole range must be this device's memory: its first and its last byte.
    char* first = reinterpret_cast<char*>(m.handle) + m.offset;
    const int owner = device_of_pointer(first), last_owner = device_of_pointer(first + m.bytes - 1);
    if (owner != ordinal_ || last_owner != ordinal_)
        throw InvalidArgument("adopt_native_memory on " + selector() + ": " +
                              (owner < 0 || last_owner < 0
                                   ? std::string("the range is not " ACCEL_GPU_RUNTIME " device memory (pass memory "
                                                 "from " ACCEL_GPU_NAME(cudaMalloc) " or managed memory, with its "
                                                 "size in bytes)")
                                   : "the memory belongs to " ACCEL_GPU_RUNTIME " device " +
                                         std::to_string(owner != ordinal_ ? owner : last_owner) + ", not " +
                                         std::to_string(ordinal_) + " (" + selector() + ")"));
    return first;  // the program's pointer itself: accel's kernels address it directly
}

void CudaDevice::release(void*) noexcept {}  // the memory is the program's to free

std::unique_ptr<Stream> CudaDevice::stream_over(std::uint64_t native) {
    auto s = reinterpret_cast<cudaStream_t>(native);
    const int owner = device_of_stream(s);
    if (owner == -1 || (owner >= 0 && owner != ordinal_))
        throw InvalidArgument("stream_over_native_queue on " + selector() + ": " +
                              (owner < 0 ? std::string("the " ACCEL_GPU_RUNTIME " runtime does not know the stream")
                                         : "the stream belongs to " ACCEL_GPU_RUNTIME " device " +
                                               std::to_string(owner) + ", not " + std::to_string(ordinal_)) +
                              "; pass a stream created on this device");
    const CurrentDevice current(ordinal_);
    return std::make_unique<CudaStream>(*this, memory_, s);
}

CudaStream::CudaStream(Device& d, std::shared_ptr<DeviceMemory> memory, cudaStream_t borrowed)
    : Stream(d), memory_(std::move(memory)), stream_(borrowed), owned_(false) {
    memory_->add_stream(stream_);
}

}  // namespace cuda
}  // namespace accel
