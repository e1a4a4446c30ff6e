// accel/interop/kokkos.hpp — a Kokkos device's execution space instances and
// memory for a program that also runs Kokkos kernels itself, and accel
// tensors and streams over the program's own (zero copy). Include it only in
// a program built against the Kokkos the plugin uses (it includes
// <Kokkos_Core.hpp>). Each Kokkos device runs on one execution space
// (kokkos:0 the default one, kokkos:openmp, kokkos:cuda, ...: DeviceInfo's
// "execution space"); the functions that hand out or take an instance name
// it as their template argument, Kokkos' default execution space unless
// given. Every function throws InvalidArgument for a device, stream or
// tensor of another backend, naming it, and for an instance of another
// space than the device's.
#pragma once

#include <Kokkos_Core.hpp>

#include <accel/device.hpp>
#include <accel/tensor.hpp>

#include <cstddef>
#include <memory>

namespace accel {
namespace interop {
namespace kokkos {

using ExecSpace = Kokkos::DefaultExecutionSpace;

/// Throws InvalidArgument unless Kokkos device `d` runs on execution space
/// `Space` (devices of other backends pass: the native call then names
/// them). `call` names the caller in the message.
template <class Space>
void require_space(const Device& d, const char* call) {
    if (d.info().backend != "kokkos") return;
    for (const auto& fact : d.info().extra)
        if (fact.first == "execution space" && fact.second != Space::name())
            throw InvalidArgument(std::string("accel::interop::kokkos::") + call + ": " + d.selector() +
                                  " runs on the execution space " + fact.second + ", not " + Space::name() +
                                  "; name its space: " + call + "<Kokkos::" + fact.second + ">(...)");
}

/// The execution space instance accel's work on `s` runs on (valid while
/// `s` lives). Dispatch on it to run in order with accel's work there.
/// Space: the stream's device's execution space.
template <class Space = ExecSpace>
const Space& execution_space(Stream& s) {
    require_space<Space>(s.device(), "execution_space");
    return *reinterpret_cast<const Space*>(s.device().native_queue("kokkos", s));
}

/// The first element of `t` in its device's memory space (valid while `t`
/// lives), e.g. for a Kokkos::View<T*, Kokkos::MemoryUnmanaged> over it.
template <class T>
T* data(const Tensor& t) {
    return reinterpret_cast<T*>(t.device().native_memory("kokkos", t.buffer()).handle);
}

/// A tensor over `shape` elements of `dtype` at `data` (memory of the
/// device's memory space the program owns, e.g. a View's data()), without a
/// copy; `keep_alive` (e.g. a copy of the View) is held while it lives.
inline Tensor tensor_over(std::shared_ptr<Device> d, void* data, Shape shape, DType dtype = DType::f32,
                          std::shared_ptr<const void> keep_alive = nullptr) {
    const std::size_t bytes = shape.elements() * dtype_size(dtype);
    return Tensor::over_native_memory(std::move(d), "kokkos", {reinterpret_cast<std::uint64_t>(data), 0, bytes},
                                      std::move(shape), dtype, std::move(keep_alive));
}

/// A stream of `d` whose work runs on the program's instance `space` (a
/// copy of the handle; the instance stays the program's). Space: d's
/// execution space.
template <class Space = ExecSpace>
std::unique_ptr<Stream> stream_over(Device& d, const Space& space) {
    require_space<Space>(d, "stream_over");
    return d.stream_over_native_queue("kokkos", reinterpret_cast<std::uint64_t>(&space));
}

}  // namespace kokkos
}  // namespace interop
}  // namespace accel
