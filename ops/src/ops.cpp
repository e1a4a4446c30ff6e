// The op front-end: every shape, device and geometry check lives here, once.
#include <accel/error.hpp>
#include <accel/ops.hpp>

#include "text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace accel {

// The one place that reaches a device's protected kernels.
struct KernelAccess {
    static Device& dev(const Tensor& t) { return t.device(); }
#define ACCEL_FORWARD(name)                                                   \
    template <class... A>                                                     \
    static void name(Device& d, A&&... a) { d.k_##name(std::forward<A>(a)...); }
    ACCEL_FORWARD(add)
    ACCEL_FORWARD(sigmoid)
    ACCEL_FORWARD(relu)
    ACCEL_FORWARD(relu_backward)
    ACCEL_FORWARD(sigmoid_backward)
    ACCEL_FORWARD(matmul)
    ACCEL_FORWARD(dense)
    ACCEL_FORWARD(column_sum)
    ACCEL_FORWARD(bce_with_logits)
    ACCEL_FORWARD(bce_with_logits_backward)
    ACCEL_FORWARD(adam_step)
    ACCEL_FORWARD(fma_throughput)
#undef ACCEL_FORWARD
};

namespace ops {
namespace {

using K = KernelAccess;

struct Named {
    const char* name;
    const Tensor* t;
};

// A float for a message: shortest of fixed or exponent form, 6 significant
// digits (1e-08, not std::to_string's 0.000000).
std::string num(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

[[noreturn]] void reject(Op op, const std::string& why) {
    throw InvalidArgument(std::string(op_name(op)) + ": " + why);
}

// All tensors allocated (non-default) and on one device; returns that device.
Device& same_device(Op op, const std::vector<Named>& ts) {
    Device* d = nullptr;
    const char* first = nullptr;
    for (const auto& n : ts) {
        if (!n.t) continue;
        if (!n.t->device_ptr())
            reject(op, std::string("tensor '") + n.name + "' has no device (default-constructed)");
        if (!d) {
            d = &n.t->device();
            first = n.name;
        } else if (&n.t->device() != d) {
            reject(op, std::string("tensor '") + n.name + "' is on " + n.t->device().selector() + " but '" + first +
                           "' is on " + d->selector() + "; all operands must be on one device");
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
        if (n.t && n.t->handle() && n.t->handle() == out.t->handle())
            reject(op, std::string("output '") + out.name + "' aliases input '" + n.name +
                           "'; give a separate output tensor");
}

Stream& stream_of(Op op, Device& d, const Options& o) {
    if (!o.stream) return d.default_stream();
    if (&o.stream->device() != &d)
        reject(op, "Options::stream belongs to " + o.stream->device().selector() + " but the tensors are on " +
                       d.selector());
    return *o.stream;
}

LaunchGeometry geometry_of(Op op, Device& d, const Options& o, std::size_t rows, std::size_t cols) {
    if (!o.geometry) return d.default_geometry(op, rows, cols);
    check_geometry(*o.geometry, d.info().limits, op_name(op));
    return *o.geometry;
}

// matmul/dense: the native kernel's geometry. The vendor path picks its own
// launches, so there the default (which may not fit a native launch of a
// very tall or wide output) is neither computed nor checked; a caller's
// geometry is still checked against the limits.
LaunchGeometry linear_geometry(Op op, Device& d, const Options& o, OpPath path, std::size_t rows, std::size_t cols) {
    if (path == OpPath::vendor && !o.geometry) return LaunchGeometry{};
    return geometry_of(op, d, o, rows, cols);
}

// Shared checks and launch for the one-input, one-output elementwise ops.
template <class Launch>
void elementwise(Op op, std::initializer_list<Named> ins, Tensor& out, const char* out_name, const Options& o,
                 Launch launch) {
    std::vector<Named> all{{out_name, &out}};
    all.insert(all.end(), ins.begin(), ins.end());
    Device& d = same_device(op, all);
    same_shape(op, all);
    resolve_path(d, op, o);  // rejects an explicit vendor request: these ops have none
    Stream& s = stream_of(op, d, o);
    const std::size_t n = out.elements();
    const LaunchGeometry g = geometry_of(op, d, o, 1, n);
    if (n) launch(d, n, g, s);
}

}  // namespace

PathChoice parse_path_choice(const std::string& text) {
    const std::string t = detail::lower(detail::trim(text));
    if (t.empty() || t == "auto") return PathChoice::automatic;
    if (t == "native") return PathChoice::native;
    if (t == "vendor") return PathChoice::vendor;
    throw InvalidArgument("op path '" + detail::echo(text) + "' is not one of native, vendor or auto");
}

OpPath resolve_path(const Device& device, Op op, const Options& o) {
    if (!has_vendor_path(op)) {
        if (o.path == PathChoice::vendor)
            throw Unsupported(std::string(op_name(op)) + ": there is no vendor path for this op on any backend; "
                              "only matmul and dense have one (use PathChoice::native or automatic)");
        return OpPath::native;
    }
    PathChoice choice = o.path;
    std::string source = "Options::path";
    if (choice == PathChoice::automatic) {
        const char* env = std::getenv("ACCEL_OP_PATH");
        const std::string v = env ? env : "";
        source = "ACCEL_OP_PATH=" + detail::echo(v);
        try {
            choice = parse_path_choice(v);
        } catch (const InvalidArgument& e) {
            throw InvalidArgument(std::string("ACCEL_OP_PATH: ") + e.what());
        }
    }
    if (choice == PathChoice::native) return OpPath::native;
    const bool vendor = device.supports(op, OpPath::vendor);
    if (choice == PathChoice::vendor && !vendor)
        throw Unsupported(std::string(op_name(op)) + ": the vendor path was asked for (" + source + ") but " +
                          device.selector() + " has none (built without its vendor library); use native");
    if (!vendor) return OpPath::native;
    return choice == PathChoice::vendor ? OpPath::vendor : path_evidence(device).path;
}

void add(const Tensor& a, const Tensor& b, Tensor& c, const Options& o) {
    elementwise(Op::add, {{"a", &a}, {"b", &b}}, c, "c", o,
                [&](Device& d, std::size_t n, const LaunchGeometry& g, Stream& s) {
                    K::add(d, a.handle(), b.handle(), c.handle(), n, g, s);
                });
}

void sigmoid(const Tensor& x, Tensor& y, const Options& o) {
    elementwise(Op::sigmoid, {{"x", &x}}, y, "y", o, [&](Device& d, std::size_t n, const LaunchGeometry& g, Stream& s) {
        K::sigmoid(d, x.handle(), y.handle(), n, g, s);
    });
}

void relu(const Tensor& x, Tensor& y, const Options& o) {
    elementwise(Op::relu, {{"x", &x}}, y, "y", o, [&](Device& d, std::size_t n, const LaunchGeometry& g, Stream& s) {
        K::relu(d, x.handle(), y.handle(), n, g, s);
    });
}

void relu_backward(const Tensor& dy, const Tensor& x, Tensor& dx, const Options& o) {
    elementwise(Op::relu_backward, {{"dy", &dy}, {"x", &x}}, dx, "dx", o,
                [&](Device& d, std::size_t n, const LaunchGeometry& g, Stream& s) {
                    K::relu_backward(d, dy.handle(), x.handle(), dx.handle(), n, g, s);
                });
}

void sigmoid_backward(const Tensor& dy, const Tensor& y, Tensor& dx, const Options& o) {
    elementwise(Op::sigmoid_backward, {{"dy", &dy}, {"y", &y}}, dx, "dx", o,
                [&](Device& d, std::size_t n, const LaunchGeometry& g, Stream& s) {
                    K::sigmoid_backward(d, dy.handle(), y.handle(), dx.handle(), n, g, s);
                });
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
    const OpPath path = resolve_path(d, op, o);
    Stream& s = stream_of(op, d, o);
    const LaunchGeometry g = linear_geometry(op, d, o, path, m, n);
    if (m && n) K::matmul(d, a.handle(), b.handle(), c.handle(), m, n, ka, t.a, t.b, path, g, s);
}

void dense(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y, Activation act, const Options& o) {
    const Op op = Op::dense;
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
    const OpPath path = resolve_path(d, op, o);
    Stream& s = stream_of(op, d, o);
    const LaunchGeometry g = linear_geometry(op, d, o, path, batch, out);
    if (batch && out)
        K::dense(d, x.handle(), w.handle(), bias ? bias->handle() : nullptr, y.handle(), batch, in, out, act, path, g, s);
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
    const LaunchGeometry g = geometry_of(op, d, o, 1, x.shape()[1]);
    if (x.shape()[1]) K::column_sum(d, x.handle(), y.handle(), x.shape()[0], x.shape()[1], g, s);
}

void bce_with_logits(const Tensor& z, const Tensor& t, Tensor& l, const Options& o) {
    elementwise(Op::bce_with_logits, {{"z", &z}, {"t", &t}}, l, "l", o,
                [&](Device& d, std::size_t n, const LaunchGeometry& g, Stream& s) {
                    K::bce_with_logits(d, z.handle(), t.handle(), l.handle(), n, g, s);
                });
}

float bce_with_logits_loss(const Tensor& z, const Tensor& t, const Options& o) {
    const Op op = Op::bce_with_logits;
    Device& d = same_device(op, {{"z", &z}, {"t", &t}});
    same_shape(op, {{"z", &z}, {"t", &t}});
    const std::size_t n = z.elements();
    if (n == 0) return std::nanf("");
    // Losses laid out as [rows, cols] (zero-padded) so that column_sum gives
    // `cols` partial sums of ≤ rows terms each, added on the host in double:
    // a single float32 running sum over 1e6 terms drifts by ~1e-3 relative.
    const std::size_t cols = std::min<std::size_t>(n, 1024), rows = (n + cols - 1) / cols;
    Tensor l(z.device_ptr(), Shape{rows, cols});
    Tensor partial(z.device_ptr(), Shape{cols});
    if (rows * cols > n) {
        const std::vector<float> zeros(rows * cols - n, 0.0f);
        l.buffer().upload(zeros.data(), zeros.size() * sizeof(float), n * sizeof(float));
    }
    Stream& s = stream_of(op, d, o);
    K::bce_with_logits(d, z.handle(), t.handle(), l.handle(), n, geometry_of(op, d, o, 1, n), s);
    K::column_sum(d, l.handle(), partial.handle(), rows, cols, d.default_geometry(Op::column_sum, 1, cols), s);
    s.synchronize();
    double total = 0;
    for (float v : partial.download()) total += v;
    return static_cast<float>(total / static_cast<double>(n));
}

void bce_with_logits_backward(const Tensor& z, const Tensor& t, Tensor& dz, const Options& o) {
    const float scale = z.elements() ? 1.0f / static_cast<float>(z.elements()) : 0.0f;
    elementwise(Op::bce_with_logits_backward, {{"z", &z}, {"t", &t}}, dz, "dz", o,
                [&](Device& d, std::size_t n, const LaunchGeometry& g, Stream& s) {
                    K::bce_with_logits_backward(d, z.handle(), t.handle(), dz.handle(), n, scale, g, s);
                });
}

void bce_with_logits_backward_scaled(const Tensor& z, const Tensor& t, Tensor& dz, float scale, const Options& o) {
    if (!std::isfinite(scale))
        throw InvalidArgument("bce_with_logits_backward_scaled: scale " + std::to_string(scale) +
                              " is not finite; pass a finite weight such as 1/B for a batch of B elements");
    elementwise(Op::bce_with_logits_backward, {{"z", &z}, {"t", &t}}, dz, "dz", o,
                [&](Device& d, std::size_t n, const LaunchGeometry& g, Stream& s) {
                    K::bce_with_logits_backward(d, z.handle(), t.handle(), dz.handle(), n, scale, g, s);
                });
}

void dense_backward(const Tensor& x, const Tensor& w, const Tensor& y, const Tensor& dy, Activation act, Tensor* dx,
                    Tensor& dw, Tensor* db, const Options& o) {
    const Op op = Op::dense;
    same_device(op, {{"x", &x}, {"w", &w}, {"y", &y}, {"dy", &dy}, {"dx", dx}, {"dw", &dw}, {"db", db}});
    need_rank(op, {"x", &x}, 2);
    need_rank(op, {"w", &w}, 2);
    same_shape(op, {{"y", &y}, {"dy", &dy}});
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
    Options plain = o;
    plain.geometry.reset();  // one geometry cannot fit the elementwise and the matmul kernels at once
    // dz = dy ⊙ act'(y): the gradient before the activation.
    Tensor dz_storage;
    const Tensor* dz = &dy;
    if (act != Activation::none) {
        dz_storage = Tensor(dy.device_ptr(), dy.shape());
        if (act == Activation::relu)
            relu_backward(dy, y, dz_storage, plain);  // y > 0 exactly where the pre-activation is > 0
        else
            sigmoid_backward(dy, y, dz_storage, plain);
        dz = &dz_storage;
    }
    matmul(*dz, x, dw, Transpose{true, false}, plain);  // dW[out,in] = dzᵀ[out,batch]·x[batch,in]
    if (db) column_sum(*dz, *db, plain);                // db[out] = Σ_batch dz
    if (dx) matmul(*dz, w, *dx, Transpose{}, plain);     // dx[batch,in] = dz[batch,out]·W[out,in]
}

void adam_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, std::size_t step, const AdamParams& hp,
               const Options& o) {
    const Op op = Op::adam_step;
    if (step == 0) reject(op, "step is 0; Adam's step count t starts at 1");
    if (!(hp.lr > 0) || !(hp.eps > 0) || !(hp.beta1 >= 0 && hp.beta1 < 1) || !(hp.beta2 >= 0 && hp.beta2 < 1))
        reject(op, "hyper-parameters lr=" + num(hp.lr) + " eps=" + num(hp.eps) + " beta1=" + num(hp.beta1) +
                       " beta2=" + num(hp.beta2) + " rejected; need lr > 0, eps > 0, 0 <= beta < 1");
    const double bc1 = 1.0 - std::pow(static_cast<double>(hp.beta1), static_cast<double>(step));
    const double bc2 = 1.0 - std::pow(static_cast<double>(hp.beta2), static_cast<double>(step));
    const float step_size = static_cast<float>(hp.lr / bc1);
    const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
    elementwise(op, {{"grad", &grad}, {"m", &m}, {"v", &v}}, param, "param", o,
                [&](Device& d, std::size_t n, const LaunchGeometry& g, Stream& s) {
                    K::adam_step(d, param.handle(), grad.handle(), m.handle(), v.handle(), n, hp.beta1, hp.beta2,
                                 hp.eps, step_size, bc2_sqrt, g, s);
                });
}

double fma_throughput(Tensor& y, std::size_t iterations, const Options& o) {
    const Op op = Op::fma_throughput;
    Device& d = same_device(op, {{"y", &y}});
    Stream& s = stream_of(op, d, o);
    const std::size_t n = y.elements();
    const LaunchGeometry g = geometry_of(op, d, o, 1, n);
    if (n && iterations) K::fma_throughput(d, y.handle(), n, iterations, g, s);
    return 16.0 * static_cast<double>(iterations) * static_cast<double>(n);
}

}  // namespace ops
}  // namespace accel
