// The op front-end: every shape, device and geometry check lives here, once.
#include <accel/environment.hpp>
#include <accel/error.hpp>
#include <accel/diagnostics.hpp>
#include <accel/ops.hpp>

#include "auto_path.hpp"
#include <accel_internal/graph_capture.hpp>
#include <accel_internal/instrument.hpp>
#include <accel_internal/ops_layer.hpp>
#include "kernel_call.hpp"
#include <accel_internal/text.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace accel {

void detail::run_kernel(Device& d, Op op, const KernelArgs& a) {
    const std::shared_ptr<const Kernel> k = d.kernel_table().find(op, a.dtype, a.path);
    if (!k) {
        std::string have;
        for (const KernelKey& key : d.kernel_table().registered())
            if (key.op == op) have += std::string(have.empty() ? "" : ", ") + dtype_name(key.dtype) + " " + path_name(key.path);
        throw Unsupported(std::string(op_name(op)) + ": " + d.selector() + " (" + d.info().name + ") has no " +
                          dtype_name(a.dtype) + " kernel on the " + path_name(a.path) + " path; it runs " +
                          op_name(op) + " in " + (have.empty() ? std::string("no dtype") : have));
    }
    if (detail::Capture* c = detail::capture_of_thread()) return record_kernel(*c, d, op, k, a);
    if (!instrument::active()) return (*k)(a);  // the one branch a trace or check costs when off
    run_observed(d, op, a, *k);
}

void detail::record_kernel(Capture& c, Device& d, Op op, std::shared_ptr<const Kernel> kernel, const KernelArgs& a) {
    std::vector<DeviceHandle> handles(a.in.begin(), a.in.end());
    handles.insert(handles.end(), a.out.begin(), a.out.end());
    // A replay runs the kernel as an eager call would: traced and checked when a trace or check is on.
    std::function<void(KernelArgs&)> update = replay_update_of_thread();
    const bool varies = static_cast<bool>(update);
    record(
        c, op_name(op), *a.stream, handles,
        [device = &d, op, kernel = std::move(kernel), a, update = std::move(update)](Stream& s, bool observed) {
            KernelArgs args = a;
            args.stream = &s;
            if (update) update(args);
            if (!observed || !instrument::active()) return (*kernel)(args);
            run_observed(*device, op, args, *kernel);
        },
        varies);
}

void detail::default_launch(Device& d, Op op, KernelArgs& a, std::size_t rows, std::size_t cols) {
    const std::optional<TileLayout> layout = d.tile_layout(op, a.dtype, rows, cols);
    if (!layout) {
        a.geometry = d.default_geometry(op, a.dtype, rows, cols);
        return;
    }
    a.tile = *layout;
    a.geometry = tiled_geometry(*layout, rows, cols, d.info().limits, std::string("default geometry of ") + op_name(op));
}

namespace ops {
namespace {

const env::Declaration kOpPathVariable{{"ACCEL_OP_PATH", "native, vendor or auto (any case)",
                                        "the path of matmul/dense when a call does not name one (default auto)",
                                        "libaccel (ops)"}};

struct Named {
    const char* name;
    const Tensor* t;
};

[[noreturn]] void reject(Op op, const std::string& why) {
    throw InvalidArgument(std::string(op_name(op)) + ": " + why);
}

// All tensors allocated (non-default), on one device and (unless the op
// defines mixed dtypes: convert) of one dtype; returns that device.
Device& same_device(Op op, const std::vector<Named>& ts, bool one_dtype = true) {
    Device* d = nullptr;
    const Named* first = nullptr;
    for (const auto& n : ts) {
        if (!n.t) continue;
        if (!n.t->device_ptr())
            reject(op, std::string("tensor '") + n.name + "' has no storage (default-constructed or moved-from)");
        if (!d) {
            d = &n.t->device();
            first = &n;
        } else if (&n.t->device() != d) {
            reject(op, std::string("tensor '") + n.name + "' is on " + n.t->device().selector() + " but '" + first->name +
                           "' is on " + d->selector() + "; all operands must be on one device");
        } else if (one_dtype && n.t->dtype() != first->t->dtype()) {
            reject(op, std::string("tensor '") + n.name + "' is " + dtype_name(n.t->dtype()) + " but '" + first->name +
                           "' is " + dtype_name(first->t->dtype()) + "; all operands must have one dtype");
        }
    }
    return *d;
}

void same_shape(Op op, const std::vector<Named>& ts) {
    const Named* ref = &ts.front();
    for (const auto& n : ts)
        if (n.t->shape() != ref->t->shape())
            reject(op, std::string("'") + n.name + "' has shape " + n.t->shape().to_string() + " but '" + ref->name +
                           "' has " + ref->t->shape().to_string() + "; the shapes must be equal");
}

void need_rank(Op op, const Named& n, std::size_t rank) {
    if (n.t->shape().rank() != rank)
        reject(op, std::string("'") + n.name + "' has shape " + n.t->shape().to_string() + " (rank " +
                       std::to_string(n.t->shape().rank()) + "); it must have rank " + std::to_string(rank));
}

void no_alias(Op op, const Named& out, std::initializer_list<Named> ins) {
    for (const auto& n : ins)
        if (n.t && n.t->buffer().overlaps(out.t->buffer()))
            reject(op, std::string("output '") + out.name + "' aliases input '" + n.name +
                           "'; give a separate output tensor");
}

// In place (an output that is an input) is fine elementwise; memory shared in
// part is not. `all`: the op's first `outputs` operands are its outputs, the
// rest its inputs.
void no_partial_overlap(Op op, const std::vector<Named>& all, std::size_t outputs) {
    for (std::size_t o = 0; o < outputs; ++o)
        for (std::size_t i = outputs; i < all.size(); ++i)
            if (all[o].t->handle() != all[i].t->handle() && all[o].t->buffer().overlaps(all[i].t->buffer()))
                reject(op, std::string("output '") + all[o].name + "' overlaps input '" + all[i].name +
                               "' in part (tensors over shared host memory); give a separate output, or the input itself");
}

Stream& stream_of(Op op, Device& d, const Options& o) {
    if (!o.stream) return d.default_stream();
    if (&o.stream->device() != &d)
        reject(op, "Options::stream belongs to " + o.stream->device().selector() + " but the tensors are on " +
                       d.selector());
    return *o.stream;
}

// The geometry of an op that is not tiled: the caller's (checked) or the device's default.
LaunchGeometry geometry_of(Op op, Device& d, DType dtype, const Options& o, std::size_t rows, std::size_t cols) {
    if (!o.geometry) return d.default_geometry(op, dtype, rows, cols);
    check_geometry(*o.geometry, d.info().limits, op_name(op));
    return *o.geometry;
}

DeviceHandle handle_of(const Tensor* t) { return t ? t->handle() : nullptr; }

// The arguments every kernel call shares.
KernelArgs args_for(DType dtype, OpPath path, const LaunchGeometry& g, Stream& s) {
    KernelArgs a;
    a.dtype = dtype;
    a.src_dtype = dtype;
    a.path = path;
    a.geometry = g;
    a.stream = &s;
    return a;
}

// The arguments a composed call's trace event describes (detail::trace_call):
// its operands and sizes, as its own kernel would be given them.
template <class Sizes>
KernelArgs composed_args(DType dtype, std::array<DeviceHandle, 3> in, DeviceHandle out, Sizes store_sizes) {
    KernelArgs a;
    a.dtype = a.src_dtype = dtype;
    a.path = OpPath::vendor;
    std::copy(in.begin(), in.end(), a.in.begin());
    a.out[0] = out;
    store_sizes(a);
    return a;
}

// "[40,30]": a shape as the trace's shapes write it.
std::string dims_text(const Shape& s) { return detail::dims_text(s.dims()); }

// The arguments of a tiled op (matmul, dense) on the native path over a
// rows × cols output: the device's tile layout for it, asked once and handed
// to the kernel (KernelArgs::tile), and the caller's geometry checked against
// it, or the default built from it.
KernelArgs tiled_args(Op op, Device& d, DType dtype, OpPath path, const Options& o, std::size_t rows,
                      std::size_t cols, Stream& s) {
    KernelArgs a = args_for(dtype, path, LaunchGeometry{}, s);
    if (!o.geometry) {
        detail::default_launch(d, op, a, rows, cols);
        return a;
    }
    check_geometry(*o.geometry, d.info().limits, op_name(op));
    if (const std::optional<TileLayout> layout = d.tile_layout(op, dtype, rows, cols)) {
        check_tiled_geometry(*o.geometry, *layout, rows, cols, std::string(op_name(op)) + " (native, " + d.selector() + ")");
        a.tile = *layout;
    }
    a.geometry = *o.geometry;
    return a;
}

// Shared checks and launch of the elementwise ops: `ins` and `outs` (in the
// op table's order of its inputs and outputs, whose names the messages use)
// of one shape, dtype and device; `fill` sets the op's scalars.
template <class Ins, class Outs, class Fill>
void elementwise_of(Op op, const Ins& ins, const Outs& outs, const Options& o, Fill fill) {
    // Operands named as the op table names them (its messages name them so).
    const OpInfo& info = op_info(op);
    std::vector<Named> all;
    std::size_t k = 0;
    for (const Tensor* t : outs) all.push_back({info.outputs.at(k++).c_str(), t});
    k = 0;
    for (const Tensor* t : ins) all.push_back({info.inputs.at(k++).c_str(), t});
    Device& d = same_device(op, all);
    same_shape(op, all);
    no_partial_overlap(op, all, outs.size());
    const DType dtype = all.front().t->dtype();
    const OpPath path = resolve_path(d, op, o, dtype);  // rejects an explicit vendor request: these ops have none
    Stream& s = stream_of(op, d, o);
    const std::size_t n = all.front().t->elements();
    const LaunchGeometry g = geometry_of(op, d, dtype, o, 1, n);
    if (!n) return;
    KernelArgs a = args_for(dtype, path, g, s);
    std::size_t i = 0;
    for (const Tensor* t : ins) a.in[i++] = handle_of(t);
    i = 0;
    for (const Tensor* t : outs) a.out[i++] = handle_of(t);
    a.n = n;
    fill(a);
    detail::run_kernel(d, op, a);
}

template <class Fill>
void elementwise(Op op, std::initializer_list<const Tensor*> ins, std::initializer_list<const Tensor*> outs,
                 const Options& o, Fill fill) {
    elementwise_of(op, ins, outs, o, fill);
}

// y[r,c] = act(alpha·y[r,c] + bias[c]) over y[rows, cols] (alpha 0: y not read).
void bias_activation(Device& d, DType dtype, DeviceHandle bias, DeviceHandle y, std::size_t rows, std::size_t cols,
                     double alpha, Activation act, Stream& s) {
    KernelArgs a = args_for(dtype, OpPath::native, d.default_geometry(Op::bias_activation, dtype, 1, rows * cols), s);
    a.in[0] = bias;
    a.out[0] = y;
    MatrixArgs{rows, cols, act}.store(a);
    a.scalars[0] = alpha;
    detail::run_kernel(d, Op::bias_activation, a);
}

// matmul and dense on the vendor path, composed the same way on every backend:
// C = op(A)·op(B) by the library's gemm, then bias and activation in one
// epilogue pass. K = 0 (which BLAS libraries reject) is C = act(bias), or 0.
void vendor_linear(Device& d, DType dtype, DeviceHandle a, DeviceHandle b, DeviceHandle bias, DeviceHandle c,
                   std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb, Activation act, Stream& s) {
    if (k == 0) return bias_activation(d, dtype, bias, c, m, n, 0.0, act, s);
    KernelArgs g = args_for(dtype, OpPath::vendor, LaunchGeometry{}, s);
    g.in = {a, b};
    g.out[0] = c;
    GemmArgs{m, n, k, ta, tb}.store(g);
    g.scalars[0] = 0.0;  // beta
    detail::run_kernel(d, Op::gemm, g);
    if (bias || act != Activation::none) bias_activation(d, dtype, bias, c, m, n, 1.0, act, s);
}

}  // namespace

PathChoice parse_path_choice(const std::string& text) {
    const std::string t = detail::lower(detail::trim(text));
    if (t.empty() || t == "auto") return PathChoice::automatic;
    if (t == "native") return PathChoice::native;
    if (t == "vendor") return PathChoice::vendor;
    throw InvalidArgument("op path '" + detail::echo(text) + "' is not one of native, vendor or auto");
}

Activation parse_activation(const std::string& text) {
    for (Activation a :
         {Activation::none, Activation::relu, Activation::sigmoid, Activation::gelu, Activation::gelu_tanh})
        if (text == activation_name(a)) return a;
    throw InvalidArgument("unknown activation '" + detail::echo(text) +
                          "'; valid activations: none, relu, sigmoid, gelu, gelu_tanh");
}

bool deterministic_mode(const Device& device, const Options& o) noexcept {
    return o.deterministic.value_or(device.deterministic());
}

namespace {

// Deterministic mode: the device's promise for `op`, else Unsupported saying
// what is missing. matmul and dense (and dense_backward through them) need
// the batch invariance too.
void check_determinism(const Device& device, Op op, DType dtype) {
    const Determinism& p = device.info().determinism;
    const bool product = op == Op::matmul || op == Op::dense;
    if (p.reproducible && (p.batch_invariant || !product)) return;
    throw Unsupported(std::string(op_name(op)) + " (" + dtype_name(dtype) + ", " + device.selector() +
                      ") in deterministic mode: backend '" + device.info().backend + "' does not promise " +
                      (p.reproducible ? "batch-invariant products" : "bitwise-reproducible kernels") +
                      (p.basis.empty() ? std::string(" (its plugin states no promise)") : " (" + p.basis + ")") +
                      "; turn the mode off for this call (Options::deterministic = false) or this device "
                      "(Device::set_deterministic(false), ACCEL_DETERMINISTIC=0), or use another backend");
}

}  // namespace

OpPath resolve_path(const Device& device, Op op, const Options& o, DType dtype, GemmShape shape) {
    const bool deterministic = deterministic_mode(device, o);
    if (deterministic) check_determinism(device, op, dtype);
    if (!op_info(op).has_vendor_path) {
        if (o.path == PathChoice::vendor)
            throw Unsupported(std::string(op_name(op)) + " (" + dtype_name(dtype) + ", " + device.selector() +
                              "): there is no vendor path for this op on any backend; only matmul and dense have "
                              "one (use PathChoice::native or automatic)");
        return OpPath::native;
    }
    PathChoice choice = o.path;
    std::optional<std::string> from_env;  // ACCEL_OP_PATH's text, when it made the choice
    if (choice == PathChoice::automatic) {
        const std::string v = env::value("ACCEL_OP_PATH").value_or("");
        from_env = v;
        try {
            choice = parse_path_choice(v);
        } catch (const InvalidArgument&) {
            env::reject("ACCEL_OP_PATH", v, "is not an op path");
        }
    }
    if (choice == PathChoice::native) return OpPath::native;
    if (deterministic && choice == PathChoice::vendor)
        throw Unsupported(std::string(op_name(op)) + " (" + dtype_name(dtype) + ", " + device.selector() +
                          "): the vendor path was asked for (" +
                          (from_env ? "ACCEL_OP_PATH=" + detail::echo(*from_env) : std::string("Options::path")) +
                          ") in deterministic mode, which it cannot keep: a vendor library picks other kernels "
                          "and summation orders for other shapes and thread counts (row i of a product changes "
                          "with the batch size); use the native path or turn the mode off");
    if (deterministic) return OpPath::native;  // auto: never a measured choice
    const bool vendor = device.kernel_table().supports(op, dtype, OpPath::vendor);
    if (choice == PathChoice::vendor && !vendor)
        throw Unsupported(std::string(op_name(op)) + ": the vendor path was asked for (" +
                          (from_env ? "ACCEL_OP_PATH=" + detail::echo(*from_env) : std::string("Options::path")) +
                          ") but " +
                          device.selector() + " has no " + dtype_name(dtype) +
                          " vendor kernel (no vendor library in this build, or none for this dtype); use native");
    if (!vendor) return OpPath::native;
    if (choice == PathChoice::vendor) return OpPath::vendor;
    // automatic: f32 follows the measurement; other dtypes take the library
    // where it has the dtype (it outruns accel's kernels there), else native.
    if (dtype == DType::f32) return automatic_path(device, shape);
    return OpPath::vendor;
}

void add(const Tensor& a, const Tensor& b, Tensor& c, const Options& o) {
    elementwise(Op::add, {&a, &b}, {&c}, o, [](KernelArgs&) {});
}

void mul(const Tensor& a, const Tensor& b, Tensor& c, const Options& o) {
    elementwise(Op::mul, {&a, &b}, {&c}, o, [](KernelArgs&) {});
}

void copy(const Tensor& x, Tensor& y, const Options& o) {
    elementwise(Op::copy, {&x}, {&y}, o, [](KernelArgs&) {});
}

void scale(const Tensor& x, double s, Tensor& y, const Options& o) {
    elementwise(Op::scale, {&x}, {&y}, o, [&](KernelArgs& a) { a.scalars[0] = s; });
}

void triad(const Tensor& b, const Tensor& c, double s, Tensor& a, const Options& o) {
    elementwise(Op::triad, {&b, &c}, {&a}, o, [&](KernelArgs& k) { k.scalars[0] = s; });
}

void dot(const Tensor& a, const Tensor& b, Tensor& y, const Options& o) {
    const Op op = Op::dot;
    Device& d = same_device(op, {{"y", &y}, {"a", &a}, {"b", &b}});
    same_shape(op, {{"a", &a}, {"b", &b}});
    if (y.elements() != 1)
        reject(op, "output y has shape " + y.shape().to_string() + "; it must hold one element (shape [1]): the sum");
    no_alias(op, {"y", &y}, {{"a", &a}, {"b", &b}});
    const DType dtype = a.dtype();
    const OpPath path = resolve_path(d, op, o, dtype);
    Stream& s = stream_of(op, d, o);
    const std::size_t n = a.elements();
    const LaunchGeometry g = geometry_of(op, d, dtype, o, 1, std::max<std::size_t>(n, 1));
    Tensor partials;
    {
        detail::ScratchAllowed temporary;  // a graph capturing this call keeps it
        partials = Tensor(a.device_ptr(), Shape{std::max<std::size_t>(DotArgs::blocks_of(g), 1)},
                          dtype == DType::f64 ? DType::f64 : DType::f32);
    }
    KernelArgs args = args_for(dtype, path, g, s);
    args.in[0] = a.handle();
    args.in[1] = b.handle();
    args.out[0] = y.handle();
    args.out[1] = partials.handle();
    args.n = n;
    detail::run_kernel(d, op, args);
}

void sigmoid(const Tensor& x, Tensor& y, const Options& o) {
    elementwise(Op::sigmoid, {&x}, {&y}, o, [](KernelArgs&) {});
}

void relu(const Tensor& x, Tensor& y, const Options& o) {
    elementwise(Op::relu, {&x}, {&y}, o, [](KernelArgs&) {});
}

void relu_backward(const Tensor& dy, const Tensor& x, Tensor& dx, const Options& o) {
    elementwise(Op::relu_backward, {&dy, &x}, {&dx}, o, [](KernelArgs&) {});
}

void sigmoid_backward(const Tensor& dy, const Tensor& y, Tensor& dx, const Options& o) {
    elementwise(Op::sigmoid_backward, {&dy, &y}, {&dx}, o, [](KernelArgs&) {});
}

void gelu(const Tensor& x, Tensor& y, const Options& o) {
    elementwise(Op::gelu, {&x}, {&y}, o, [](KernelArgs&) {});
}

void gelu_tanh(const Tensor& x, Tensor& y, const Options& o) {
    elementwise(Op::gelu_tanh, {&x}, {&y}, o, [](KernelArgs&) {});
}

void gelu_backward(const Tensor& dy, const Tensor& x, Tensor& dx, const Options& o) {
    elementwise(Op::gelu_backward, {&dy, &x}, {&dx}, o, [](KernelArgs&) {});
}

void gelu_tanh_backward(const Tensor& dy, const Tensor& x, Tensor& dx, const Options& o) {
    elementwise(Op::gelu_tanh_backward, {&dy, &x}, {&dx}, o, [](KernelArgs&) {});
}

void matmul(const Tensor& a, const Tensor& b, Tensor& c, Transpose t, const Options& o) {
    const Op op = Op::matmul;
    Device& d = same_device(op, {{"a", &a}, {"b", &b}, {"c", &c}});
    need_rank(op, {"a", &a}, 2);
    need_rank(op, {"b", &b}, 2);
    need_rank(op, {"c", &c}, 2);
    const std::size_t m = t.a ? a.shape()[1] : a.shape()[0], ka = t.a ? a.shape()[0] : a.shape()[1];
    const std::size_t kb = t.b ? b.shape()[1] : b.shape()[0], n = t.b ? b.shape()[0] : b.shape()[1];
    if (ka != kb) {
        std::ostringstream s;
        s << "inner dimensions differ: op(a) is [" << m << ", " << ka << "] (a " << a.shape().to_string()
          << (t.a ? " transposed" : "") << ") and op(b) is [" << kb << ", " << n << "] (b " << b.shape().to_string()
          << (t.b ? " transposed" : "") << "); op(a) columns must equal op(b) rows";
        reject(op, s.str());
    }
    if (c.shape() != Shape{m, n})
        reject(op, "output c has shape " + c.shape().to_string() + "; it must be [" + std::to_string(m) + ", " +
                       std::to_string(n) + "] (rows of op(a), columns of op(b))");
    no_alias(op, {"c", &c}, {{"a", &a}, {"b", &b}});
    const DType dtype = c.dtype();
    const OpPath path = resolve_path(d, op, o, dtype, {m, n, ka, t.a, t.b});
    Stream& s = stream_of(op, d, o);
    if (path == OpPath::vendor) {
        // The library picks its own launches; a caller's geometry is still checked.
        if (o.geometry) check_geometry(*o.geometry, d.info().limits, op_name(op));
        instrument::Span span(d, "matmul", "composed");  // encloses gemm's trace event
        if (span.live())
            detail::trace_call(span, op, composed_args(dtype, {a.handle(), b.handle()}, c.handle(), [&](KernelArgs& k) {
                                   GemmArgs{m, n, ka, t.a, t.b}.store(k);
                               }));
        if (m && n) vendor_linear(d, dtype, a.handle(), b.handle(), nullptr, c.handle(), m, n, ka, t.a, t.b,
                                  Activation::none, s);
        return;
    }
    KernelArgs args = tiled_args(op, d, dtype, path, o, m, n, s);
    if (!m || !n) return;
    args.in = {a.handle(), b.handle()};
    args.out[0] = c.handle();
    GemmArgs{m, n, ka, t.a, t.b}.store(args);
    detail::run_kernel(d, op, args);
}

void dense(const Tensor& x, const Tensor& w, OptionalTensor bias_operand, Tensor& y, Activation act,
           const Options& o) {
    const Op op = Op::dense;
    const Tensor* bias = bias_operand ? &bias_operand->get() : nullptr;
    Device& d = same_device(op, {{"x", &x}, {"w", &w}, {"bias", bias}, {"y", &y}});
    need_rank(op, {"w", &w}, 2);
    const std::size_t out = w.shape()[0], in = w.shape()[1];
    const bool vec = x.shape().rank() == 1;
    const std::size_t batch = vec ? 1 : x.shape()[0];
    if (x.shape().cols() != in)
        reject(op, "x has shape " + x.shape().to_string() + " but w has shape " + w.shape().to_string() +
                       " ([out, in] as nn.Linear); x's last dimension must equal in = " + std::to_string(in));
    if (bias && bias->shape() != Shape{out})
        reject(op, "bias has shape " + bias->shape().to_string() + "; it must be [" + std::to_string(out) +
                       "] (out = rows of w " + w.shape().to_string() + ")");
    const Shape want = vec ? Shape{out} : Shape{batch, out};
    if (y.shape() != want)
        reject(op, "output y has shape " + y.shape().to_string() + "; it must be " + want.to_string() + " for x " +
                       x.shape().to_string() + " and w " + w.shape().to_string());
    no_alias(op, {"y", &y}, {{"x", &x}, {"w", &w}, {"bias", bias}});
    const DType dtype = y.dtype();
    const OpPath path = resolve_path(d, op, o, dtype, {batch, out, in, false, true});  // x·Wᵀ
    Stream& s = stream_of(op, d, o);
    if (path == OpPath::vendor) {
        if (o.geometry) check_geometry(*o.geometry, d.info().limits, op_name(op));
        instrument::Span span(d, "dense", "composed");  // encloses gemm's and bias_activation's
        if (span.live())
            detail::trace_call(span, op, composed_args(dtype, {x.handle(), w.handle(), handle_of(bias)}, y.handle(),
                                                       [&](KernelArgs& k) { DenseArgs{batch, in, out, act}.store(k); }));
        // x·Wᵀ: W is stored [out, in], so B = W transposed.
        if (batch && out)
            vendor_linear(d, dtype, x.handle(), w.handle(), handle_of(bias), y.handle(), batch, out, in, false, true,
                          act, s);
        return;
    }
    KernelArgs args = tiled_args(op, d, dtype, path, o, batch, out, s);
    if (!batch || !out) return;
    args.in = {x.handle(), w.handle(), handle_of(bias)};
    args.out[0] = y.handle();
    DenseArgs{batch, in, out, act}.store(args);
    detail::run_kernel(d, op, args);
}

void column_sum(const Tensor& x, Tensor& y, const Options& o) {
    const Op op = Op::column_sum;
    Device& d = same_device(op, {{"x", &x}, {"y", &y}});
    need_rank(op, {"x", &x}, 2);
    if (y.shape() != Shape{x.shape()[1]})
        reject(op, "output y has shape " + y.shape().to_string() + "; it must be [" + std::to_string(x.shape()[1]) +
                       "] (the columns of x " + x.shape().to_string() + ")");
    no_alias(op, {"y", &y}, {{"x", &x}});
    Stream& s = stream_of(op, d, o);
    const LaunchGeometry g = geometry_of(op, d, x.dtype(), o, 1, x.shape()[1]);
    if (!x.shape()[1]) return;
    KernelArgs args = args_for(x.dtype(), resolve_path(d, op, o, x.dtype()), g, s);
    args.in[0] = x.handle();
    args.out[0] = y.handle();
    MatrixArgs{x.shape()[0], x.shape()[1]}.store(args);
    detail::run_kernel(d, op, args);
}

void bce_with_logits(const Tensor& z, const Tensor& t, Tensor& l, const Options& o) {
    elementwise(Op::bce_with_logits, {&z, &t}, {&l}, o, [](KernelArgs&) {});
}

float bce_with_logits_loss(const Tensor& z, const Tensor& t, const Options& o) {
    detail::refuse_while_capturing("ops::bce_with_logits_loss",
                                   "it returns the loss to the host, which a replay cannot; call it after the replay "
                                   "(bce_with_logits_backward, which writes a tensor, can be captured)");
    const Op op = Op::bce_with_logits;
    Device& d = same_device(op, {{"z", &z}, {"t", &t}});
    same_shape(op, {{"z", &z}, {"t", &t}});
    if (deterministic_mode(d, o)) check_determinism(d, op, z.dtype());
    const std::size_t n = z.elements();
    if (n == 0) return std::nanf("");
    // Losses laid out as [rows, cols] (zero-padded) so that column_sum gives
    // `cols` partial sums of ≤ rows terms each, added on the host in double:
    // a single float32 running sum over 1e6 terms drifts by ~1e-3 relative.
    const DType dtype = z.dtype();
    const std::size_t cols = std::min<std::size_t>(n, 1024), rows = (n + cols - 1) / cols;
    Tensor l(z.device_ptr(), Shape{rows, cols}, dtype);
    Tensor partial(z.device_ptr(), Shape{cols}, dtype);
    if (rows * cols > n) {
        const std::vector<unsigned char> zeros((rows * cols - n) * dtype_size(dtype), 0);  // 0.0 in every dtype
        l.buffer().upload(zeros.data(), zeros.size(), n * dtype_size(dtype));
    }
    Stream& s = stream_of(op, d, o);
    instrument::Span span(d, "bce_with_logits_loss", "composed");
    if (span.live()) {
        span.arg("dtype", dtype_name(dtype));
        span.arg("shapes", "z" + dims_text({n}) + " t" + dims_text({n}) + " -> loss[]");  // the mean, to the host
    }
    KernelArgs a = args_for(dtype, OpPath::native, geometry_of(op, d, dtype, o, 1, n), s);
    a.in = {z.handle(), t.handle()};
    a.out[0] = l.handle();
    a.n = n;
    detail::run_kernel(d, op, a);
    KernelArgs sum = args_for(dtype, OpPath::native, d.default_geometry(Op::column_sum, dtype, 1, cols), s);
    sum.in[0] = l.handle();
    sum.out[0] = partial.handle();
    MatrixArgs{rows, cols}.store(sum);
    detail::run_kernel(d, Op::column_sum, sum);
    s.synchronize();
    double total = 0;
    for (double v : partial.download_as<double>()) total += v;
    return static_cast<float>(total / static_cast<double>(n));
}

void bce_with_logits_backward(const Tensor& z, const Tensor& t, Tensor& dz, const Options& o) {
    const double scale = z.elements() ? 1.0 / static_cast<double>(z.elements()) : 0.0;
    elementwise(Op::bce_with_logits_backward, {&z, &t}, {&dz}, o,
                [&](KernelArgs& a) { a.scalars[0] = scale; });
}

void bce_with_logits_backward_scaled(const Tensor& z, const Tensor& t, Tensor& dz, float scale, const Options& o) {
    if (!std::isfinite(scale))
        throw InvalidArgument("bce_with_logits_backward_scaled: scale " + std::to_string(scale) +
                              " is not finite; pass a finite weight such as 1/B for a batch of B elements");
    elementwise(Op::bce_with_logits_backward, {&z, &t}, {&dz}, o,
                [&](KernelArgs& a) { a.scalars[0] = scale; });
}

void convert(const Tensor& x, Tensor& y, const Options& o) {
    const Op op = Op::convert;
    Device& d = same_device(op, {{"y", &y}, {"x", &x}}, false);
    same_shape(op, {{"y", &y}, {"x", &x}});
    const OpPath path = resolve_path(d, op, o, y.dtype());
    Stream& s = stream_of(op, d, o);
    const std::size_t n = y.elements();
    const LaunchGeometry g = geometry_of(op, d, y.dtype(), o, 1, n);
    if (!n) return;
    KernelArgs a = args_for(y.dtype(), path, g, s);
    a.src_dtype = x.dtype();
    a.in[0] = x.handle();
    a.out[0] = y.handle();
    a.n = n;
    detail::run_kernel(d, op, a);
}

void dense_backward(const Tensor& x, const Tensor& w, const Tensor& y, const Tensor& dy, Activation act, Tensor* dx,
                    Tensor& dw, Tensor* db, const Options& o, OptionalTensor pre_activation) {
    const Op op = Op::dense;
    const bool needs_z = act == Activation::gelu || act == Activation::gelu_tanh;
    if (needs_z && !pre_activation)
        reject(op, std::string("backward: activation ") + activation_name(act) +
                       " needs pre_activation (z = x·Wᵀ + bias, the input of the activation): its derivative is not "
                       "a function of y");
    const Tensor* z = needs_z ? &pre_activation->get() : nullptr;
    same_device(op, {{"x", &x}, {"w", &w}, {"y", &y}, {"dy", &dy}, {"dx", dx}, {"dw", &dw}, {"db", db},
                     {"pre_activation", z}});
    need_rank(op, {"x", &x}, 2);
    need_rank(op, {"w", &w}, 2);
    same_shape(op, {{"y", &y}, {"dy", &dy}});
    if (z && z->shape() != y.shape())
        reject(op, "backward: pre_activation has shape " + z->shape().to_string() + "; it must be y's " +
                       y.shape().to_string());
    const std::size_t batch = x.shape()[0], in = x.shape()[1], out = w.shape()[0];
    if (w.shape()[1] != in || y.shape() != Shape{batch, out})
        reject(op, "backward: x " + x.shape().to_string() + ", w " + w.shape().to_string() + ", y " +
                       y.shape().to_string() + " are not the shapes of one dense layer (x [batch, in], w [out, in], "
                       "y [batch, out])");
    if (dw.shape() != w.shape())
        reject(op, "backward: dw has shape " + dw.shape().to_string() + "; it must be w's " + w.shape().to_string());
    if (db && db->shape() != Shape{out})
        reject(op, "backward: db has shape " + db->shape().to_string() + "; it must be [" + std::to_string(out) + "]");
    if (dx && dx->shape() != x.shape())
        reject(op, "backward: dx has shape " + dx->shape().to_string() + "; it must be x's " + x.shape().to_string());
    instrument::Span span(x.device(), "dense_backward", "composed");
    if (span.live()) {
        std::string shapes = "x" + dims_text(x.shape()) + " w" + dims_text(w.shape()) + " y" + dims_text(y.shape()) +
                             " dy" + dims_text(dy.shape());
        if (z) shapes += " pre_activation" + dims_text(z->shape());
        shapes += " ->";
        if (dx) shapes += " dx" + dims_text(dx->shape());
        shapes += " dw" + dims_text(dw.shape());
        if (db) shapes += " db" + dims_text(db->shape());
        span.arg("dtype", dtype_name(dw.dtype()));
        span.arg("shapes", shapes);
        span.arg("activation", activation_name(act));
    }
    Options plain = o;
    plain.geometry.reset();  // one geometry cannot fit the elementwise and the matmul kernels at once
    Options native_only = plain;  // the gradient's elementwise op and column_sum have no vendor path
    native_only.path = PathChoice::native;
    // dz = dy ⊙ act'(y): the gradient before the activation.
    Tensor dz_storage;
    const Tensor* dz = &dy;
    const auto gradient_before = [&](auto backward, const Tensor& of) {
        {
            detail::ScratchAllowed temporary;  // a graph capturing this call keeps it
            dz_storage = Tensor(dy.device_ptr(), dy.shape(), dy.dtype());
        }
        backward(dy, of, dz_storage, native_only);
        dz = &dz_storage;
    };
    switch (act) {  // no default: a new Activation must say its derivative here
        case Activation::none: break;
        case Activation::relu:  // y > 0 exactly where the pre-activation is > 0
            gradient_before([](auto&&... a) { relu_backward(a...); }, y);
            break;
        case Activation::sigmoid:  // σ'(z) = y·(1 − y)
            gradient_before([](auto&&... a) { sigmoid_backward(a...); }, y);
            break;
        case Activation::gelu:  // gelu'(z) from z itself
            gradient_before([](auto&&... a) { gelu_backward(a...); }, *z);
            break;
        case Activation::gelu_tanh:
            gradient_before([](auto&&... a) { gelu_tanh_backward(a...); }, *z);
            break;
    }
    matmul(*dz, x, dw, Transpose{true, false}, plain);  // dW[out,in] = dzᵀ[out,batch]·x[batch,in]
    if (db) column_sum(*dz, *db, native_only);          // db[out] = Σ_batch dz
    if (dx) matmul(*dz, w, *dx, Transpose{}, plain);     // dx[batch,in] = dz[batch,out]·W[out,in]
}

namespace {
// adam_step's scalars at step t (AdamScalarArgs; ops.hpp gives the math).
void adam_scalars(KernelArgs& a, const AdamParams& hp, std::size_t step) {
    const double bc1 = 1.0 - std::pow(static_cast<double>(hp.beta1), static_cast<double>(step));
    const double bc2 = 1.0 - std::pow(static_cast<double>(hp.beta2), static_cast<double>(step));
    AdamScalarArgs{hp.beta1, hp.beta2, hp.eps, hp.lr / bc1, std::sqrt(bc2)}.store(a);
}
}  // namespace

void adam_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, std::size_t step, const AdamParams& hp,
               const Options& o) {
    const Op op = Op::adam_step;
    if (step == 0) reject(op, "step is 0; Adam's step count t starts at 1");
    if (!(hp.lr > 0) || !(hp.eps > 0) || !(hp.beta1 >= 0 && hp.beta1 < 1) || !(hp.beta2 >= 0 && hp.beta2 < 1))
        reject(op, "hyper-parameters lr=" + detail::number(hp.lr) + " eps=" + detail::number(hp.eps) + " beta1=" + detail::number(hp.beta1) +
                       " beta2=" + detail::number(hp.beta2) + " rejected; need lr > 0, eps > 0, 0 <= beta < 1");
    elementwise(op, {&param, &grad, &m, &v}, {&param, &m, &v}, o, [&](KernelArgs& a) { adam_scalars(a, hp, step); });
}

void adam_step_from(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const std::size_t& step_count,
                    const AdamParams& hp, const Options& o) {
    if (!detail::capture_of_thread()) return adam_step(param, grad, m, v, step_count, hp, o);  // read once, now
    const std::size_t* count = &step_count;
    detail::ReplayUpdate at_replay([count, hp](KernelArgs& a) {
        if (*count == 0)
            throw InvalidArgument("adam_step_from: the step count is 0 at a replay; Adam's step count t starts at 1");
        adam_scalars(a, hp, *count);
    });
    adam_step(param, grad, m, v, step_count, hp, o);
}

void run(Op op, const std::vector<const Tensor*>& inputs, const std::vector<Tensor*>& outputs, const Options& o) {
    const OpInfo& info = op_info(op);
    if (inputs.size() != info.inputs.size() || outputs.size() != info.outputs.size())
        reject(op, "given " + std::to_string(inputs.size()) + " inputs and " + std::to_string(outputs.size()) +
                       " outputs; the op takes " + std::to_string(info.inputs.size()) + " and " +
                       std::to_string(info.outputs.size()));
    if (inputs.size() > 4 || outputs.size() > 4) reject(op, "ops::run takes at most 4 inputs and 4 outputs");
    for (std::size_t i = 0; i < outputs.size(); ++i)
        if (!outputs[i]) reject(op, "output '" + info.outputs[i] + "' is null");
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (!inputs[i]) reject(op, "input '" + info.inputs[i] + "' is null");
    elementwise_of(op, inputs, outputs, o, [](KernelArgs&) {});
}

}  // namespace ops

namespace {
// Tensor::to(DType) (core/src/tensor.cpp) converts through ops::convert.
const bool kConverterRegistered =
    (ops_layer::register_converter([](const Tensor& from, Tensor& to) { ops::convert(from, to); }), true);
}  // namespace

namespace diagnostics {

Probes& probes_of(Device& d, const char* what) {
    detail::refuse_while_capturing(what, "a benchmark probe is not recorded; run it outside the capture");
    Probes* p = d.probes();
    if (!p) throw Unsupported(std::string(what) + ": " + d.selector() + " has no benchmark probes");
    return *p;
}

void launch_empty(Device& d, Stream& stream) {
    if (&stream.device() != &d)
        throw InvalidArgument("launch_empty: the stream belongs to " + stream.device().selector() + ", not to " +
                              d.selector());
    probes_of(d, "launch_empty").launch_empty(stream);
}

namespace {
// The probe's stream: o.stream, which must be y's device's, else its default.
Stream& probe_stream(const Tensor& y, const ops::Options& o, const char* what) {
    if (!y.device_ptr())
        throw InvalidArgument(std::string(what) + ": tensor 'y' has no storage (default-constructed or moved-from)");
    Device& d = y.device();
    Stream& s = o.stream ? *o.stream : d.default_stream();
    if (&s.device() != &d)
        throw InvalidArgument(std::string(what) + ": Options::stream belongs to " + s.device().selector() +
                              " but y is on " + d.selector());
    return s;
}
}  // namespace

double fma_throughput(Tensor& y, std::size_t iterations, const ops::Options& o) {
    Stream& s = probe_stream(y, o, "fma_throughput");
    if (y.dtype() == DType::bf16)
        throw InvalidArgument("fma_throughput: y is bf16; the probe runs in a compute type, f32, f64 or f16 "
                              "(bf16 computes in f32: probe f32)");
    Device& d = y.device();
    const std::size_t n = y.elements();
    // Blocks of 256 work-items (each thousands of FMAs), as clpeak launches.
    LaunchGeometry g = geometry_1d(n, std::min<std::size_t>(256, d.info().limits.max_block_size), d.info().limits);
    if (o.geometry) {
        check_geometry(*o.geometry, d.info().limits, "fma_throughput");
        g = *o.geometry;
    }
    Probes& p = probes_of(d, "fma_throughput");
    if (n && iterations) p.fma_throughput(y.handle(), y.dtype(), n, iterations, g, s);
    return 16.0 * static_cast<double>(iterations) * static_cast<double>(n);
}

double matrix_throughput(Tensor& y, DType operands, std::size_t iterations, const ops::Options& o) {
    Stream& s = probe_stream(y, o, "matrix_throughput");
    Device& d = y.device();
    if (y.dtype() != DType::f32)
        throw InvalidArgument(std::string("matrix_throughput: y is ") + dtype_name(y.dtype()) +
                              "; it holds the f32 accumulators");
    if (operands != DType::f16 && operands != DType::bf16)
        throw InvalidArgument(std::string("matrix_throughput: operands in ") + dtype_name(operands) +
                              "; the matrix engine's probe takes f16 or bf16");
    const std::size_t n = y.elements();
    if (n % 32 != 0)
        throw InvalidArgument("matrix_throughput: y has " + std::to_string(n) +
                              " elements, not a multiple of 32 (one group of 32 lanes per 32)");
    if (o.geometry) throw InvalidArgument("matrix_throughput: the device chooses the geometry (Options::geometry is set)");
    Probes& p = probes_of(d, "matrix_throughput");
    if (n && iterations) {
        try {
            p.matrix_throughput(y.handle(), operands, n, iterations, s);
        } catch (const Unsupported& e) {
            throw Unsupported("matrix_throughput: " + d.selector() + ": " + e.what());
        }
    }
    return 8.0 * 4096.0 * static_cast<double>(iterations) * static_cast<double>(n / 32);
}

GemmCompute gemm_compute(Device& d, DType dtype, OpPath path) noexcept {
    if (Probes* p = d.probes()) return p->gemm_compute(dtype, path);
    return Probes::gemm_compute_default(dtype);
}

}  // namespace diagnostics
}  // namespace accel
