// accel/reference.hpp — the float64 oracle for every op. Plain loops, no
// backend involved; tests and accel-bench compare backends against it.
#pragma once

#include <accel/device.hpp>
#include <accel/elementwise_math.hpp>

#include <cstddef>
#include <vector>

namespace accel {
namespace reference {

using Vec = std::vector<double>;
using FVec = std::vector<float>;

/// One element of each elementwise op, in float64: the op table's math
/// (accel/elementwise_math.hpp), what OpInfo::elementwise_reference points to.
namespace element = ::accel::elementwise_math;

/// Any elementwise op of the table with an oracle (OpInfo::elementwise_reference),
/// applied to `inputs` (as many as the op takes, of one length). Throws
/// InvalidArgument for an op without one, a wrong input count or unequal lengths.
Vec elementwise(Op op, const std::vector<FVec>& inputs);
/// The same on float64 inputs (f64 tensors, or any dtype widened).
Vec elementwise(Op op, const std::vector<Vec>& inputs);

/// c = a + b (a.size() == b.size()).
Vec add(const FVec& a, const FVec& b);
/// 1/(1+exp(-x)), stable form.
Vec sigmoid(const FVec& x);
Vec relu(const FVec& x);
Vec relu_backward(const FVec& dy, const FVec& x);
Vec sigmoid_backward(const FVec& dy, const FVec& y);
/// C[m,n] = op(A)·op(B) with A [m,k] (or [k,m] if ta), B [k,n] (or [n,k] if tb).
Vec matmul(const FVec& a, const FVec& b, std::size_t m, std::size_t n, std::size_t k, bool ta = false,
           bool tb = false);
/// matmul, dense, column_sum and bce_with_logits_backward on float64 inputs
/// (an f64 call's operands, which float32 would round).
Vec matmul(const Vec& a, const Vec& b, std::size_t m, std::size_t n, std::size_t k, bool ta = false, bool tb = false);
Vec dense(const Vec& x, const Vec& w, const Vec& bias, std::size_t batch, std::size_t in, std::size_t out,
          Activation act);
Vec column_sum(const Vec& x, std::size_t rows, std::size_t cols);
Vec bce_with_logits_backward(const Vec& z, const Vec& t, double scale);
/// y[batch,out] = act(x·Wᵀ + bias); bias empty = none.
Vec dense(const FVec& x, const FVec& w, const FVec& bias, std::size_t batch, std::size_t in, std::size_t out,
          Activation act);
/// y[c] = Σ_r x[r,c].
Vec column_sum(const FVec& x, std::size_t rows, std::size_t cols);
Vec bce_with_logits(const FVec& z, const FVec& t);
/// (sigmoid(z) - t) * scale.
Vec bce_with_logits_backward(const FVec& z, const FVec& t, double scale);
/// y = s·x (ops::scale; BabelStream's mul).
Vec scale(const Vec& x, double s);
/// a = b + s·c (ops::triad; BabelStream's triad). b.size() == c.size().
Vec triad(const Vec& b, const Vec& c, double s);
/// Σ a[i]·b[i] (ops::dot; BabelStream's dot), compensated (Neumaier) in
/// float64 so that it is far more exact than any device's f64 sum.
double dot(const Vec& a, const Vec& b);
/// Adam as in ops::adam_step, in float64; updates p, m, v in place.
void adam_step(Vec& p, const Vec& g, Vec& m, Vec& v, std::size_t step, double lr, double beta1, double beta2,
               double eps);
/// Per-element value of the fma_throughput probe (Probes::fma_throughput)
/// for work-item i in compute type `dtype`: f32 and f64 in closed form (the
/// recurrence's exact limit, within the probe's NMSE bound); f16 step by step,
/// each fma rounded once to half as the device does, and the sum in half.
/// Throws InvalidArgument for bf16.
double fma_throughput_value(std::size_t i, std::size_t iterations, DType dtype = DType::f32);
/// Every element of the matrix_throughput probe's output after `iterations`
/// rounds (Probes::matrix_throughput): 4 values of 8 tiles, chain j holding
/// j + iterations, summed: 112 + 32 · iterations.
double matrix_throughput_value(std::size_t iterations);

/// Normalized mean squared error Σ(got−ref)² / Σ ref² (ggml's test-backend-ops
/// measure). When Σ ref² == 0 it returns the plain mean squared error.
/// Returns +inf when a value of `got` is NaN or Inf, or the sizes differ.
double nmse(const FVec& got, const Vec& ref);
/// The same for results read back in double (f64 tensors, or any dtype via
/// Tensor::download_as<double>).
double nmse(const Vec& got, const Vec& ref);
/// Largest |got − ref|; +inf on NaN/Inf or a size mismatch.
double max_abs_error(const FVec& got, const Vec& ref);
double max_abs_error(const Vec& got, const Vec& ref);

}  // namespace reference
}  // namespace accel
