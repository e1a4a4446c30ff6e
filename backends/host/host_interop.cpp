// What a program brings to the host device: its own kernels (a C++ callable
// run once per block, blocks on the OpenMP team) and its memory (a host
// pointer is this device's memory). The host has no runtime objects or
// queues to hand out.
#include "host_device.hpp"
#include "kernels/parallel.hpp"
#include "../common/host_kernel.hpp"

#include <accel/error.hpp>

#include <string>

namespace accel {
namespace host {

namespace {

class HostBuiltKernel final : public BuiltKernel {
public:
    HostBuiltKernel(std::string name, HostKernelFn fn) : name_(std::move(name)), fn_(std::move(fn)) {}

    void launch(const LaunchGeometry& g, const std::vector<ResolvedArg>& args, Stream&) override {
        run_host_blocks(name_, "host:0", fn_, g, args,
                        [](std::size_t blocks, const auto& body) { parallel_items(blocks, body); });
    }

private:
    std::string name_;
    HostKernelFn fn_;
};

class HostInterop final : public NativeInterop {
public:
    std::uint64_t object(const std::string& name) override {
        throw Unsupported("the host backend has no runtime object (asked for its '" + name +
                          "'): its memory is plain host memory");
    }
    std::uint64_t queue(Stream&) override {
        throw Unsupported("the host backend has no native queue: its work runs synchronously in the calling thread");
    }
    NativeMemory memory(void* handle, std::size_t bytes) override {
        return {reinterpret_cast<std::uint64_t>(handle), 0, bytes};
    }
    void* adopt(const NativeMemory& m) override { return reinterpret_cast<char*>(m.handle) + m.offset; }
    void release(void*) noexcept override {}
    std::unique_ptr<Stream> stream_over(std::uint64_t) override {
        throw Unsupported("the host backend has no native queue to put a stream over");
    }
};

}  // namespace

void* HostDevice::do_capability(std::string_view name) noexcept {
    static HostInterop interop;
    if (name == capability_name_of<NativeInterop>()) return static_cast<NativeInterop*>(&interop);
    return offer_capability<Probes, KernelBuilder>(this, name);
}

std::shared_ptr<BuiltKernel> HostDevice::build_program_kernel(const KernelSource& source) {
    return std::make_shared<HostBuiltKernel>(source.name, source.host);
}

}  // namespace host
}  // namespace accel
