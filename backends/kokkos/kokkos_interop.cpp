// What a program brings to a Kokkos device: its own kernels (a C++ callable
// per block, run as a RangePolicy over the blocks on host execution spaces)
// and its Kokkos objects (execution space instances, memory of the device's
// memory space), both ways.
#include "kokkos_device.hpp"
#include "../common/host_kernel.hpp"

#include <accel/error.hpp>

#include <string>

namespace accel {
namespace kokkos {

namespace {

template <class Space>
class KokkosBuiltKernel final : public BuiltKernel {
public:
    KokkosBuiltKernel(std::string name, std::string device, HostKernelFn fn)
        : name_(std::move(name)), device_(std::move(device)), fn_(std::move(fn)) {}

    void launch(const LaunchGeometry& g, const std::vector<ResolvedArg>& args, Stream& s) override {
        run_host_blocks(name_, device_.c_str(), fn_, g, args, [&s](std::size_t blocks, const auto& body) {
            auto lock = dispatch_lock();
            Kokkos::parallel_for("accel::user_kernel", Kokkos::RangePolicy<Space>(instance_of<Space>(s), 0, blocks),
                                 [&body](const std::size_t i) { body(i); });
            instance_of<Space>(s).fence();  // the blocks' arguments live in the caller's frame
        });
    }

private:
    std::string name_, device_;
    HostKernelFn fn_;
};

}  // namespace

template <class Space>
std::uint64_t KokkosDevice<Space>::object(const std::string& name) {
    require_runtime();
    if (name != "execution_space")
        throw Unsupported("a Kokkos device has no object '" + name +
                          "'; it has an execution_space (the default stream's instance)");
    return reinterpret_cast<std::uint64_t>(&instance_of<Space>(default_stream()));
}

template <class Space>
std::uint64_t KokkosDevice<Space>::queue(Stream& stream) {
    require_runtime();
    return reinterpret_cast<std::uint64_t>(&instance_of<Space>(stream));
}

template <class Space>
NativeMemory KokkosDevice<Space>::memory(void* handle, std::size_t bytes) {
    return {reinterpret_cast<std::uint64_t>(handle), 0, bytes};
}

template <class Space>
void* KokkosDevice<Space>::adopt(const NativeMemory& m) {
    require_runtime();
    return reinterpret_cast<char*>(m.handle) + m.offset;
}

template <class Space>
void KokkosDevice<Space>::release(void*) noexcept {}

template <class Space>
std::unique_ptr<Stream> KokkosDevice<Space>::stream_over(std::uint64_t native) {
    require_runtime();
    return std::make_unique<KokkosStream<Space>>(*this, *reinterpret_cast<const Space*>(native));
}

template <class Space>
std::shared_ptr<BuiltKernel> KokkosDevice<Space>::build_program_kernel(const KernelSource& source) {
    if constexpr (!is_host_space<Space>)
        throw Unsupported("kernel '" + source.name + "': a C++ callable runs on host execution spaces only, and " +
                          selector() + " runs on " + Space::name());
    else
        return std::make_shared<KokkosBuiltKernel<Space>>(source.name, selector(), source.host);
}

#define ACCEL_KOKKOS_INSTANTIATE_INTEROP(S)                                                      \
    template std::uint64_t KokkosDevice<S>::object(const std::string&);                         \
    template std::uint64_t KokkosDevice<S>::queue(Stream&);                                     \
    template NativeMemory KokkosDevice<S>::memory(void*, std::size_t);                          \
    template void* KokkosDevice<S>::adopt(const NativeMemory&);                                 \
    template void KokkosDevice<S>::release(void*) noexcept;                                     \
    template std::unique_ptr<Stream> KokkosDevice<S>::stream_over(std::uint64_t);               \
    template std::shared_ptr<BuiltKernel> KokkosDevice<S>::build_program_kernel(const KernelSource&);
ACCEL_KOKKOS_FOR_EACH_SPACE(ACCEL_KOKKOS_INSTANTIATE_INTEROP)
#undef ACCEL_KOKKOS_INSTANTIATE_INTEROP

}  // namespace kokkos
}  // namespace accel
