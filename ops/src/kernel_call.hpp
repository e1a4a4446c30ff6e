// How the op front-end runs a device's kernel (ops.cpp) and, when a trace or
// the shadow check is on, observes it (check.cpp). Internal to libaccel.
#pragma once

#include <accel/device.hpp>

namespace accel::detail {

/// Finds the kernel of (op, args.dtype, args.path) in d's KernelTable and
/// calls it, or raises Unsupported naming all three, the device and what
/// it runs instead. Traced and checked when a trace or the shadow check is on.
void run_kernel(Device& d, Op op, const KernelArgs& args);

/// Sets args.geometry to d's default for `op` over a rows × cols output and,
/// for a tiled op on a device that states a tile layout, args.tile to that
/// layout (asked once; the geometry is built from it). Throws
/// InvalidArgument where the default exceeds the device's limits.
void default_launch(Device& d, Op op, KernelArgs& args, std::size_t rows, std::size_t cols);

/// run_kernel()'s path when a trace or the shadow check is on (check.cpp).
void run_observed(Device& d, Op op, const KernelArgs& args, const Kernel& kernel);

}  // namespace accel::detail
