// Gradient checks: every backward op against central finite differences of
// its forward op, computed in float64 on the device under test (as ggml's
// test-backend-ops "grad" mode and PyTorch's torch.autograd.gradcheck do).
// The other cases compare each backward op with accel's own float64 formula
// (accel::reference), so a formula wrong in the oracle and the kernels alike
// passes them; here the only reference is the forward op.
//
// Method. For a scalar L(p) — L = Σ dy ⊙ f(p) for a random dy, or the loss
// itself — a random direction v and a step h, the central difference
//     D = (L(p + h·v) − L(p − h·v)) / 2h
// is compared with ⟨g, v⟩, g the backward op's gradient. Its error is
//     |D − ⟨∇L, v⟩| ≤ h²/6 · T + (E₊ + E₋) / 2h + R
// (Nocedal & Wright, Numerical Optimization, 2nd ed., §8.1: the central
// difference, its error and the step that balances truncation and rounding;
// Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §1.14):
// the truncation, with T ≥ |d³L(p + s·v)/ds³| for |s| ≤ h, from bounds of
// the activations' derivatives over ℝ (below) and the data; the rounding,
// with E± bounds of the error of L at p ± h·v; and R = u·Σ|g_i|(|p_i| +
// h|v_i|)/h, p ± h·v rounded to f64 (u = 2⁻⁵³).
// E: every forward op passes its op table threshold in f64 (the every-op
// case checks it), NMSE ≤ τ, so its error e has ‖e‖ ≤ √τ·‖f‖ and
// |Σ dy·e| ≤ ‖dy‖·√τ·‖f‖ (Cauchy–Schwarz); the host's sum adds γ_n·Σ|dy·f|
// (Higham §4.2). The backward op's own error adds √τ_b·‖g‖·‖v‖. h is the
// step that balances truncation and rounding, h = (3E/T)^(1/3) (the minimum
// of h²T/6 + E/h; about 1e-4 here), kept within [2⁻³⁰, 2⁻⁴] and, for relu,
// short of the kink: no pre-activation that counts crosses 0. A case passes
// when the difference is at most twice that bound: typically 1e-7 of |⟨g, v⟩|
// in f64 (the error measured stays under a third of the bound: its
// truncation part), where a wrong formula misses by far more: a factor left
// out by O(1), the other gelu form's derivative by 5e-4.
//
// Elementwise ops are checked per element: with v = 1 everywhere, f(x ± h)
// gives every element's central difference in one pair of calls, judged by
// the same bound in the 2-norm over the elements. Layers and the MLP are
// checked along two random directions per parameter (x, W, b), one at a
// time, so that a failure names the gradient.
//
// Only f64: f32, f16 and bf16 kernels are compared with the oracle in every
// dtype by the every-op case, and the oracle's backward formulas are checked
// here against central differences of its forward ops; a wrong formula in
// another dtype fails one of the two. A device without f64 (OpenCL without
// cl_khr_fp64) reports these cases skipped, never passed.
#include "support/check.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

using namespace accel;
using namespace accel_test;

namespace {

using Vec = std::vector<double>;

constexpr double kUnitRoundoff = 0x1p-53;        // f64
constexpr double kSafety = 2;                    // the bound is already a worst case
constexpr double kMinStep = 0x1p-30, kMaxStep = 0x1p-4;
constexpr int kDirections = 2;                   // random directions per parameter

// Upper bounds over ℝ of |f'|, |f''| and |f'''| of an activation (from its
// closed-form derivatives, maximized on a grid of step 6e-5 over [−12, 12]
// and rounded up). relu's hold away from its kink at 0.
struct Derivatives {
    double d1, d2, d3;
};

Derivatives derivatives(Activation act) {
    switch (act) {
        case Activation::none:
        case Activation::relu: return {1, 0, 0};
        case Activation::sigmoid: return {0.25, 0.0963, 0.125};  // σ' ≤ 1/4, σ'' ≤ 1/(6√3), σ''' ≤ 1/8
        case Activation::gelu:                                    // gelu' ≤ 1.129, gelu'' = φ·(2 − x²) ≤ 0.798,
        case Activation::gelu_tanh: return {1.13, 0.8, 0.78};     // gelu''' = xφ·(x² − 4) ≤ 0.779; tanh form alike
    }
    return {0, 0, 0};
}

// ℓ(z) = bce_with_logits(z, t) in z: ℓ' = σ(z) − t, ℓ'' = σ', ℓ''' = σ''.
constexpr Derivatives kLoss{1, 0.25, 0.0963};

// The 2-norm, the inner product and Σ|a_i·b_i|, summed in f64.
double norm(const Vec& v) {
    double s = 0;
    for (double x : v) s += x * x;
    return std::sqrt(s);
}

double dot(const Vec& a, const Vec& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

double dot_abs(const Vec& a, const Vec& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += std::fabs(a[i] * b[i]);
    return s;
}

// γ_n = n·u/(1 − n·u): the relative error bound of a sum of n terms (Higham §3.1).
double gamma(std::size_t n) { return double(n) * kUnitRoundoff / (1 - double(n) * kUnitRoundoff); }

// p + h·v, each element rounded to f64.
Vec moved(const Vec& p, double h, const Vec& v) {
    Vec q(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) q[i] = p[i] + h * v[i];
    return q;
}

// n values uniform in [lo, hi), in full double precision.
Vec uniform64(std::mt19937_64& g, std::size_t n, double lo, double hi) {
    std::uniform_real_distribution<double> d(lo, hi);
    Vec v(n);
    for (double& x : v) x = d(g);
    return v;
}

// The step that balances truncation h²T/6 and rounding E/h, at least
// kMinStep, at most kMaxStep and `limit` (a kink's distance comes first).
double step_for(double rounding, double third_derivative, double limit) {
    const double top = std::min(kMaxStep, limit);
    if (!(third_derivative > 0)) return top;
    return std::min(top, std::max(kMinStep, std::cbrt(3 * rounding / third_derivative)));
}

// √τ of `op` in f64: the relative 2-norm error its threshold allows.
double root_threshold(Op op) { return std::sqrt(threshold(op, DType::f64)); }

// An f64 tensor of shape s holding v, on the device under test.
Tensor put(const Vec& v, Shape s) { return Tensor::from_host(device(), std::move(s), v); }

// Whether the device runs every op of `ops` in f64 on the native path; when
// not, says which and why, and the case checks nothing (reported skipped).
bool runs_in_f64(std::initializer_list<Op> ops) {
    for (Op op : ops) {
        const std::string why = device()->kernel_table().unsupported_reason(op, DType::f64, OpPath::native);
        if (!why.empty()) {
            MESSAGE("skipped: " << std::string(op_name(op)) << " in f64 does not run on " << device()->selector()
                                << ": " << why << " (the gradient check evaluates the forward ops in f64)");
            return false;
        }
    }
    return true;
}

// The backward op of an activation's derivative (Op::dense for none: no elementwise op).
Op backward_op(Activation act) {
    switch (act) {
        case Activation::relu: return Op::relu_backward;
        case Activation::sigmoid: return Op::sigmoid_backward;
        case Activation::gelu: return Op::gelu_backward;
        case Activation::gelu_tanh: return Op::gelu_tanh_backward;
        case Activation::none: break;
    }
    return Op::dense;
}

constexpr Activation kActivations[] = {Activation::none, Activation::relu, Activation::sigmoid, Activation::gelu,
                                       Activation::gelu_tanh};

// Whether the run checks the layers with activation `act` (accel-conformance
// --ops): when it checks one of `ops`, or act's backward op.
bool checks_activation(Activation act, std::initializer_list<Op> ops) {
    return selected(backward_op(act)) || std::any_of(ops.begin(), ops.end(), [](Op op) { return selected(op); });
}

// ---- per element -----------------------------------------------------------

// An elementwise forward op and its backward op, dx = dy·f'(x), as one check
// runs them: on the device in f64, or the oracle's.
struct Elementwise {
    std::string forward_name, backward_name;
    std::function<Vec(const Vec& x)> forward;
    /// dx from dy, x and y = f(x) (sigmoid_backward takes y, the others x).
    std::function<Vec(const Vec& dy, const Vec& x, const Vec& y)> backward;
    double forward_error, backward_error;  ///< relative 2-norm errors allowed (√τ)
    Derivatives bounds;
    double min_abs_x = 0;  ///< inputs kept this far from a kink at 0 (relu), and the step shorter
    bool given_output = false;
};

// An elementwise op of the table run on the device in f64 through ops::run
// (the kernel ops::relu, ops::relu_backward, ... call), or by the oracle.
Vec run_elementwise(Op op, const std::vector<Vec>& inputs, bool on_device) {
    if (!on_device) return reference::elementwise(op, inputs);
    const std::size_t n = inputs.at(0).size();
    std::vector<Tensor> in;
    for (const Vec& v : inputs) in.push_back(put(v, {n}));
    std::vector<const Tensor*> pointers;
    for (const Tensor& t : in) pointers.push_back(&t);
    Tensor out = put(Vec(n, std::numeric_limits<double>::quiet_NaN()), {n});
    ops::run(op, pointers, {&out});
    return out.download_as<double>();
}

// The check of activation `act`'s backward op against its forward op.
Elementwise activation_check(Activation act, bool on_device) {
    const Op forward = act == Activation::relu      ? Op::relu
                       : act == Activation::sigmoid ? Op::sigmoid
                       : act == Activation::gelu    ? Op::gelu
                                                    : Op::gelu_tanh;
    const Op backward = backward_op(act);
    const bool given_output = act == Activation::sigmoid;
    Elementwise e;
    e.forward_name = op_name(forward);
    e.backward_name = op_name(backward);
    e.forward = [=](const Vec& x) { return run_elementwise(forward, {x}, on_device); };
    e.backward = [=](const Vec& dy, const Vec& x, const Vec& y) {
        return run_elementwise(backward, {dy, given_output ? y : x}, on_device);
    };
    e.forward_error = root_threshold(forward);
    e.backward_error = root_threshold(backward);
    e.bounds = derivatives(act);
    e.min_abs_x = act == Activation::relu ? 0.25 : 0;
    e.given_output = given_output;
    return e;
}

// The backward op against every element's central difference of the forward
// (see the file comment; v = 1 in every element, bound in the 2-norm), at x
// uniform in [−5, 5] (|x| ≥ min_abs_x) and dy in [−1, 1].
void check_per_element(const Elementwise& e, const std::string& where, std::mt19937_64& g) {
    const std::size_t n = 257;
    Vec x = uniform64(g, n, -5, 5);
    const Vec dy = uniform64(g, n, -1, 1);
    if (e.min_abs_x > 0)  // |x| in [min_abs_x, 5]: no element within a step of the kink
        for (double& v : x) v = std::copysign(e.min_abs_x + std::fabs(v) * (5 - e.min_abs_x) / 5, v);
    const Vec y = e.forward(x);
    const Vec grad = e.backward(dy, x, y);
    double max_dy = 0;
    for (double v : dy) max_dy = std::max(max_dy, std::fabs(v));
    // |dy_i·e_i| ≤ max|dy|·|e_i|, ‖e‖ ≤ √τ‖f‖; 2u: the host's subtraction and scaling.
    const double forward_error = max_dy * (e.forward_error + 2 * kUnitRoundoff);
    const double h = step_for(forward_error * norm(y), e.bounds.d3 * norm(dy),
                              e.min_abs_x > 0 ? e.min_abs_x / 2 : kMaxStep);
    const Vec up = e.forward(moved(x, h, Vec(n, 1.0))), down = e.forward(moved(x, -h, Vec(n, 1.0)));
    Vec central(n), input_rounding(n), diff(n);
    for (std::size_t i = 0; i < n; ++i) {
        central[i] = dy[i] * (up[i] - down[i]) / (2 * h);
        input_rounding[i] = dy[i] * (std::fabs(x[i]) + h);
        diff[i] = grad[i] - central[i];
    }
    double bound = h * h / 6 * e.bounds.d3 * norm(dy) + forward_error * (norm(up) + norm(down)) / (2 * h) +
                   e.bounds.d1 * kUnitRoundoff * norm(input_rounding) / h + e.backward_error * norm(grad) +
                   3 * kUnitRoundoff * norm(central);
    if (e.given_output) bound += max_dy * e.forward_error * norm(y);  // y's own error; |d(y(1−y))/dy| ≤ 1
    std::size_t worst = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (!(std::fabs(diff[i]) <= std::fabs(diff[worst]))) worst = i;
    const double error = norm(diff);
    CHECK_MESSAGE(error <= kSafety * bound,
                  e.backward_name << " on " << where << " disagrees with central differences of " << e.forward_name
                                  << ": ‖dx − D‖ = " << error << " of ‖dx‖ = " << norm(grad) << ", allowed "
                                  << kSafety * bound << " (h = " << h << "); worst at x = " << x[worst]
                                  << ", dy = " << dy[worst] << ": dx = " << grad[worst] << ", central difference "
                                  << central[worst] << "; seed " << seed() << " (rerun with ACCEL_TEST_SEED="
                                  << seed() << ")");
}

// The per-element case of `act`'s backward op on the device under test
// (skipped where the device has no f64).
void check_activation_on_device(Activation act, std::uint64_t salt) {
    const Elementwise e = activation_check(act, true);
    if (!runs_in_f64({find_op(e.forward_name)->op, backward_op(act)})) return;
    auto g = rng(salt);
    check_per_element(e, device()->selector(), g);
}

// ---- along directions ----------------------------------------------------

// L at some parameter values, and a bound of its evaluation's error (E).
struct Evaluation {
    double value, error;
};

// For a direction v: a bound T of |d³L/ds³| within a step, and the longest
// step allowed (relu's kink; kMaxStep where there is none).
struct AlongDirection {
    double third_derivative, step_limit;
};

// ⟨g, v⟩ against the central difference of `loss` at p, along kDirections
// fresh random directions (see the file comment). `backward_error`: the
// relative 2-norm error of g the suite allows.
void check_directions(const std::string& what, const std::function<Evaluation(const Vec&)>& loss, const Vec& p,
                      const Vec& grad, double backward_error, const std::function<AlongDirection(const Vec&)>& along,
                      std::mt19937_64& g) {
    const double base_error = loss(p).error;
    for (int k = 0; k < kDirections; ++k) {
        const Vec v = uniform64(g, p.size(), -1, 1);
        const AlongDirection a = along(v);
        const double h = step_for(base_error, a.third_derivative, a.step_limit);
        const Evaluation up = loss(moved(p, h, v)), down = loss(moved(p, -h, v));
        const double central = (up.value - down.value) / (2 * h), derivative = dot(grad, v);
        double input_rounding = 0;
        for (std::size_t i = 0; i < p.size(); ++i)
            input_rounding += std::fabs(grad[i]) * (std::fabs(p[i]) + h * std::fabs(v[i]));
        const double bound = h * h / 6 * a.third_derivative + (up.error + down.error) / (2 * h) +
                             kUnitRoundoff * input_rounding / h + backward_error * norm(grad) * norm(v) +
                             gamma(p.size()) * dot_abs(grad, v) + 3 * kUnitRoundoff * std::fabs(central);
        CHECK_MESSAGE(std::fabs(derivative - central) <= kSafety * bound,
                      what << " on " << device()->selector() << " disagrees with central differences: ⟨g, v⟩ = "
                           << derivative << ", (L(p + hv) − L(p − hv))/2h = " << central << " (difference "
                           << std::fabs(derivative - central) << ", allowed " << kSafety * bound << ", h = " << h
                           << "); seed " << seed() << " (rerun with ACCEL_TEST_SEED=" << seed() << ")");
    }
}

// Σ dy ⊙ y with its error bound: y from a forward op that passes threshold τ
// (‖e‖ ≤ √τ‖y‖), summed on the host.
Evaluation weighted_sum(const Vec& dy, const Vec& y, double root_tau) {
    return {dot(dy, y), root_tau * norm(dy) * norm(y) + gamma(y.size()) * dot_abs(dy, y)};
}

// Σ_i w_i·|Δ_i|³ (w: |dy|, or 1), the part of T a linear change Δ of an
// activation's input gives: d³/ds³ f(z + sΔ) = f'''·Δ³.
double cubed(const Vec& weights, const Vec& change) {
    double s = 0;
    for (std::size_t i = 0; i < change.size(); ++i) s += std::fabs(weights[i]) * std::pow(std::fabs(change[i]), 3);
    return s;
}

// The longest step for which no pre-activation z_i with a nonzero weight
// crosses relu's kink: h·|Δ_i| ≤ |z_i|/2.
double kink_limit(const Vec& z, const Vec& change, const Vec& weights) {
    double limit = kMaxStep;
    for (std::size_t i = 0; i < z.size(); ++i)
        if (weights[i] != 0 && change[i] != 0) limit = std::min(limit, std::fabs(z[i]) / (2 * std::fabs(change[i])));
    return limit;
}

// Δ[rows, out] of b's direction v[out] broadcast over rows.
Vec broadcast(const Vec& v, std::size_t rows) {
    Vec out;
    for (std::size_t r = 0; r < rows; ++r) out.insert(out.end(), v.begin(), v.end());
    return out;
}

}  // namespace

TEST_CASE("relu_backward agrees with central differences of relu in f64") {
    check_activation_on_device(Activation::relu, 40);
}

TEST_CASE("sigmoid_backward, given sigmoid's output, agrees with central differences of sigmoid in f64") {
    check_activation_on_device(Activation::sigmoid, 41);
}

TEST_CASE("gelu_backward agrees with central differences of gelu in f64") {
    check_activation_on_device(Activation::gelu, 42);
}

TEST_CASE("gelu_tanh_backward agrees with central differences of gelu_tanh in f64") {
    check_activation_on_device(Activation::gelu_tanh, 43);
}

TEST_CASE("the float64 oracle's relu_backward, sigmoid_backward, gelu_backward, gelu_tanh_backward and "
          "bce_with_logits_backward agree with central differences of its forward ops in f64") {
    // accel::reference alone, no device: the formulas every dtype's kernels
    // are compared with by the every-op case.
    auto g = rng(44);
    for (Activation act : {Activation::relu, Activation::sigmoid, Activation::gelu, Activation::gelu_tanh})
        if (selected(backward_op(act))) check_per_element(activation_check(act, false), "the oracle", g);
    if (!selected(Op::bce_with_logits_backward)) return;
    // The loss in z with t fixed, per element; dx = dy·dℓ/dz, dℓ/dz the backward at scale 1.
    const Vec t = uniform64(g, 257, 0, 1);
    Elementwise bce;
    bce.forward_name = "bce_with_logits";
    bce.backward_name = "bce_with_logits_backward";
    bce.forward = [&](const Vec& z) {
        Vec l(z.size());
        for (std::size_t i = 0; i < z.size(); ++i) l[i] = reference::element::bce_with_logits(z[i], t[i]);
        return l;
    };
    bce.backward = [&](const Vec& dy, const Vec& z, const Vec&) {
        Vec dz = reference::bce_with_logits_backward(z, t, 1.0);
        for (std::size_t i = 0; i < dz.size(); ++i) dz[i] *= dy[i];
        return dz;
    };
    bce.forward_error = root_threshold(Op::bce_with_logits);
    bce.backward_error = root_threshold(Op::bce_with_logits_backward) + kUnitRoundoff;
    bce.bounds = kLoss;
    check_per_element(bce, "the oracle", g);
}

TEST_CASE("bce_with_logits_backward and its scaled form agree with central differences of the bce_with_logits mean "
          "loss in f64") {
    if (!runs_in_f64({Op::bce_with_logits, Op::bce_with_logits_backward, Op::column_sum})) return;
    auto g = rng(45);
    const std::size_t n = 257;
    const Vec z = uniform64(g, n, -6, 6);
    Vec t = uniform64(g, n, 0, 1);  // soft targets, and hard ones in every other element
    for (std::size_t i = 0; i < n; i += 2) t[i] = t[i] < 0.5 ? 0 : 1;
    const Tensor T = put(t, {n, 1});
    // Σ ℓ on the device: the elementwise loss, then column_sum over [n, 1], as ops::bce_with_logits_loss sums.
    auto sum = [&](const Vec& at) {
        Tensor l(device(), {n, 1}, DType::f64), s(device(), {1}, DType::f64);
        ops::bce_with_logits(put(at, {n, 1}), T, l);
        ops::column_sum(l, s);
        const Vec losses = l.download_as<double>();
        const double total = s.download_as<double>()[0];
        // ‖e‖ ≤ √τ‖ℓ‖ summed (|Σe| ≤ √n‖e‖), then column_sum's own error relative to its sum
        const double error = root_threshold(Op::bce_with_logits) * norm(losses) * std::sqrt(double(n)) +
                             root_threshold(Op::column_sum) * std::fabs(total);
        return Evaluation{total, error};
    };
    const float scale = 1.0f / float(3 * n);  // a shard of a batch of 3n elements
    Tensor dz(device(), {n, 1}, DType::f64), dz_scaled(device(), {n, 1}, DType::f64);
    ops::bce_with_logits_backward(put(z, {n, 1}), T, dz);
    ops::bce_with_logits_backward_scaled(put(z, {n, 1}), T, dz_scaled, scale);
    const double tau = root_threshold(Op::bce_with_logits_backward);
    for (const auto& [what, weight, grad] : {std::make_tuple("bce_with_logits_backward (mean loss)", 1.0 / double(n),
                                                            dz.download_as<double>()),
                                            std::make_tuple("bce_with_logits_backward_scaled (scale 1/(3n))",
                                                            double(scale), dz_scaled.download_as<double>())}) {
        const double w = weight;
        check_directions(
            what,
            [&](const Vec& at) {
                const Evaluation s = sum(at);
                return Evaluation{w * s.value, w * s.error + kUnitRoundoff * std::fabs(w * s.value)};
            },
            z, grad, tau, [&](const Vec& v) { return AlongDirection{w * kLoss.d3 * cubed(Vec(n, 1.0), v), kMaxStep}; },
            g);
    }
}

TEST_CASE("dense_backward agrees with central differences of dense for each activation (relu_backward, "
          "sigmoid_backward, gelu_backward, gelu_tanh_backward), with and without bias, in f64") {
    if (!runs_in_f64({Op::dense, Op::matmul, Op::column_sum, Op::relu_backward, Op::sigmoid_backward,
                      Op::gelu_backward, Op::gelu_tanh_backward}))
        return;
    auto g = rng(46);
    const std::size_t batch = 6, in = 5, out = 4;
    for (Activation act : kActivations) {
        if (!checks_activation(act, {Op::dense})) continue;
        for (bool with_bias : {true, false}) {
            const std::string layer =
                std::string(" (") + activation_name(act) + (with_bias ? ", with bias)" : ", without bias)");
            const Derivatives d = derivatives(act);
            const Vec x = uniform64(g, batch * in, -2, 2), w = uniform64(g, out * in, -1, 1);
            const Vec b = with_bias ? uniform64(g, out, -1, 1) : Vec{};
            Vec dy = uniform64(g, batch * out, -1, 1);
            const Vec z = reference::dense(x, w, b, batch, in, out, Activation::none);
            if (act == Activation::relu)  // pre-activations near the kink do not count: no step crosses it
                for (std::size_t i = 0; i < z.size(); ++i)
                    if (std::fabs(z[i]) < 0.1) dy[i] = 0;
            auto forward = [&](const Vec& xs, const Vec& ws, const Vec& bs) {
                Tensor y(device(), {batch, out}, DType::f64);
                const Tensor bias_at = with_bias ? put(bs, {out}) : Tensor();
                ops::dense(put(xs, {batch, in}), put(ws, {out, in}),
                           with_bias ? OptionalTensor(bias_at) : std::nullopt, y, act);
                return weighted_sum(dy, y.download_as<double>(), root_threshold(Op::dense));
            };
            // The backward as a training step calls it: y and the pre-activation from the forward.
            const Tensor X = put(x, {batch, in}), W = put(w, {out, in}), DY = put(dy, {batch, out});
            const Tensor B = with_bias ? put(b, {out}) : Tensor();
            const OptionalTensor bias = with_bias ? OptionalTensor(B) : std::nullopt;
            Tensor Y(device(), {batch, out}, DType::f64), Z(device(), {batch, out}, DType::f64);
            ops::dense(X, W, bias, Y, act);
            ops::dense(X, W, bias, Z, Activation::none);
            Tensor DX(device(), {batch, in}, DType::f64), DW(device(), {out, in}, DType::f64),
                DB(device(), {out}, DType::f64);
            ops::dense_backward(X, W, Y, DY, act, &DX, DW, with_bias ? &DB : nullptr, {}, Z);
            // How the pre-activation moves along each parameter's direction; T and relu's limit from it.
            auto along = [&](const Vec& change) {
                return AlongDirection{d.d3 * cubed(dy, change),
                                      act == Activation::relu ? kink_limit(z, change, dy) : kMaxStep};
            };
            const double backward_error = root_threshold(Op::matmul);
            check_directions(
                "dense_backward dx" + layer, [&](const Vec& p) { return forward(p, w, b); }, x,
                DX.download_as<double>(), backward_error,
                [&](const Vec& v) { return along(reference::dense(v, w, {}, batch, in, out, Activation::none)); }, g);
            check_directions(
                "dense_backward dW" + layer, [&](const Vec& p) { return forward(x, p, b); }, w,
                DW.download_as<double>(), backward_error,
                [&](const Vec& v) { return along(reference::dense(x, v, {}, batch, in, out, Activation::none)); }, g);
            if (with_bias)
                check_directions(
                    "dense_backward db" + layer, [&](const Vec& p) { return forward(x, w, p); }, b,
                    DB.download_as<double>(), backward_error, [&](const Vec& v) { return along(broadcast(v, batch)); },
                    g);
        }
    }
}

TEST_CASE("an MLP training step's gradients agree with central differences of its loss: dense, dense_backward and "
          "bce_with_logits_backward for each hidden activation (relu_backward, sigmoid_backward, gelu_backward, "
          "gelu_tanh_backward) in f64") {
    if (!runs_in_f64({Op::dense, Op::matmul, Op::column_sum, Op::bce_with_logits, Op::bce_with_logits_backward,
                      Op::relu_backward, Op::sigmoid_backward, Op::gelu_backward, Op::gelu_tanh_backward}))
        return;
    // x[batch, in] → dense(W1, b1, act) → h[batch, hidden] → dense(W2, b2) → z[batch, 1] →
    // mean bce_with_logits against t: the gradients of W1, b1, W2, b2 from the backward ops
    // chained as examples/mlp_train's training step chains them.
    auto g = rng(47);
    const std::size_t batch = 8, in = 4, hidden = 6;
    for (Activation act : kActivations) {
        if (!checks_activation(act, {Op::dense, Op::bce_with_logits, Op::bce_with_logits_backward})) continue;
        const std::string net = std::string(" (MLP, hidden ") + activation_name(act) + ")";
        const Derivatives d = derivatives(act);
        const Vec x = uniform64(g, batch * in, -2, 2), t = uniform64(g, batch, 0, 1);
        const Vec w1 = uniform64(g, hidden * in, -1, 1), b1 = uniform64(g, hidden, -1, 1);
        const Vec w2 = uniform64(g, hidden, -1, 1), b2 = uniform64(g, 1, -1, 1);
        const Tensor X = put(x, {batch, in}), T = put(t, {batch, 1});
        // The mean loss on the device, and its error: each layer's output within √τ_dense of its norm, the
        // first's carried to z by W2 (‖δz‖ ≤ ‖W2‖‖δh‖), |ℓ'| ≤ 1; the loss within √τ_bce; the sum within √τ_sum.
        auto loss = [&](const Vec& w1s, const Vec& b1s, const Vec& w2s, const Vec& b2s) {
            Tensor h(device(), {batch, hidden}, DType::f64), z(device(), {batch, 1}, DType::f64);
            Tensor l(device(), {batch, 1}, DType::f64), s(device(), {1}, DType::f64);
            const Tensor b1_at = put(b1s, {hidden}), b2_at = put(b2s, {1});
            ops::dense(X, put(w1s, {hidden, in}), b1_at, h, act);
            ops::dense(h, put(w2s, {1, hidden}), b2_at, z, Activation::none);
            ops::bce_with_logits(z, T, l);
            ops::column_sum(l, s);
            const double mean = s.download_as<double>()[0] / double(batch);
            const double z_error =
                root_threshold(Op::dense) * (norm(z.download_as<double>()) + norm(w2s) * norm(h.download_as<double>()));
            const double error = (root_threshold(Op::bce_with_logits) * norm(l.download_as<double>()) + z_error) /
                                     std::sqrt(double(batch)) +
                                 (root_threshold(Op::column_sum) + kUnitRoundoff) * std::fabs(mean);
            return Evaluation{mean, error};
        };
        // The training step: forward keeping z1 (gelu's derivative needs it), then backward.
        const Tensor W1 = put(w1, {hidden, in}), B1 = put(b1, {hidden}), W2 = put(w2, {1, hidden}), B2 = put(b2, {1});
        Tensor Z1(device(), {batch, hidden}, DType::f64), H(device(), {batch, hidden}, DType::f64);
        Tensor Z2(device(), {batch, 1}, DType::f64), DZ2(device(), {batch, 1}, DType::f64);
        Tensor DH(device(), {batch, hidden}, DType::f64);
        Tensor DW1(device(), {hidden, in}, DType::f64), DB1(device(), {hidden}, DType::f64);
        Tensor DW2(device(), {1, hidden}, DType::f64), DB2(device(), {1}, DType::f64);
        ops::dense(X, W1, B1, Z1, Activation::none);
        ops::dense(X, W1, B1, H, act);
        ops::dense(H, W2, B2, Z2, Activation::none);
        ops::bce_with_logits_backward(Z2, T, DZ2);
        ops::dense_backward(H, W2, Z2, DZ2, Activation::none, &DH, DW2, &DB2);
        ops::dense_backward(X, W1, H, DH, act, nullptr, DW1, &DB1, {}, Z1);
        const Vec z1 = Z1.download_as<double>(), h = H.download_as<double>();
        // Three backward ops chained: each within its threshold.
        const double backward_error = 3 * root_threshold(Op::matmul);
        // Second layer (W2, b2): z moves by Δ2 linearly, T = Σ ℓ'''·|Δ2|³ / batch.
        auto along_output = [&](const Vec& change) {
            return AlongDirection{kLoss.d3 * cubed(Vec(batch, 1.0), change) / double(batch), kMaxStep};
        };
        // First layer (W1, b1): z1 moves by Δ1 linearly; z = a(z1)·W2ᵀ + b2 has |z'| ≤ A1, |z''| ≤ A2,
        // |z'''| ≤ A3 (Ak = d_k·Σ_j |W2_j||Δ1_j|^k), and d³ℓ(z)/ds³ = ℓ'''z'³ + 3ℓ''z'z'' + ℓ'z'''.
        auto along_hidden = [&](const Vec& change) {
            double third = 0;
            for (std::size_t r = 0; r < batch; ++r) {
                double a1 = 0, a2 = 0, a3 = 0;
                for (std::size_t j = 0; j < hidden; ++j) {
                    const double c = std::fabs(change[r * hidden + j]), wj = std::fabs(w2[j]);
                    a1 += d.d1 * wj * c;
                    a2 += d.d2 * wj * c * c;
                    a3 += d.d3 * wj * c * c * c;
                }
                third += kLoss.d3 * a1 * a1 * a1 + 3 * kLoss.d2 * a1 * a2 + kLoss.d1 * a3;
            }
            const double limit = act == Activation::relu ? kink_limit(z1, change, Vec(z1.size(), 1.0)) : kMaxStep;
            return AlongDirection{third / double(batch), limit};
        };
        check_directions(
            "dense_backward dW1" + net, [&](const Vec& p) { return loss(p, b1, w2, b2); }, w1,
            DW1.download_as<double>(), backward_error,
            [&](const Vec& v) { return along_hidden(reference::dense(x, v, {}, batch, in, hidden, Activation::none)); },
            g);
        check_directions(
            "dense_backward db1" + net, [&](const Vec& p) { return loss(w1, p, w2, b2); }, b1,
            DB1.download_as<double>(), backward_error, [&](const Vec& v) { return along_hidden(broadcast(v, batch)); },
            g);
        check_directions(
            "dense_backward dW2" + net, [&](const Vec& p) { return loss(w1, b1, p, b2); }, w2,
            DW2.download_as<double>(), backward_error,
            [&](const Vec& v) { return along_output(reference::dense(h, v, {}, batch, hidden, 1, Activation::none)); },
            g);
        check_directions(
            "dense_backward db2" + net, [&](const Vec& p) { return loss(w1, b1, w2, p); }, b2,
            DB2.download_as<double>(), backward_error, [&](const Vec& v) { return along_output(broadcast(v, batch)); },
            g);
    }
}
