// How the op front-end runs a device's kernel (ops.cpp) and, when a trace or
// the shadow check is on, observes it (check.cpp). Internal to libaccel.
#pragma once

#include <accel/device.hpp>

#include <accel_internal/graph_capture.hpp>
#include <accel_internal/instrument.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace accel::detail {

/// Finds the kernel of (op, args.dtype, args.path) in d's KernelTable and
/// calls it, or raises Unsupported naming all three, the device and what
/// it runs instead. Traced and checked when a trace or the shadow check is on.
void run_kernel(Device& d, Op op, const KernelArgs& args);

/// Records the call run_kernel would make into the capture `c`: at each
/// replay, `kernel` runs on a copy of `args` whose stream is the replay's
/// (after the thread's ReplayUpdate, if one was open), traced and checked as
/// an eager call when a trace or the shadow check is on.
void record_kernel(Capture& c, Device& d, Op op, std::shared_ptr<const Kernel> kernel, const KernelArgs& args);

/// Sets args.geometry to d's default for `op` over a rows × cols output and,
/// for a tiled op on a device that states a tile layout, args.tile to that
/// layout (asked once; the geometry is built from it). Throws
/// InvalidArgument where the default exceeds the device's limits.
void default_launch(Device& d, Op op, KernelArgs& args, std::size_t rows, std::size_t cols);

/// Writes a call's identity into its trace event (accel/trace.hpp): dtype,
/// src_dtype (convert), path, shapes, activation (dense, bias_activation),
/// trans_a and trans_b (matmul, gemm), bias (dense, bias_activation: whether
/// it was given). For the kernel events and for the events of matmul and
/// dense that the front-end composes on the vendor path. Call only while
/// span.live(); throws what formatting throws (std::bad_alloc).
void trace_call(instrument::Span& span, Op op, const KernelArgs& args);

/// Dimensions as the trace's shapes write them: "[40,30]", "[7]" (no
/// blanks, unlike Shape::to_string). Thread-safe (pure).
std::string dims_text(const std::vector<std::size_t>& dims);

/// run_kernel()'s path when a trace or the shadow check is on (check.cpp).
void run_observed(Device& d, Op op, const KernelArgs& args, const Kernel& kernel);

}  // namespace accel::detail
