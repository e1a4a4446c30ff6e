// What a program brings to the host device: its own kernels (a C++ callable
// run once per block, blocks on the OpenMP team) and its memory (a host
// pointer is this device's memory). The host has no runtime objects or
// queues to hand out.
#include "host_device.hpp"
#include "kernels/parallel.hpp"

#include <accel/error.hpp>

#include <exception>
#include <mutex>
#include <string>

namespace accel {
namespace host {

namespace {

class HostBuiltKernel final : public BuiltKernel {
public:
    HostBuiltKernel(std::string name, HostKernelFn fn) : name_(std::move(name)), fn_(std::move(fn)) {}

    void launch(const LaunchGeometry& g, const std::vector<ResolvedArg>& args, Stream&) override {
        const std::size_t blocks = g.grid.volume();
        std::mutex mutex;
        std::exception_ptr first;  // guarded by mutex: the first block that threw
        parallel_items(blocks, [&](std::size_t i) {
            HostBlock b;
            b.block_idx = {i % g.grid.x, (i / g.grid.x) % g.grid.y, i / (g.grid.x * g.grid.y)};
            b.block_dim = g.block;
            b.grid_dim = g.grid;
            b.args = &args;
            try {
                fn_(b);
            } catch (...) {  // an exception may not leave an OpenMP region
                std::lock_guard<std::mutex> lock(mutex);
                if (!first) first = std::current_exception();
            }
        });
        if (!first) return;
        try {
            std::rethrow_exception(first);
        } catch (const std::exception& e) {
            throw DeviceError("kernel '" + name_ + "' on host:0 threw: " + e.what(), 0, "HostKernelThrew");
        } catch (...) {
            throw DeviceError("kernel '" + name_ + "' on host:0 threw a non-standard exception", 0, "HostKernelThrew");
        }
    }

private:
    std::string name_;
    HostKernelFn fn_;
};

class HostInterop final : public NativeInterop {
public:
    std::uint64_t object(NativeObject what) override {
        throw Unsupported(std::string("the host backend has no runtime object (asked for its ") +
                          native_object_name(what) + "): its memory is plain host memory");
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

NativeInterop* HostDevice::do_interop() noexcept {
    static HostInterop interop;
    return &interop;
}

std::shared_ptr<BuiltKernel> HostDevice::do_build_kernel(const KernelSource& source) {
    return std::make_shared<HostBuiltKernel>(source.name, source.host);
}

}  // namespace host
}  // namespace accel
