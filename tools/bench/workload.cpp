#include "workload.hpp"

#include <algorithm>
#include <cmath>

namespace bench {
namespace {

using accel::reference::FVec;
using accel::reference::Vec;
namespace ops = accel::ops;
namespace ref = accel::reference;

// Above this many multiply-adds a full float64 oracle of matmul/dense takes
// seconds; the oracle is then computed on kSampledRows random output rows.
constexpr double kFullOracleMacs = 1024.0 * 1024.0 * 1024.0;
constexpr std::size_t kSampledRows = 8;

// The sizes of `p` as the op table counts them (accel::OpSize).
accel::OpSize op_size(const Problem& p) {
    switch (p.op) {
    case accel::Op::matmul: return {p.dims[0], p.dims[1], p.dims[2]};
    case accel::Op::dense: return {p.dims[0], p.dims[2], p.dims[1]};
    case accel::Op::column_sum: return {p.dims[0], p.dims[1], 0};
    default: return {1, p.dims[0], 0};
    }
}

// v rounded to dtype t: `stored` gets its bytes, v the values widened back.
std::vector<unsigned char> round_to(FVec& v, accel::DType t) {
    std::vector<unsigned char> raw(v.size() * accel::dtype_size(t));
    accel::convert_elements(v.data(), accel::DType::f32, raw.data(), t, v.size());
    accel::convert_elements(raw.data(), t, v.data(), accel::DType::f32, v.size());
    return raw;
}

// n values uniform in [lo, hi), rounded to the workload's dtype: the oracle
// gets exactly what the device holds.
FVec uniform(const Workload& w, std::mt19937_64& rng, std::size_t n, float lo, float hi) {
    std::uniform_real_distribution<float> dist(lo, hi);
    FVec v(n);
    for (auto& x : v) x = dist(rng);
    round_to(v, w.problem.dtype);
    return v;
}

Vec widen(const FVec& v) { return Vec(v.begin(), v.end()); }

// Rows `rows` of a row-major matrix with `cols` columns.
template <class V>
V take_rows(const V& m, const std::vector<std::size_t>& rows, std::size_t cols) {
    V out;
    out.reserve(rows.size() * cols);
    for (std::size_t r : rows) out.insert(out.end(), m.begin() + r * cols, m.begin() + (r + 1) * cols);
    return out;
}

// kSampledRows distinct random rows of `count` in increasing order, or every row when the
// oracle of `macs` multiply-adds is cheap enough.
std::vector<std::size_t> oracle_rows(std::size_t count, double macs, std::mt19937_64& rng) {
    if (macs < kFullOracleMacs || count <= kSampledRows) return {};
    std::vector<std::size_t> all(count);
    for (std::size_t i = 0; i < count; ++i) all[i] = i;
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(kSampledRows);
    std::sort(all.begin(), all.end());
    return all;
}

// An elementwise op of the op table (OpInfo::elementwise_reference): inputs
// drawn from its input ranges, run through ops::run, checked against its oracle.
void make_elementwise(Workload& w, std::mt19937_64& rng) {
    const accel::Op op = w.problem.op;
    const std::size_t n = w.problem.dims.at(0);
    for (const auto& range : accel::op_info(op).input_ranges) {
        w.inputs.push_back(uniform(w, rng, n, range[0], range[1]));
        w.input_shapes.push_back(accel::Shape{n});
    }
    w.output_shape = accel::Shape{n};
    w.row_length = n;
    w.launch = [op](std::vector<accel::Tensor>& in, accel::Tensor& out, const ops::Options& o) {
        std::vector<const accel::Tensor*> inputs;
        for (const accel::Tensor& t : in) inputs.push_back(&t);
        ops::run(op, inputs, {&out}, o);
    };
    w.oracle = ref::elementwise(op, w.inputs);
}

void make_matmul(Workload& w, std::mt19937_64& rng) {
    const std::size_t m = w.problem.dims[0], n = w.problem.dims[1], k = w.problem.dims[2];
    w.inputs = {uniform(w, rng, m * k, -1, 1), uniform(w, rng, k * n, -1, 1)};
    w.input_shapes = {accel::Shape{m, k}, accel::Shape{k, n}};
    w.output_shape = accel::Shape{m, n};
    w.row_length = n;
    w.launch = [](std::vector<accel::Tensor>& in, accel::Tensor& out, const ops::Options& o) {
        ops::matmul(in[0], in[1], out, {}, o);
    };
    w.sampled_rows = oracle_rows(m, double(m) * double(n) * double(k), rng);
    if (w.sampled_rows.empty())
        w.oracle = ref::matmul(w.inputs[0], w.inputs[1], m, n, k);
    else
        w.oracle = ref::matmul(take_rows(w.inputs[0], w.sampled_rows, k), w.inputs[1], w.sampled_rows.size(), n, k);
}

// y = sigmoid(x·Wᵀ + b) (kDenseActivation), the articles' layer; W drawn as nn.Linear's default init.
void make_dense(Workload& w, std::mt19937_64& rng) {
    const std::size_t batch = w.problem.dims[0], in = w.problem.dims[1], out = w.problem.dims[2];
    const float bound = 1.0f / std::sqrt(float(std::max<std::size_t>(in, 1)));
    w.inputs = {uniform(w, rng, batch * in, -1, 1), uniform(w, rng, out * in, -bound, bound), uniform(w, rng, out, -bound, bound)};
    w.input_shapes = {accel::Shape{batch, in}, accel::Shape{out, in}, accel::Shape{out}};
    w.output_shape = accel::Shape{batch, out};
    w.row_length = out;
    w.launch = [](std::vector<accel::Tensor>& t, accel::Tensor& y, const ops::Options& o) {
        ops::dense(t[0], t[1], t[2], y, kDenseActivation, o);
    };
    w.sampled_rows = oracle_rows(batch, double(batch) * double(in) * double(out), rng);
    const FVec x = w.sampled_rows.empty() ? w.inputs[0] : take_rows(w.inputs[0], w.sampled_rows, in);
    const std::size_t rows = w.sampled_rows.empty() ? batch : w.sampled_rows.size();
    w.oracle = ref::dense(x, w.inputs[1], w.inputs[2], rows, in, out, kDenseActivation);
}

void make_column_sum(Workload& w, std::mt19937_64& rng) {
    const std::size_t rows = w.problem.dims[0], cols = w.problem.dims[1];
    w.inputs = {uniform(w, rng, rows * cols, -1, 1)};
    w.input_shapes = {accel::Shape{rows, cols}};
    w.output_shape = accel::Shape{cols};
    w.row_length = cols;
    w.launch = [](std::vector<accel::Tensor>& in, accel::Tensor& out, const ops::Options& o) {
        ops::column_sum(in[0], out, o);
    };
    w.oracle = ref::column_sum(w.inputs[0], rows, cols);
}

// One Adam step (step 3, PyTorch defaults with lr 1e-2) on random state; param is updated in place.
void make_adam(Workload& w, std::mt19937_64& rng) {
    const std::size_t n = w.problem.dims[0];
    constexpr std::size_t kStep = 3;
    const ops::AdamParams hp{1e-2f, 0.9f, 0.999f, 1e-8f};
    w.inputs = {uniform(w, rng, n, -1, 1), uniform(w, rng, n, -1, 1), uniform(w, rng, n, -0.1f, 0.1f),
                uniform(w, rng, n, 0, 0.01f)};
    w.input_shapes.assign(4, accel::Shape{n});
    w.output_shape = accel::Shape{n};
    w.output_input = 0;
    w.row_length = n;
    w.launch = [hp](std::vector<accel::Tensor>& in, accel::Tensor& p, const ops::Options& o) {
        ops::adam_step(p, in[1], in[2], in[3], kStep, hp, o);
    };
    Vec p = widen(w.inputs[0]), m = widen(w.inputs[2]), v = widen(w.inputs[3]);
    ref::adam_step(p, widen(w.inputs[1]), m, v, kStep, hp.lr, hp.beta1, hp.beta2, hp.eps);
    w.oracle = std::move(p);
}

}  // namespace

Vec Workload::covered(const Vec& full) const {
    return sampled_rows.empty() ? full : take_rows(full, sampled_rows, row_length);
}

std::string Workload::oracle_text() const {
    if (sampled_rows.empty()) return "full";
    std::string s = "rows";
    for (std::size_t r : sampled_rows) s += " " + std::to_string(r);
    return s;
}


Workload make_workload(const Problem& p, std::mt19937_64& rng) {
    Workload w;
    w.problem = p;
    using accel::Op;
    switch (p.op) {
    case Op::matmul: make_matmul(w, rng); break;
    case Op::dense: make_dense(w, rng); break;
    case Op::column_sum: make_column_sum(w, rng); break;
    case Op::adam_step: make_adam(w, rng); break;
    default:
        if (!accel::op_info(p.op).elementwise_reference)
            throw accel::InvalidArgument(std::string("accel-bench has no workload for op '") + accel::op_name(p.op) +
                                         "'");
        make_elementwise(w, rng);
    }
    for (FVec& v : w.inputs) w.stored.push_back(round_to(v, p.dtype));  // exact: drawn already rounded
    const accel::OpInfo& info = accel::op_info(p.op);
    w.all_flops = info.flops(op_size(p));
    w.all_bytes = info.bytes(op_size(p), p.dtype);
    if (info.tiled)
        w.flops = w.all_flops;
    else
        w.bytes = w.all_bytes;
    return w;
}

}  // namespace bench
