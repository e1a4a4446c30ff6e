// What a program brings to kokkos:0: its own kernels (a C++ callable per
// block, run as a RangePolicy over the blocks on host execution spaces) and
// its Kokkos objects (execution space instances, memory of the default
// memory space), both ways.
#include "kokkos_device.hpp"

#include <accel/error.hpp>

#include <exception>
#include <mutex>
#include <string>

namespace accel {
namespace kokkos {

namespace {

class KokkosBuiltKernel final : public BuiltKernel {
public:
    KokkosBuiltKernel(std::string name, HostKernelFn fn) : name_(std::move(name)), fn_(std::move(fn)) {}

    void launch(const LaunchGeometry& g, const std::vector<ResolvedArg>& args, Stream& s) override {
        const std::size_t blocks = g.grid.volume();
        std::mutex mutex;
        std::exception_ptr first;  // guarded by mutex: the first block that threw
        const HostKernelFn& fn = fn_;
        {
            auto lock = dispatch_lock();
            Kokkos::parallel_for(
                "accel::user_kernel", Kokkos::RangePolicy<ExecSpace>(instance_of(s), 0, blocks),
                [&](const std::size_t i) {
                    HostBlock b;
                    b.block_idx = {i % g.grid.x, (i / g.grid.x) % g.grid.y, i / (g.grid.x * g.grid.y)};
                    b.block_dim = g.block;
                    b.grid_dim = g.grid;
                    b.args = &args;
                    try {
                        fn(b);
                    } catch (...) {  // an exception may not leave a Kokkos kernel
                        std::lock_guard<std::mutex> guard(mutex);
                        if (!first) first = std::current_exception();
                    }
                });
            instance_of(s).fence();  // the callable's arguments live in this frame
        }
        if (!first) return;
        try {
            std::rethrow_exception(first);
        } catch (const std::exception& e) {
            throw DeviceError("kernel '" + name_ + "' on kokkos:0 threw: " + e.what(), 0, "HostKernelThrew");
        } catch (...) {
            throw DeviceError("kernel '" + name_ + "' on kokkos:0 threw a non-standard exception", 0, "HostKernelThrew");
        }
    }

private:
    std::string name_;
    HostKernelFn fn_;
};

}  // namespace

KokkosStream::KokkosStream(Device& d, const ExecSpace& space) : Stream(d) {
    auto lock = dispatch_lock();
    space_ = std::make_unique<ExecSpace>(space);
}

NativeInterop* KokkosDevice::do_interop() noexcept { return this; }

std::uint64_t KokkosDevice::object(NativeObject what) {
    require_runtime();
    if (what != NativeObject::execution_space)
        throw Unsupported(std::string("a Kokkos device has no ") + native_object_name(what) +
                          "; it has an execution_space (the default stream's instance)");
    return reinterpret_cast<std::uint64_t>(&instance_of(default_stream()));
}

std::uint64_t KokkosDevice::queue(Stream& stream) {
    require_runtime();
    return reinterpret_cast<std::uint64_t>(&instance_of(stream));
}

NativeMemory KokkosDevice::memory(void* handle, std::size_t bytes) {
    return {reinterpret_cast<std::uint64_t>(handle), 0, bytes};
}

void* KokkosDevice::adopt(const NativeMemory& m) {
    require_runtime();
    return reinterpret_cast<char*>(m.handle) + m.offset;
}

void KokkosDevice::release(void*) noexcept {}

std::unique_ptr<Stream> KokkosDevice::stream_over(std::uint64_t native) {
    require_runtime();
    return std::make_unique<KokkosStream>(*this, *reinterpret_cast<const ExecSpace*>(native));
}

std::shared_ptr<BuiltKernel> KokkosDevice::do_build_kernel(const KernelSource& source) {
    if (!host_space())
        throw Unsupported("kernel '" + source.name + "': a C++ callable runs on host execution spaces only, and "
                          "kokkos:0 runs on " + ExecSpace::name());
    return std::make_shared<KokkosBuiltKernel>(source.name, source.host);
}

}  // namespace kokkos
}  // namespace accel
