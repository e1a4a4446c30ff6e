#include "workload.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>

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
// Elements per chunk of the parallel host loops (draws, oracles, NMSE): a
// chunk's setup (its generator, its buffers) is noise next to its work.
constexpr std::size_t kChunk = std::size_t{1} << 16;

// The sizes of `p` as the op table counts them (accel::OpSize).
accel::OpSize op_size(const Problem& p) {
    switch (p.op) {
    case accel::Op::matmul: return {p.dims[0], p.dims[1], p.dims[2]};
    case accel::Op::dense: return {p.dims[0], p.dims[2], p.dims[1]};
    case accel::Op::column_sum: return {p.dims[0], p.dims[1], 0};
    default: return {1, p.dims[0], 0};
    }
}

// v (already rounded to t) in dtype t's layout, converted on several threads.
std::vector<unsigned char> stored_bytes(const FVec& v, accel::DType t) {
    const std::size_t size = accel::dtype_size(t);
    std::vector<unsigned char> raw(v.size() * size);
    parallel_ranges(v.size(), kChunk, [&](std::size_t b, std::size_t e) {
        accel::convert_elements(v.data() + b, accel::DType::f32, raw.data() + b * size, t, e - b);
    });
    return raw;
}

// n values uniform in [lo, hi), rounded to the workload's dtype: the oracle
// gets exactly what the device holds. Each kChunk chunk draws from its own
// generator, seeded from `rng` in chunk order, so threads need no lock.
FVec uniform(const Workload& w, std::mt19937_64& rng, std::size_t n, float lo, float hi) {
    const accel::DType t = w.problem.dtype;
    std::vector<std::uint64_t> seeds((n + kChunk - 1) / kChunk);
    for (auto& seed : seeds) seed = rng();
    FVec v(n);
    parallel_ranges(n, kChunk, [&](std::size_t b, std::size_t e) {
        std::mt19937_64 gen(seeds[b / kChunk]);
        std::uniform_real_distribution<float> dist(lo, hi);
        for (std::size_t i = b; i < e; ++i) v[i] = dist(gen);
        std::vector<unsigned char> raw((e - b) * accel::dtype_size(t));
        accel::convert_elements(v.data() + b, accel::DType::f32, raw.data(), t, e - b);
        accel::convert_elements(raw.data(), t, v.data() + b, accel::DType::f32, e - b);
    });
    return v;
}

// ref::elementwise(op, inputs), computed chunk by chunk on several threads
// (each element depends on its own inputs only).
Vec elementwise_oracle(accel::Op op, const std::vector<FVec>& inputs) {
    const std::size_t n = inputs.empty() ? 0 : inputs[0].size();
    for (const FVec& in : inputs)
        if (in.size() != n) return ref::elementwise(op, inputs);  // it says what is wrong
    Vec out(n);
    parallel_ranges(n, kChunk, [&](std::size_t b, std::size_t e) {
        std::vector<FVec> part;
        for (const FVec& in : inputs) part.emplace_back(in.begin() + b, in.begin() + e);
        const Vec y = ref::elementwise(op, part);
        std::copy(y.begin(), y.end(), out.begin() + std::ptrdiff_t(b));
    });
    return out;
}

// The float64 result of a row-wise op on `rows` of x (every one of its
// `count` rows when empty), row blocks on several threads: fn(x_rows, r)
// gives the r output rows (row_out values each) of the r input rows x_rows
// (row_in values each).
Vec oracle_by_rows(const FVec& x, std::size_t count, std::size_t row_in, std::size_t row_out,
                   const std::vector<std::size_t>& rows, const std::function<Vec(const FVec&, std::size_t)>& fn) {
    const std::size_t r = rows.empty() ? count : rows.size();
    Vec out(r * row_out);
    parallel_ranges(r, std::max<std::size_t>(1, r / 64), [&](std::size_t b, std::size_t e) {
        FVec part;
        part.reserve((e - b) * row_in);
        for (std::size_t i = b; i < e; ++i) {
            const std::size_t row = rows.empty() ? i : rows[i];
            part.insert(part.end(), x.begin() + std::ptrdiff_t(row * row_in),
                        x.begin() + std::ptrdiff_t((row + 1) * row_in));
        }
        const Vec y = fn(part, e - b);
        std::copy(y.begin(), y.end(), out.begin() + std::ptrdiff_t(b * row_out));
    });
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
    w.oracle = elementwise_oracle(op, w.inputs);
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
    const FVec& b = w.inputs[1];
    w.oracle = oracle_by_rows(w.inputs[0], m, k, n, w.sampled_rows,
                              [&](const FVec& a, std::size_t rows) { return ref::matmul(a, b, rows, n, k); });
}

// y = activation(x·Wᵀ + b) (sigmoid by default: the articles' layer); W drawn as nn.Linear's default init.
void make_dense(Workload& w, std::mt19937_64& rng) {
    const std::size_t batch = w.problem.dims[0], in = w.problem.dims[1], out = w.problem.dims[2];
    const float bound = 1.0f / std::sqrt(float(std::max<std::size_t>(in, 1)));
    w.inputs = {uniform(w, rng, batch * in, -1, 1), uniform(w, rng, out * in, -bound, bound), uniform(w, rng, out, -bound, bound)};
    w.input_shapes = {accel::Shape{batch, in}, accel::Shape{out, in}, accel::Shape{out}};
    w.output_shape = accel::Shape{batch, out};
    w.row_length = out;
    const accel::Activation activation = w.problem.activation;
    w.launch = [activation](std::vector<accel::Tensor>& t, accel::Tensor& y, const ops::Options& o) {
        ops::dense(t[0], t[1], t[2], y, activation, o);
    };
    w.sampled_rows = oracle_rows(batch, double(batch) * double(in) * double(out), rng);
    const FVec &weight = w.inputs[1], &bias = w.inputs[2];
    w.oracle = oracle_by_rows(w.inputs[0], batch, in, out, w.sampled_rows, [&](const FVec& x, std::size_t rows) {
        return ref::dense(x, weight, bias, rows, in, out, activation);
    });
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

// BabelStream's mul and triad, y = s·x and a = b + s·c, with its scalar.
constexpr double kStreamScalar = 0.4;

void make_scaled(Workload& w, std::mt19937_64& rng) {
    const bool triad = w.problem.op == accel::Op::triad;
    const std::size_t n = w.problem.dims.at(0);
    w.inputs.push_back(uniform(w, rng, n, -4, 4));
    if (triad) w.inputs.push_back(uniform(w, rng, n, -4, 4));
    w.input_shapes.assign(w.inputs.size(), accel::Shape{n});
    w.output_shape = accel::Shape{n};
    w.row_length = n;
    w.launch = [triad](std::vector<accel::Tensor>& in, accel::Tensor& out, const ops::Options& o) {
        if (triad)
            ops::triad(in[0], in[1], kStreamScalar, out, o);
        else
            ops::scale(in[0], kStreamScalar, out, o);
    };
    const Vec x(w.inputs[0].begin(), w.inputs[0].end());
    w.oracle = triad ? ref::triad(x, Vec(w.inputs[1].begin(), w.inputs[1].end()), kStreamScalar)
                     : ref::scale(x, kStreamScalar);
}

// BabelStream's dot over terms of one sign (the op table's threshold assumes
// them); in f16 small enough that the sum stays below its largest value (65504).
void make_dot(Workload& w, std::mt19937_64& rng) {
    const std::size_t n = w.problem.dims.at(0);
    const float top = w.problem.dtype == accel::DType::f16 ? std::min(1.0f, 4096.0f / float(std::max<std::size_t>(n, 1)))
                                                           : 1.0f;
    w.inputs = {uniform(w, rng, n, 0, 1), uniform(w, rng, n, 0, top)};
    w.input_shapes.assign(2, accel::Shape{n});
    w.output_shape = accel::Shape{1};
    w.row_length = 1;
    w.launch = [](std::vector<accel::Tensor>& in, accel::Tensor& out, const ops::Options& o) {
        ops::dot(in[0], in[1], out, o);
    };
    w.oracle = {ref::dot(Vec(w.inputs[0].begin(), w.inputs[0].end()), Vec(w.inputs[1].begin(), w.inputs[1].end()))};
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
    // Per element, so chunk by chunk on several threads.
    w.oracle.resize(n);
    parallel_ranges(n, kChunk, [&](std::size_t b, std::size_t e) {
        auto part = [&](const FVec& x) { return Vec(x.begin() + std::ptrdiff_t(b), x.begin() + std::ptrdiff_t(e)); };
        Vec p = part(w.inputs[0]), m = part(w.inputs[2]), v = part(w.inputs[3]);
        ref::adam_step(p, part(w.inputs[1]), m, v, kStep, hp.lr, hp.beta1, hp.beta2, hp.eps);
        std::copy(p.begin(), p.end(), w.oracle.begin() + std::ptrdiff_t(b));
    });
}

}  // namespace

void parallel_ranges(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn) {
    grain = std::max<std::size_t>(grain, 1);
    const std::size_t chunks = (n + grain - 1) / grain;
    const std::size_t workers = std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), chunks);
    if (workers <= 1) {
        fn(0, n);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto work = [&] {
        for (std::size_t c = next++; c < chunks; c = next++) {
            try {
                fn(c * grain, std::min(n, (c + 1) * grain));
            } catch (...) {
                const std::lock_guard<std::mutex> lock(error_mutex);
                if (!error) error = std::current_exception();
                next = chunks;  // the other threads stop at their next chunk
            }
        }
    };
    std::vector<std::thread> threads;
    for (std::size_t t = 1; t < workers; ++t) threads.emplace_back(work);
    work();
    for (std::thread& t : threads) t.join();
    if (error) std::rethrow_exception(error);
}

double output_nmse(const Workload& w, const unsigned char* raw) {
    const accel::DType t = w.problem.dtype;
    const std::size_t size = accel::dtype_size(t);
    // The covered elements, in the oracle's order: whole rows of row_length
    // (one row of everything when all rows are covered).
    const std::size_t per_row = w.sampled_rows.empty() ? w.output_shape.elements() : w.row_length;
    const std::size_t n = w.sampled_rows.empty() ? per_row : w.sampled_rows.size() * per_row;
    Vec got(n);
    parallel_ranges(n, kChunk, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e;) {
            const std::size_t row = i / per_row, col = i % per_row, len = std::min(e - i, per_row - col);
            const std::size_t src = (w.sampled_rows.empty() ? 0 : w.sampled_rows[row] * w.row_length) + col;
            accel::convert_elements(raw + src * size, t, got.data() + i, accel::DType::f64, len);
            i += len;
        }
    });
    return ref::nmse(got, w.oracle);
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
    case Op::scale:
    case Op::triad: make_scaled(w, rng); break;
    case Op::dot: make_dot(w, rng); break;
    default:
        if (!accel::op_info(p.op).elementwise_reference)
            throw accel::InvalidArgument(std::string("accel-bench has no workload for op '") + accel::op_name(p.op) +
                                         "'");
        make_elementwise(w, rng);
    }
    for (const FVec& v : w.inputs) w.stored.push_back(stored_bytes(v, p.dtype));  // exact: drawn already rounded
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
