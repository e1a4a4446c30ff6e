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

/// NMSE within which the probe's output in `dtype` (f32, f64 or f16) matches
/// reference::fma_throughput_value: each a ← a·0.9999 + 1e-4 step rounds in
/// the dtype and the recurrence amplifies rounding by up to 1/(1−0.9999) = 1e4.
/// f32: relative error ~1e-3, NMSE ~1e-6, bound 1e-5 (still catches a missing
/// or wrong iteration count). f64: relative ~1e-12, NMSE ~1e-24, bound 1e-18
/// (catches a probe that computes in f32). f16: the reference rounds as the
/// device does, so only a double rounding (an fma computed in f32, then
/// rounded to half) differs, by an ulp (NMSE ~1e-7); bound 1e-4 (catches a
/// probe that computes in f32, whose chains do not stall where half's do).
constexpr double fma_probe_nmse(DType dtype) {
    return dtype == DType::f64 ? 1e-18 : dtype == DType::f16 ? 1e-4 : 1e-5;
}

/// Peak-FMA probe (see Probes::fma_throughput) in y's dtype, f32, f64 or f16
/// (half arithmetic): fills y (any shape) after `iterations` rounds and
/// returns the FLOPs performed (16 · iterations · elements). Geometry and
/// stream from `o` as for ops (default: the device's elementwise geometry).
/// Throws InvalidArgument for a default-constructed y, a bf16 y (bf16 computes
/// in f32: probe f32), a stream of another device or a geometry beyond the
/// limits; Unsupported where the device has no probes, or none in y's dtype
/// (f16: where the device has no half arithmetic).
double fma_throughput(Tensor& y, std::size_t iterations, const ops::Options& o = {});

/// Matrix-engine probe (see Probes::matrix_throughput) on `operands` (f16 or
/// bf16) with f32 accumulators: fills y (f32, any shape, a multiple of 32
/// elements: one group of 32 lanes per 32) after `iterations` rounds and
/// returns the FLOPs performed (8 · 4096 · iterations · elements / 32). Runs
/// on `o.stream` (default: the device's); the device chooses the geometry
/// (o.geometry must be empty). Throws InvalidArgument for a default-constructed
/// or non-f32 y, a size that is not a multiple of 32, operands other than
/// f16/bf16, a geometry, or a stream of another device; Unsupported where the
/// device has no matrix engine or no probe of it.
double matrix_throughput(Tensor& y, DType operands, std::size_t iterations, const ops::Options& o = {});

/// What `device`'s matmul and dense compute with in `dtype` on `path`
/// (Probes::gemm_compute): the FMA units of a width or the matrix engine —
/// the ceiling their benchmark rows are measured against. A device without
/// probes computes as accel's native kernels do (FMA in f64 for f64, f32
/// otherwise). Never throws; thread-safe as Device.
GemmCompute gemm_compute(Device& device, DType dtype, OpPath path) noexcept;

}  // namespace diagnostics
}  // namespace accel
