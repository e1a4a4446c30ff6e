// The op front-end's one way to a device's kernels (a friend of Device).
// Internal to libaccel.
#pragma once

#include <accel/device.hpp>

#include <vector>

namespace accel {

struct KernelAccess {
    /// Looks up the kernel of (op, args.dtype, args.path) and calls it, or
    /// raises Unsupported naming all three and the device. Traced and
    /// checked when a trace or the shadow check is on (ops.cpp).
    static void run(Device& d, Op op, const KernelArgs& args);
    /// run()'s path when a trace or the shadow check is on (check.cpp).
    static void run_observed(Device& d, Op op, const KernelArgs& args, const Kernel& kernel);
    /// Blocking copies of raw operands on `s` (the check's snapshots).
    static std::vector<unsigned char> read(Device& d, DeviceHandle h, std::size_t bytes, Stream& s);
};

}  // namespace accel
