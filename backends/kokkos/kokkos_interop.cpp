// What a program brings to kokkos:0: its own kernels (a C++ callable per
// block, run as a RangePolicy over the blocks on host execution spaces) and
// its Kokkos objects (execution space instances, memory of the default
// memory space), both ways.
#include "kokkos_device.hpp"
#include "../common/host_kernel.hpp"

#include <accel/error.hpp>

#include <string>

namespace accel {
namespace kokkos {

namespace {

class KokkosBuiltKernel final : public BuiltKernel {
public:
    KokkosBuiltKernel(std::string name, HostKernelFn fn) : name_(std::move(name)), fn_(std::move(fn)) {}

    void launch(const LaunchGeometry& g, const std::vector<ResolvedArg>& args, Stream& s) override {
        run_host_blocks(name_, "kokkos:0", fn_, g, args, [&s](std::size_t blocks, const auto& body) {
            auto lock = dispatch_lock();
            Kokkos::parallel_for("accel::user_kernel", Kokkos::RangePolicy<ExecSpace>(instance_of(s), 0, blocks),
                                 [&body](const std::size_t i) { body(i); });
            instance_of(s).fence();  // the blocks' arguments live in the caller's frame
        });
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

std::uint64_t KokkosDevice::object(const std::string& name) {
    require_runtime();
    if (name != "execution_space")
        throw Unsupported("a Kokkos device has no object '" + name +
                          "'; it has an execution_space (the default stream's instance)");
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
