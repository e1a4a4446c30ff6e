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

/// NMSE within which the probe's output in `dtype` (f32 or f64) matches
/// reference::fma_throughput_value: each a ← a·0.9999 + 1e-4 step rounds in
/// the dtype and the recurrence amplifies rounding by up to 1/(1−0.9999) = 1e4.
/// f32: relative error ~1e-3, NMSE ~1e-6, bound 1e-5 (still catches a missing
/// or wrong iteration count). f64: relative ~1e-12, NMSE ~1e-24, bound 1e-18
/// (catches a probe that computes in f32).
constexpr double fma_probe_nmse(DType dtype) { return dtype == DType::f64 ? 1e-18 : 1e-5; }

/// Peak-FMA probe (see Probes::fma_throughput) in y's dtype, f32 or f64:
/// fills y (any shape) after `iterations` rounds and returns the FLOPs
/// performed (16 · iterations · elements). Geometry and stream from `o` as for
/// ops (default: the device's elementwise geometry). Throws InvalidArgument
/// for a default-constructed y, a 16-bit y (they compute in f32: probe f32),
/// a stream of another device or a geometry beyond the limits; Unsupported
/// where the device has no probes, or none in y's dtype.
double fma_throughput(Tensor& y, std::size_t iterations, const ops::Options& o = {});

}  // namespace diagnostics
}  // namespace accel
