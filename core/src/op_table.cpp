// The op table (see accel/op_table.hpp): every op's facts, written once.
#include <accel/error.hpp>
#include <accel/op_table.hpp>
#include <accel/elementwise_math.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <mutex>
#include <shared_mutex>

namespace accel {

namespace {

// ---- thresholds -------------------------------------------------------------
// NMSE = Σ(got − ref)² / Σ ref² against the float64 oracle, which is given the
// inputs as the device stores them. An output rounded once to the dtype has a
// relative error ≤ u (unit_roundoff), so NMSE ≤ u²: f32 3.6e-15, f64 1.2e-32,
// f16 2.4e-7, bf16 1.5e-5. f16 and bf16 compute in f32 and round once, so that
// rounding dominates; their thresholds are 4·u² (f16 1e-6, bf16 6e-5: the
// bound with room for the f32 arithmetic before it). f32 and f64 keep orders of
// magnitude of room above u² for the arithmetic each op does (below), yet a
// wrong formula, an unstable one (overflow, cancellation) or a kernel that
// computes in a narrower type fails by orders of magnitude.
constexpr double kF16 = 1e-6;
constexpr double kBF16 = 6e-5;

using Nmse = std::array<double, kDTypeCount>;  // indexed by DType: f32, f64, f16, bf16

// One rounding of an exact result (a sum, a max, a select).
constexpr Nmse kExact{1e-12, 1e-28, kF16, kBF16};
const char* const kExactWhy =
    "one rounding of an exactly computed value per element: NMSE <= u^2 (f32 3.6e-15, f64 1.2e-32); f16/bf16 "
    "4u^2";
// s·x and b + s·c with s rounded to the compute type: at most three roundings
// per element (s, the product, the sum; two with an fma): NMSE <= (3u)^2.
const char* const kScaledWhy =
    "s rounded once to the compute type (f32 for f32/f16/bf16, f64 for f64), then the product and the sum (one "
    "rounding each, or one fma): relative error <= 3u per element, NMSE <= 9u^2 (f32 3.2e-14, f64 1.1e-31); "
    "f16/bf16 4u^2 (the final rounding dominates)";
// exp / log1p and a few operations: a few ulp per element (CUDA's expf 2 ulp,
// OpenCL's exp 3 ulp in f32, 3 ulp for double), relative error ~1e-6 in f32.
constexpr Nmse kTranscendental{1e-10, 1e-26, kF16, kBF16};
const char* const kTranscendentalWhy =
    "exp/log1p (a few ulp: CUDA expf 2, OpenCL exp 3) and a handful of roundings per element: relative error "
    "~1e-6 in f32 (NMSE ~1e-12), ~1e-15 in f64; an unstable formula (overflow to Inf/NaN, cancellation at large "
    "|x|) fails by orders of magnitude; f16/bf16 4u^2 (one final rounding dominates)";
// GELU and its derivative: erfc (CUDA erfcf 4 ulp, OpenCL erfc 16 ulp in f32
// and f64) or the logistic, times x, plus a few roundings. The argument
// x/√2 (or 2u) is rounded once, which erfc amplifies by its condition number
// 2t² (= x² at t = x/√2): up to 36 ulp at |x| = 6, only in the negative tail
// where the values, and so their weight in the NMSE, are below 1e-8 of the
// largest. Relative error ≤ ~1e-5 in f32 there, ~1e-6 elsewhere: the
// transcendental thresholds hold with room; a wrong formula (erf for erfc,
// a wrong constant) or a NaN at large |x| fails by orders of magnitude.
const char* const kGeluWhy =
    "erfc or the logistic (CUDA erfcf 4 ulp, OpenCL erfc 16 ulp) times x and a few roundings: relative error "
    "~1e-6 in f32 where the values are large; erfc's condition number 2t^2 (x^2 at t = x/sqrt2, <= 36 on [-6, 6]) "
    "multiplies the rounding of its argument only in the negative tail, whose values are < 1e-8 of the largest; "
    "f64 ~1e-15; f16/bf16 4u^2 (one final rounding dominates)";
// Sums of up to K products (or K terms), accumulated in the compute type:
// relative error ≤ K·u worst case, ~sqrt(K)·u typical; for K ≤ 4096 in f32
// (K·u)² ≈ 6e-8 worst, and 1e-8 holds for the random data the tests draw.
constexpr Nmse kDotProduct{1e-8, 1e-24, kF16, kBF16};
const char* const kDotProductWhy =
    "sums of K products accumulated in the compute type (f32 for f32/f16/bf16, f64 for f64): relative error "
    "<= K*u worst, ~sqrt(K)*u typical (f32, K = 1024: ~2e-6, NMSE ~4e-12); f16/bf16: the final rounding (4u^2) "
    "dominates the f32 accumulation";
constexpr Nmse kColumnSum{1e-10, 1e-26, kF16, kBF16};
const char* const kColumnSumWhy =
    "sums of `rows` terms of one sign in the tests (a sum that cancels has no relative bound), accumulated in the "
    "compute type: relative error ~sqrt(rows)*u; f16/bf16 4u^2";
// A dot product of n terms accumulated in the compute type in the kernels'
// fixed blocks (each thread a chain of at most n / (threads) terms, then the
// partial sums in a fixed tree): relative error <= depth·u for terms of one
// sign (the tests draw them so; a sum that cancels has no relative bound).
constexpr Nmse kDot{1e-8, 1e-24, kF16, kBF16};
const char* const kDotWhy =
    "a sum of n products of one sign in the tests, accumulated in the compute type in fixed blocks (a chain per "
    "thread, then the partial sums in a fixed tree): relative error <= depth*u, ~sqrt(depth)*u typical (f32, "
    "1e6 terms in chains of <= 4096: ~4e-6, NMSE ~2e-11); f16/bf16: the final rounding (4u^2) dominates";
// Adam stores its state (param, m, v) rounded to the dtype after every step,
// so 16-bit error grows with the steps taken: ≤ steps·u² — room for 8 steps.
constexpr Nmse kAdam{1e-10, 1e-26, 32 * 0x1p-22, 32 * 0x1p-16};
const char* const kAdamWhy =
    "a dozen operations with one sqrt per element (each <= 1 ulp); in f16/bf16 the state p, m, v is rounded after "
    "every step, so the error grows with the steps: 32u^2 covers 8 steps with 4x room. The updated p = p - u "
    "cancels where p is near u: its error is bounded at the scale of the terms, 16u(|p| + |u|) per element in f32 "
    "(tested), not by its own magnitude (relative to p - u it may reach u|u|/|p - u|)";

// ---- counts -------------------------------------------------------------------
template <int Flops>
double per_element(const OpSize& s) {
    return Flops * static_cast<double>(s.n);
}
// Elementwise: `Arrays` arrays of n elements read or written once each.
template <int Arrays>
double arrays(const OpSize& s, DType t) {
    return Arrays * static_cast<double>(s.n) * static_cast<double>(dtype_size(t));
}
double product_flops(const OpSize& s) { return 2.0 * double(s.m) * double(s.n) * double(s.k); }
double matmul_bytes(const OpSize& s, DType t) {
    return double(dtype_size(t)) * (double(s.m) * double(s.k) + double(s.k) * double(s.n) + double(s.m) * double(s.n));
}
double dense_bytes(const OpSize& s, DType t) { return matmul_bytes(s, t) + double(dtype_size(t)) * double(s.n); }
// convert reads n elements of the source and writes n of `t`; the source's
// size is not part of OpSize, so its bytes are counted at t's width too.
double convert_bytes(const OpSize& s, DType t) { return arrays<2>(s, t); }
double matrix_flops(const OpSize& s) { return double(s.m) * double(s.n); }
double column_sum_bytes(const OpSize& s, DType t) {
    return double(dtype_size(t)) * (double(s.m) * double(s.n) + double(s.n));
}
double epilogue_flops(const OpSize& s) { return 2.0 * double(s.m) * double(s.n); }
double epilogue_bytes(const OpSize& s, DType t) {
    return double(dtype_size(t)) * (2.0 * double(s.m) * double(s.n) + double(s.n));
}

OpInfo entry(Op op, const char* name, const char* math, std::vector<std::string> in, std::vector<std::string> out,
             const Nmse& nmse, const char* why, double (*flops)(const OpSize&), double (*bytes)(const OpSize&, DType)) {
    OpInfo i;
    i.op = op;
    i.name = name;
    i.math = math;
    i.inputs = std::move(in);
    i.outputs = std::move(out);
    i.nmse = nmse;
    i.nmse_reason = why;
    i.flops = flops;
    i.bytes = bytes;
    return i;
}

std::deque<OpInfo> builtin_ops() {
    std::deque<OpInfo> t;
    t.push_back(entry(Op::add, "add", "c = a + b", {"a", "b"}, {"c"}, kExact, kExactWhy, per_element<1>, arrays<3>));
    t.push_back(entry(Op::sigmoid, "sigmoid", "y = 1 / (1 + exp(-x)), stable for large |x|", {"x"}, {"y"},
                      kTranscendental, kTranscendentalWhy, per_element<4>, arrays<2>));
    t.push_back(entry(Op::relu, "relu", "y = max(x, 0), NaN kept", {"x"}, {"y"}, kExact, kExactWhy, per_element<1>,
                      arrays<2>));
    t.push_back(entry(Op::relu_backward, "relu_backward", "dx = x > 0 ? dy : 0", {"dy", "x"}, {"dx"}, kExact,
                      kExactWhy, per_element<1>, arrays<3>));
    t.push_back(entry(Op::sigmoid_backward, "sigmoid_backward", "dx = dy * y * (1 - y)", {"dy", "y"}, {"dx"},
                      kTranscendental, kTranscendentalWhy, per_element<3>, arrays<3>));
    t.push_back(entry(Op::matmul, "matmul", "C[M,N] = op(A)·op(B)", {"a", "b"}, {"c"}, kDotProduct, kDotProductWhy,
                      product_flops, matmul_bytes));
    t.push_back(entry(Op::dense, "dense", "y[batch,out] = act(x[batch,in]·W[out,in]^T + bias[out])",
                      {"x", "w", "bias"}, {"y"}, kDotProduct, kDotProductWhy, product_flops, dense_bytes));
    t.push_back(entry(Op::column_sum, "column_sum", "y[c] = sum over r of x[r,c]", {"x"}, {"y"}, kColumnSum,
                      kColumnSumWhy, matrix_flops, column_sum_bytes));
    t.push_back(entry(Op::bce_with_logits, "bce_with_logits", "l = max(z,0) - z*t + log1p(exp(-|z|))", {"z", "t"},
                      {"l"}, kTranscendental, kTranscendentalWhy, per_element<6>, arrays<3>));
    t.push_back(entry(Op::bce_with_logits_backward, "bce_with_logits_backward", "dz = scale * (sigmoid(z) - t)",
                      {"z", "t"}, {"dz"}, kTranscendental, kTranscendentalWhy, per_element<5>, arrays<3>));
    t.push_back(entry(Op::adam_step, "adam_step", "one torch.optim.Adam step of p with moments m, v",
                      {"p", "grad", "m", "v"}, {"p", "m", "v"}, kAdam, kAdamWhy, per_element<12>, arrays<7>));
    t.push_back(entry(Op::convert, "convert", "y = x rounded to y's dtype", {"x"}, {"y"}, kExact, kExactWhy,
                      per_element<0>, convert_bytes));
    t.push_back(entry(Op::gemm, "gemm", "C = op(A)·op(B) + beta·C", {"a", "b"}, {"c"}, kDotProduct, kDotProductWhy,
                      product_flops, matmul_bytes));
    t.push_back(entry(Op::bias_activation, "bias_activation", "y[r,c] = act(alpha·y[r,c] + bias[c])", {"bias"}, {"y"},
                      kTranscendental, kTranscendentalWhy, epilogue_flops, epilogue_bytes));
    t.push_back(entry(Op::mul, "mul", "c = a * b", {"a", "b"}, {"c"}, kExact, kExactWhy, per_element<1>, arrays<3>));
    t.push_back(entry(Op::gelu, "gelu", "y = x * Phi(x) = x/2 * (1 + erf(x/sqrt(2)))", {"x"}, {"y"}, kTranscendental,
                      kGeluWhy, per_element<8>, arrays<2>));
    t.push_back(entry(Op::gelu_tanh, "gelu_tanh", "y = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))", {"x"},
                      {"y"}, kTranscendental, kGeluWhy, per_element<10>, arrays<2>));
    t.push_back(entry(Op::gelu_backward, "gelu_backward", "dx = dy * (Phi(x) + x * phi(x))", {"dy", "x"}, {"dx"},
                      kTranscendental, kGeluWhy, per_element<14>, arrays<3>));
    t.push_back(entry(Op::gelu_tanh_backward, "gelu_tanh_backward", "dx = dy * d/dx gelu_tanh(x)", {"dy", "x"},
                      {"dx"}, kTranscendental, kGeluWhy, per_element<18>, arrays<3>));
    // BabelStream's mul, triad and dot (its bytes: 2, 3 and 2 arrays).
    t.push_back(entry(Op::scale, "scale", "y = s * x (BabelStream's mul)", {"x"}, {"y"}, kExact, kScaledWhy,
                      per_element<1>, arrays<2>));
    t.push_back(entry(Op::triad, "triad", "a = b + s * c (BabelStream's triad)", {"b", "c"}, {"a"}, kExact,
                      kScaledWhy, per_element<2>, arrays<3>));
    t.push_back(entry(Op::dot, "dot", "y[0] = sum over i of a[i] * b[i]", {"a", "b"}, {"y"}, kDot, kDotWhy,
                      per_element<2>, arrays<2>));
    t.push_back(entry(Op::copy, "copy", "y = x, a kernel (BabelStream's copy)", {"x"}, {"y"}, kExact, kExactWhy,
                      per_element<0>, arrays<2>));
    for (Op op : {Op::matmul, Op::dense}) {
        t[static_cast<std::size_t>(op)].has_vendor_path = true;
        t[static_cast<std::size_t>(op)].tiled = true;
        t[static_cast<std::size_t>(op)].vendor_composition = {Op::gemm, Op::bias_activation};
    }
    // The elementwise ops' oracles and input ranges (tests, accel-bench).
    auto elementwise = [&t](Op op, double (*ref)(double, double), std::vector<std::array<float, 2>> ranges) {
        t[static_cast<std::size_t>(op)].elementwise_reference = ref;
        t[static_cast<std::size_t>(op)].input_ranges = std::move(ranges);
    };
    namespace el = elementwise_math;
    elementwise(Op::add, el::add, {{-4, 4}, {-4, 4}});
    elementwise(Op::sigmoid, el::sigmoid, {{-20, 20}});  // both tails of the stable form
    elementwise(Op::relu, el::relu, {{-4, 4}});
    elementwise(Op::relu_backward, el::relu_backward, {{-4, 4}, {-4, 4}});
    elementwise(Op::sigmoid_backward, el::sigmoid_backward, {{-4, 4}, {0, 1}});  // y is a sigmoid
    elementwise(Op::bce_with_logits, el::bce_with_logits, {{-8, 8}, {0, 1}});     // t is a probability
    elementwise(Op::mul, el::mul, {{-4, 4}, {-4, 4}});
    elementwise(Op::gelu, el::gelu, {{-6, 6}});  // both tails: Φ from 1e-9 to 1 - 1e-9
    elementwise(Op::gelu_tanh, el::gelu_tanh, {{-6, 6}});
    elementwise(Op::gelu_backward, el::gelu_backward, {{-1, 1}, {-6, 6}});  // dy, x
    elementwise(Op::gelu_tanh_backward, el::gelu_tanh_backward, {{-1, 1}, {-6, 6}});
    elementwise(Op::copy, el::copy, {{-4, 4}});
    t[static_cast<std::size_t>(Op::gemm)].kernel_only = true;
    t[static_cast<std::size_t>(Op::gemm)].has_vendor_path = true;
    t[static_cast<std::size_t>(Op::bias_activation)].kernel_only = true;
    return t;
}

// A deque: entries never move, so references handed out stay valid while
// define_op appends.
struct Table {
    std::shared_mutex mutex;
    std::deque<OpInfo> ops = builtin_ops();
};

Table& table() {
    static Table* t = new Table;  // never destroyed: static destructors may still look ops up
    return *t;
}

}  // namespace

std::vector<const OpInfo*> op_table() {
    Table& t = table();
    std::shared_lock<std::shared_mutex> lock(t.mutex);
    std::vector<const OpInfo*> all;
    for (const OpInfo& i : t.ops) all.push_back(&i);
    return all;
}

const OpInfo& op_info(Op op) {
    Table& t = table();
    std::shared_lock<std::shared_mutex> lock(t.mutex);
    const auto i = static_cast<std::size_t>(op);
    if (static_cast<int>(op) < 0 || i >= t.ops.size())
        throw InvalidArgument("op number " + std::to_string(static_cast<int>(op)) + " names no op; the table has " +
                              std::to_string(t.ops.size()));
    return t.ops[i];
}

const OpInfo* find_op(const std::string& name) noexcept {
    Table& t = table();
    std::shared_lock<std::shared_mutex> lock(t.mutex);
    for (const OpInfo& i : t.ops)
        if (i.name == name) return &i;
    return nullptr;
}

const char* op_name(Op op) noexcept {
    Table& t = table();
    std::shared_lock<std::shared_mutex> lock(t.mutex);
    const auto i = static_cast<std::size_t>(op);
    return static_cast<int>(op) >= 0 && i < t.ops.size() ? t.ops[i].name.c_str() : "?";
}

double nmse_threshold(Op op, DType dtype) { return op_info(op).nmse[static_cast<std::size_t>(dtype)]; }

Op define_op(OpInfo info) {
    if (info.name.empty()) throw InvalidArgument("define_op: the op has no name");
    if (info.outputs.empty()) throw InvalidArgument("define_op: op '" + info.name + "' has no output");
    for (DType t : kAllDTypes)
        if (!(info.nmse[static_cast<std::size_t>(t)] > 0) || !std::isfinite(info.nmse[static_cast<std::size_t>(t)]))
            throw InvalidArgument("define_op: op '" + info.name + "' has NMSE threshold " +
                                  std::to_string(info.nmse[static_cast<std::size_t>(t)]) + " for " + dtype_name(t) +
                                  "; give a positive finite threshold for every dtype");
    if (!info.flops) info.flops = [](const OpSize&) { return 0.0; };  // not counted: tools print no GFLOP/s
    if (!info.bytes) {  // every operand of n elements read or written once
        static constexpr double (*by_count[])(const OpSize&, DType) = {
            arrays<0>, arrays<1>, arrays<2>, arrays<3>, arrays<4>, arrays<5>, arrays<6>, arrays<7>, arrays<8>};
        info.bytes = by_count[std::min<std::size_t>(info.inputs.size() + info.outputs.size(), 8)];
    }
    if (info.elementwise_reference) {
        const bool shape = (info.inputs.size() == 1 || info.inputs.size() == 2) && info.outputs.size() == 1 &&
                           info.input_ranges.size() == info.inputs.size();
        bool ranges = true;
        for (const auto& r : info.input_ranges)
            ranges = ranges && std::isfinite(r[0]) && std::isfinite(r[1]) && r[0] < r[1];
        if (!shape || !ranges)
            throw InvalidArgument("define_op: op '" + info.name + "' has an elementwise_reference, which needs one or "
                                  "two inputs, one output and one finite input range [low < high] per input; it has " +
                                  std::to_string(info.inputs.size()) + " input(s), " +
                                  std::to_string(info.outputs.size()) + " output(s) and " +
                                  std::to_string(info.input_ranges.size()) + " range(s)" +
                                  (ranges ? "" : ", not all of them finite with low < high"));
    }
    Table& t = table();
    std::unique_lock<std::shared_mutex> lock(t.mutex);
    for (const OpInfo& i : t.ops)
        if (i.name == info.name) throw InvalidArgument("define_op: an op named '" + info.name + "' exists already");
    info.op = static_cast<Op>(t.ops.size());
    t.ops.push_back(std::move(info));
    return t.ops.back().op;
}

}  // namespace accel
