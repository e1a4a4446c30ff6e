// accel/diagnostics.hpp — benchmark probes: what accel-bench measures a
// device's limits with. Not ops: they compute nothing a program needs, and
// backends provide them through accel::Probes, apart from the op interface.
#pragma once

#include <accel/ops.hpp>

namespace accel {
namespace diagnostics {

/// Enqueues a kernel that does nothing (one block of one thread) on `stream`:
/// the runtime's bare launch, without accel's op front-end (accel-bench
/// compares it with a 1-element add to measure what accel adds per launch).
/// Throws InvalidArgument if the stream belongs to another device and
/// Unsupported where the device has no probes. Thread-safe as Device.
void launch_empty(Device& device, Stream& stream);

/// NMSE within which the probe's output matches reference::fma_throughput_value:
/// each a ← a·0.9999 + 1e-4 step rounds in float32 and the recurrence amplifies
/// rounding by up to 1/(1−0.9999) = 1e4, so relative error ~1e-3, NMSE ~1e-6;
/// 1e-5 still catches a missing or wrong iteration count.
inline constexpr double kFmaProbeNmse = 1e-5;

/// Peak-FMA probe (see Probes::fma_throughput): fills the f32 tensor y (any
/// shape) after `iterations` rounds and returns the FLOPs performed
/// (16 · iterations · elements). Geometry and stream from `o` as for ops
/// (default: the device's elementwise geometry). Throws InvalidArgument for a
/// default-constructed or non-f32 y, a stream of another device or a
/// geometry beyond the limits; Unsupported where the device has no probes.
double fma_throughput(Tensor& y, std::size_t iterations, const ops::Options& o = {});

}  // namespace diagnostics
}  // namespace accel
