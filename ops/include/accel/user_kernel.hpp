// accel/user_kernel.hpp — launching a program's own kernel (KernelSource,
// accel/kernel_source.hpp) on whichever device and stream, with accel's
// launch geometry and tensors: built once per device on first use, its
// geometry checked against the device's limits (check_geometry), its
// arguments against the signature, traced (ACCEL_TRACE) like an op.
//
//     accel::KernelSource src;
//     src.name = "vadd";
//     src.params = {KernelParam::in("a"), KernelParam::in("b"), KernelParam::out("c"),
//                   KernelParam::scalar("n", ParamType::u32)};
//     src.code["opencl"] = "__kernel void vadd(__global const float* a, ...) {...}";
//     accel::UserKernel vadd(src);
//     vadd.launch(geometry_1d(n, 256, dev->info().limits), {a, b, c, n});
#pragma once

#include <accel/kernel_source.hpp>
#include <accel/tensor.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

namespace accel {

/// One argument of a launch: a tensor or a scalar. An integer converts to
/// any integer parameter it fits (a size_t n to a u32 parameter, checked);
/// a float to f32 or f64; a double to f64 only (pass a float for f32).
class KernelArg {
public:
    /// A tensor (read or written as the signature says); must outlive the launch's enqueue.
    KernelArg(const Tensor& t) : tensor_(&t) {}  // NOLINT: implicit by design
    /// An integer of any type.
    template <class T, std::enable_if_t<std::is_integral<T>::value && !std::is_same<T, bool>::value, int> = 0>
    KernelArg(T v) : kind_(std::is_signed<T>::value ? Kind::signed_int : Kind::unsigned_int) {  // NOLINT
        if (std::is_signed<T>::value)
            i_ = static_cast<std::int64_t>(v);
        else
            u_ = static_cast<std::uint64_t>(v);
    }
    /// A float: for an f32 or f64 parameter.
    KernelArg(float v) : kind_(Kind::f32), d_(v) {}   // NOLINT
    /// A double: for an f64 parameter only.
    KernelArg(double v) : kind_(Kind::f64), d_(v) {}  // NOLINT

    /// What the argument holds.
    enum class Kind { tensor, signed_int, unsigned_int, f32, f64 };
    Kind kind() const noexcept { return kind_; }
    /// The tensor (Kind::tensor), else null.
    const Tensor* tensor() const noexcept { return tensor_; }
    /// The value of a Kind::signed_int.
    std::int64_t signed_value() const noexcept { return i_; }
    /// The value of a Kind::unsigned_int.
    std::uint64_t unsigned_value() const noexcept { return u_; }
    /// The value of a Kind::f32 or Kind::f64.
    double floating_value() const noexcept { return d_; }

private:
    Kind kind_ = Kind::tensor;
    const Tensor* tensor_ = nullptr;
    std::int64_t i_ = 0;
    std::uint64_t u_ = 0;
    double d_ = 0;
};

/// A program's own kernel, launchable on any device whose backend it has
/// code for. Thread-safe: any number of threads may launch one UserKernel
/// at once, on one device or several (each device builds it once).
class UserKernel {
public:
    /// Takes the kernel; checks its name and signature (InvalidArgument for
    /// an empty name, a parameter without a name or two of one name).
    explicit UserKernel(KernelSource source);

    /// Builds the kernel for `device` now (otherwise its first launch there
    /// does). Throws as Device::build_kernel.
    void build(Device& device);

    /// Enqueues one launch on `stream` with `geometry` (CUDA terms:
    /// LaunchGeometry) and `args` in signature order; returns before the
    /// kernel ran (synchronize the stream). Throws InvalidArgument, naming
    /// the parameter and what it wants, for a wrong number of arguments, a
    /// tensor where a scalar is declared or the reverse, a tensor of another
    /// dtype or device, an integer that does not fit its parameter; for a
    /// geometry outside the device's limits (check_geometry); and as build().
    void launch(const LaunchGeometry& geometry, const std::vector<KernelArg>& args, Stream& stream);

    /// The same on the default stream of the first tensor argument's device;
    /// InvalidArgument when no argument is a tensor (pass a stream).
    void launch(const LaunchGeometry& geometry, const std::vector<KernelArg>& args);

    const KernelSource& source() const noexcept { return source_; }

private:
    std::shared_ptr<BuiltKernel> built_for(Device& device);
    std::vector<ResolvedArg> resolve(const std::vector<KernelArg>& args, const Device& device) const;

    KernelSource source_;
    std::mutex mutex_;
    /// Built per device; a weak_ptr so a device that went away is noticed
    /// (its address may be reused by another).
    std::vector<std::pair<std::weak_ptr<Device>, std::shared_ptr<BuiltKernel>>> built_;
};

}  // namespace accel
