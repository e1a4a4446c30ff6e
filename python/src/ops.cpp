// ops.cpp — accel.ops: every op of accel/ops.hpp, and the operators of
// accel.Tensor (a + b, a * b with a tensor or a number, -a, a += b, a *= b,
// a @ b taking transposed views; a - b and a / b as TypeErrors). Each op takes its inputs, an
// optional output (allocated like the input when absent, and returned either
// way), the path ('auto', 'native', 'vendor') and an optional stream, runs
// with the GIL released (unless it is small: GilRelease), and raises
// InvalidArgument naming the operands as the Python call does (python_names).
//
// The elementwise ops of the op table (accel/op_table.hpp: one or two inputs
// and one output of one shape, OpInfo::elementwise_reference) are bound from
// their table entries, all alike (bind_table_ops): a new one needs no binding.
// The ops whose call differs from that form are bound by hand below it:
// matmul (transposes, an output of another shape), dense and dense_backward
// (activation, optional bias, several outputs), column_sum (a [cols] output
// of a [rows, cols] input), the losses (a value returned, a scale), convert
// (the output's dtype) and adam_step (hyper-parameters, in place, lists).
#include "binding.hpp"

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace accel_python {

namespace {

namespace ops = accel::ops;

constexpr auto owned = nb::rv_policy::take_ownership;

// The GIL is released around an op unless the op is small: below kSmallWork
// elements (multiply-adds for a product) it runs or is enqueued in about a
// microsecond, about what releasing and re-acquiring the GIL costs, so it
// keeps the GIL (NumPy's rule, NPY_BEGIN_THREADS_THRESHOLDED, at 500
// elements). Calls that wait for the device (a loss read back, copies,
// synchronize) always release it, except a loss on the host backend, whose
// ops run synchronously: it waits for nothing but its own work.
constexpr double kSmallWork = 32768;

class GilRelease {
public:
    explicit GilRelease(double work) {
        if (work >= kSmallWork) release_.emplace();
    }

private:
    std::optional<nb::gil_scoped_release> release_;
};

// Whether a read-back of `t` may wait for work queued before it: on every
// device but the host backend's, whose ops run synchronously in the calling
// thread (a read-back there costs its own work only).
bool waits_for_queue(const accel::Tensor& t) { return !t.device_ptr() || !is_host(t.device()); }

// Multiply-adds of a product: the elements of `a` times extent `i` of `b`
// (0 where b has no such extent: the op then rejects the shapes).
double product_work(const accel::Tensor& a, const accel::Tensor& b, std::size_t i) {
    return b.shape().rank() > i ? double(a.elements()) * double(b.shape()[i]) : 0.0;
}

// Python str arguments compared without a conversion (the usual values are these literals).
bool is(nb::handle text, const char* value) { return PyUnicode_CompareWithASCIIString(text.ptr(), value) == 0; }

ops::Options options(nb::handle path, PyStream* stream, nb::handle deterministic, const accel::Tensor& first,
                     const char* op) {
    ops::Options o;
    if (!deterministic.is_none()) o.deterministic = nb::cast<bool>(deterministic);
    o.path = is(path, "auto") ? ops::PathChoice::automatic : ops::parse_path_choice(nb::cast<std::string>(path));
    if (stream) {
        if (first.device_ptr() && stream->device != first.device_ptr())
            throw accel::InvalidArgument(std::string("accel.ops.") + op + ": the stream belongs to " +
                                         stream->device->selector() + ", the tensors to " + first.device().selector() +
                                         "; pass a stream of the tensors' device");
        o.stream = stream->stream;
    }
    return o;
}

// `out`, or a new tensor of `shape` and `dtype` on `like`'s device.
std::unique_ptr<PyTensor> output(PyTensor* out, const accel::Tensor& like, const accel::Shape& shape,
                                 accel::DType dtype) {
    if (out) return nullptr;
    if (!like.device_ptr()) throw accel::InvalidArgument("an input tensor has no storage");
    return std::make_unique<PyTensor>(accel::Tensor(like.device_ptr(), shape, dtype));
}

// The result: the caller's `out`, else the new tensor (ownership to Python).
PyTensor* result(PyTensor* out, std::unique_ptr<PyTensor>& made) { return out ? out : made.release(); }

accel::Activation activation(nb::handle name) { return ops::parse_activation(nb::cast<std::string>(name)); }

accel::Shape rank2(std::size_t r, std::size_t c) { return accel::Shape{r, c}; }

// Rank of a tensor checked before an output shape is derived from it.
void need_rank(const accel::Tensor& t, std::size_t rank, const char* op, const char* name) {
    if (t.shape().rank() != rank)
        throw accel::InvalidArgument(std::string("accel.ops.") + op + ": " + name + " has shape " +
                                     t.shape().to_string() + "; it must be rank " + std::to_string(rank));
}

// accel/ops.hpp names an op's output ('c' of add and matmul, 'y', 'dx', 'l', 'dz') where the Python call
// has `out`, or nothing when the binding made the output itself. Its InvalidArgument messages are re-raised
// with the Python names: the output is `out` where the caller gave one, else the input it was made like (the
// same shape, dtype and device, so a message can only name it as the other side of a mismatch with that
// input). Both forms the messages use are replaced: 'c' and "output c ".
struct Rename {
    const char* cpp;
    const char* python;
};

std::string python_names(std::string message, std::initializer_list<Rename> renames) {
    for (const Rename& r : renames) {
        const std::pair<std::string, std::string> forms[] = {
            {std::string("'") + r.cpp + "'", std::string("'") + r.python + "'"},
            {std::string("output ") + r.cpp + " ", std::string("output '") + r.python + "' "}};
        for (const auto& [from, to] : forms)
            for (std::size_t at = message.find(from); at != std::string::npos; at = message.find(from, at + to.size()))
                message.replace(at, from.size(), to);
    }
    return message;
}

// Runs `f` (an accel::ops call) with its InvalidArgument in the Python call's names (python_names).
template <class F>
void with_python_names(std::initializer_list<Rename> renames, F&& f) {
    try {
        f();
    } catch (const accel::InvalidArgument& e) {
        throw accel::InvalidArgument(python_names(e.what(), renames));
    }
}

// The Python name of output `cpp_out`: `out` where given, else input `like`, which it was made like.
Rename output_name(const char* cpp_out, const PyTensor* out, const char* like) {
    return {cpp_out, out ? "out" : like};
}

// An op of one output: `run(y)` (an accel::ops call) writes y, which is `out` where given, else a new tensor of
// `shape` and `dtype` on `like`'s device; the GIL released for `work` (GilRelease), the output named as `name`
// says (python_names). Returns y.
template <class F>
PyTensor* one_output(PyTensor* out, const accel::Tensor& like, const accel::Shape& shape, accel::DType dtype,
                     double work, Rename name, F&& run) {
    auto made = output(out, like, shape, dtype);
    accel::Tensor& y = out ? out->t : made->t;
    {
        GilRelease gil(work);
        with_python_names({name}, [&] { run(y); });
    }
    return result(out, made);
}

const char* kCommon =
    " Options: out (a Tensor to write, else a new one like the first input is made and returned), path ('auto', "
    "'native', 'vendor': accel's kernel or the platform's library; 'auto' follows ACCEL_OP_PATH, else the faster "
    "measured), stream (a Stream of the tensors' device; default its default stream), deterministic (True: "
    "deterministic mode for this call, bitwise reproducible results from the native kernel; False: off; None: "
    "the device's Device.deterministic). Enqueued on the stream: "
    "may return before the work ran (numpy() and synchronize() wait). GIL released while it runs (kept by an "
    "op under 32768 elements or multiply-adds, which takes about as long as releasing it). Raises "
    "InvalidArgument for mismatched shapes, dtypes or devices (naming them), Unsupported where the device has "
    "no kernel for the op, dtype and path.";

std::string doc(const std::string& what) { return what + kCommon; }

// ---- The op table's elementwise ops: bound from their entries -------------------------------------------

// Whether accel.ops has a function of `info`'s generic form: inputs..., out, path, stream.
bool is_elementwise(const accel::OpInfo& info) { return !info.kernel_only && info.elementwise_reference; }

// The names of the elementwise ops of the op table (what run() runs), in table order.
std::vector<std::string> elementwise_names() {
    std::vector<std::string> names;
    for (const accel::OpInfo* i : accel::op_table())
        if (is_elementwise(*i)) names.push_back(i->name);
    return names;
}

// Runs elementwise op `info` on `inputs` (as many as it takes, none null) into `out`, or into a new tensor like
// the first input.
PyTensor* run_elementwise(const accel::OpInfo& info, const std::vector<PyTensor*>& given, PyTensor* out,
                          nb::handle path, PyStream* stream, nb::handle deterministic) {
    const std::string what = "accel.ops." + info.name;
    std::vector<const accel::Tensor*> inputs;
    for (std::size_t i = 0; i < given.size(); ++i) {
        reject_view(given[i], what, info.inputs[i].c_str());
        inputs.push_back(&given[i]->t);
    }
    reject_view(out, what, "out");
    const accel::Tensor& first = *inputs[0];
    auto o = options(path, stream, deterministic, first, info.name.c_str());
    return one_output(out, first, first.shape(), first.dtype(), double(first.elements()),
                      output_name(info.outputs[0].c_str(), out, info.inputs[0].c_str()),
                      [&](accel::Tensor& y) { ops::run(info.op, inputs, {&y}, o); });
}

// The elementwise op named `name`; InvalidArgument naming the call `what` and where the names are, for another.
const accel::OpInfo& elementwise_op(const std::string& name, const char* what) {
    const accel::OpInfo* info = accel::find_op(name);
    if (!info || !is_elementwise(*info))
        throw accel::InvalidArgument(std::string(what) + ": '" + name +
                                     "' is not an elementwise op; see accel.elementwise_op_names()");
    return *info;
}

PyTensor* run_op(const std::string& name, const std::vector<PyTensor*>& inputs, PyTensor* out, nb::str path,
                 PyStream* stream, nb::handle deterministic) {
    const accel::OpInfo& info = elementwise_op(name, "accel.ops.run");
    if (inputs.size() != info.inputs.size() || std::count(inputs.begin(), inputs.end(), nullptr))
        throw accel::InvalidArgument("accel.ops." + name + ": " + std::to_string(inputs.size()) +
                                     " input(s) given; it takes " + std::to_string(info.inputs.size()) +
                                     " tensor(s)");
    return run_elementwise(info, inputs, out, path, stream, deterministic);
}

// "a, b" or "a or b": the names joined.
std::string joined(const std::vector<std::string>& names, const char* last_separator) {
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i)
        text += (i == 0 ? "" : i + 1 == names.size() ? last_separator : ", ") + names[i];
    return text;
}

// The docstring of an elementwise op's function, from its table entry.
std::string table_doc(const accel::OpInfo& info) {
    const std::string& y = info.outputs[0];
    return doc(info.math + ", elementwise (made from the op table's entry '" + info.name + "'). Inputs " +
               joined(info.inputs, " and ") + ", output " + y + ": one shape (rank 1 or 2) and dtype; " + y +
               " may be " + joined(info.inputs, " or ") + " (in place), not part of one.");
}

// The function of elementwise op `info`: NAME(inputs..., out=None, *, path='auto', stream=None), its inputs named
// as in the table.
template <class F, class... Inputs>
nb::object table_function(nb::handle scope, const accel::OpInfo& info, F&& f, Inputs... inputs) {
    return nb::cpp_function(std::forward<F>(f), nb::scope(scope), nb::name(info.name.c_str()), inputs...,
                            nb::arg("out").none() = nb::none(), nb::kw_only(), nb::arg("path") = "auto",
                            nb::arg("stream").none() = nb::none(),
                            nb::arg("deterministic").none() = nb::none(), owned, table_doc(info).c_str());
}

// `scope`: a module that gives the function its __module__ and holds nothing else. nanobind sets a function
// made in a scope as the scope's attribute, and joins a later one of the same name to it as an overload (which
// empties the first); the attribute is removed again, so that each function stands alone.
nb::object table_function(nb::handle scope, const accel::OpInfo& info) {
    const accel::OpInfo* op = &info;  // table entries live as long as the process
    nb::object function =
        info.inputs.size() == 1
            ? table_function(
                  scope, info,
                  [op](PyTensor& x, PyTensor* out, nb::str path, PyStream* stream, nb::handle deterministic) {
                      return run_elementwise(*op, {&x}, out, path, stream, deterministic);
                  },
                  nb::arg(info.inputs[0].c_str()))
            : table_function(
                  scope, info,
                  [op](PyTensor& a, PyTensor& b, PyTensor* out, nb::str path, PyStream* stream,
                      nb::handle deterministic) {
                      return run_elementwise(*op, {&a, &b}, out, path, stream, deterministic);
                  },
                  nb::arg(info.inputs[0].c_str()), nb::arg(info.inputs[1].c_str()));
    nb::delattr(scope, info.name.c_str());
    return function;
}

void bind_table_ops(nb::module_& m) {
    m.def("op_names", []() {
            std::vector<std::string> names;
            for (const accel::OpInfo* i : accel::op_table())
                if (!i->kernel_only) names.push_back(i->name);
            return names;
        },
          "The names of accel's ops (accel.ops has one function each), in op-table order.");
    m.def("nmse_threshold", [](const std::string& op, const DTypeArg& dtype) {
            const accel::OpInfo* info = accel::find_op(op);
            if (!info) throw accel::InvalidArgument("nmse_threshold: no op named '" + op + "'; see accel.op_names()");
            return accel::nmse_threshold(info->op, dtype.get());
        },
          nb::arg("op"), nb::arg("dtype"),
          "The op's pass threshold of the normalized mean squared error against a float64 reference given the "
          "inputs as stored, sum((y - ref)^2) / sum(ref^2), in `dtype` (a name or a NumPy dtype; accel's op table, the conformance "
          "suite's criterion). Raises InvalidArgument for an unknown op or dtype.");
    m.def("run", &run_op,
          nb::arg("op"), nb::arg("inputs"), nb::arg("out").none() = nb::none(), nb::kw_only(),
          nb::arg("path") = "auto", nb::arg("stream").none() = nb::none(),
          nb::arg("deterministic").none() = nb::none(), owned,
          doc("Runs elementwise op `op` (a name of accel.elementwise_op_names(): one or two inputs and one output, "
              "all of one shape and dtype, no scalars) on `inputs`, e.g. run('mul', [a, b]). accel.ops has a "
              "function of the same name for each such op, this one underneath. Raises InvalidArgument for an "
              "unknown or non-elementwise op name and for the wrong number of inputs.")
              .c_str());
    m.def("elementwise_op_names", &elementwise_names,
          "The names of the elementwise ops of the op table (accel.ops.run runs each), in table order.");
    // The functions' scope (table_function): an empty module of this one's name, their __module__; not this
    // module, whose functions an op's name may match.
    nb::object scope = nb::steal(PyModule_NewObject(m.attr("__name__").ptr()));
    if (!scope.is_valid()) throw nb::python_error();
    m.def("elementwise_function", [scope](const std::string& op) {
            return table_function(scope, elementwise_op(op, "elementwise_function"));
        },
          nb::arg("op"), nb::sig("def elementwise_function(op: str) -> typing.Callable[..., Tensor]"),
          "A new function of elementwise op `op` (a name of accel.elementwise_op_names()), made from its op-table "
          "entry: op(inputs..., out=None, *, path='auto', stream=None), the inputs named and the docstring "
          "written from the entry; accel.ops holds one of each. Raises InvalidArgument for a name that is no "
          "elementwise op.");
}

// ---- Ops whose call has a form of its own -----------------------------------------------------------------

// A matmul operand: a transposed view (Tensor.T) is its base with the transpose flag flipped, no copy.
const accel::Tensor& operand(const PyTensor& p, bool& transposed) {
    transposed = transposed != p.is_view();
    return p.storage();
}

PyTensor* matmul_op(PyTensor& a_given, PyTensor& b_given, PyTensor* out, bool trans_a, bool trans_b, nb::str path,
                    PyStream* stream, nb::handle deterministic) {
    reject_view(out, "accel.ops.matmul", "out");
    const accel::Tensor& a = operand(a_given, trans_a);
    const accel::Tensor& b = operand(b_given, trans_b);
    auto o = options(path, stream, deterministic, a, "matmul");
    std::unique_ptr<PyTensor> made;
    if (!out) {
        need_rank(a, 2, "matmul", "a");
        need_rank(b, 2, "matmul", "b");
        const std::size_t rows = trans_a ? a.shape()[1] : a.shape()[0];
        const std::size_t cols = trans_b ? b.shape()[0] : b.shape()[1];
        made = output(out, a, rank2(rows, cols), a.dtype());
    }
    accel::Tensor& c = out ? out->t : made->t;
    {
        GilRelease gil(product_work(c, a, trans_a ? 0 : 1));  // c[m, n] · k
        // An output made here has the shape the op asks for: only one given as `out` can be named.
        with_python_names({output_name("c", out, "c")},
                          [&] { ops::matmul(a, b, c, ops::Transpose{trans_a, trans_b}, o); });
    }
    return result(out, made);
}

PyTensor* dense_op(PyTensor& x, PyTensor& w, PyTensor* bias, PyTensor* out, nb::str act, nb::str path,
                   PyStream* stream, nb::handle deterministic) {
    for (auto [p, name] : {std::pair<const PyTensor*, const char*>{&x, "x"}, {&w, "w"}, {bias, "bias"}, {out, "out"}})
        reject_view(p, "accel.ops.dense (y = x @ w.T + bias: for x @ m of a view m use accel.ops.matmul or @)", name);
    auto o = options(path, stream, deterministic, x.t, "dense");
    const accel::Activation a = activation(act);
    std::unique_ptr<PyTensor> made;
    if (!out) {
        need_rank(w.t, 2, "dense", "w");
        const std::size_t n = w.t.shape()[0];
        made = output(out, x.t, x.t.shape().rank() == 2 ? rank2(x.t.shape()[0], n) : accel::Shape{n}, x.t.dtype());
    }
    accel::Tensor& y = out ? out->t : made->t;
    {
        GilRelease gil(product_work(x.t, w.t, 0));  // x[batch, in] · out
        accel::OptionalTensor b;
        if (bias) b = std::cref(bias->t);
        with_python_names({output_name("y", out, "y")}, [&] { ops::dense(x.t, w.t, b, y, a, o); });
    }
    return result(out, made);
}

// The gradients dense_backward was asked for: a tensor given, or one made here, or None where not wanted.
struct Gradient {
    PyTensor* given = nullptr;
    std::unique_ptr<PyTensor> made;
    bool wanted = true;

    accel::Tensor* tensor() { return wanted ? (given ? &given->t : &made->t) : nullptr; }
    nb::object python() {
        if (!wanted) return nb::none();
        if (given) return nb::borrow(nb::find(given));
        return nb::cast(made.release(), nb::rv_policy::take_ownership);
    }
};

nb::tuple dense_backward_op(PyTensor& x, PyTensor& w, PyTensor& y, PyTensor& dy, nb::str act, PyTensor* dx,
                            PyTensor* dw, PyTensor* db, bool with_dx, bool with_db, nb::str path, PyStream* stream,
                                nb::handle deterministic,
                            PyTensor* pre_activation) {
    for (auto [p, name] : {std::pair<const PyTensor*, const char*>{&x, "x"}, {&w, "w"}, {&y, "y"}, {&dy, "dy"},
                           {dx, "dx"}, {dw, "dw"}, {db, "db"}, {pre_activation, "pre_activation"}})
        reject_view(p, "accel.ops.dense_backward", name);
    auto o = options(path, stream, deterministic, x.t, "dense_backward");
    const accel::Activation a = activation(act);
    need_rank(w.t, 2, "dense_backward", "w");
    Gradient gx{dx, nullptr, with_dx}, gw{dw, nullptr, true}, gb{db, nullptr, with_db};
    if (with_dx && !dx) gx.made = output(nullptr, x.t, x.t.shape(), x.t.dtype());
    if (!dw) gw.made = output(nullptr, x.t, w.t.shape(), w.t.dtype());
    if (with_db && !db) gb.made = output(nullptr, x.t, accel::Shape{w.t.shape()[0]}, w.t.dtype());
    {
        GilRelease gil(product_work(x.t, w.t, 0));
        accel::OptionalTensor z;
        if (pre_activation) z = std::cref(pre_activation->t);
        ops::dense_backward(x.t, w.t, y.t, dy.t, a, gx.tensor(), *gw.tensor(), gb.tensor(), o, z);
    }
    return nb::make_tuple(gx.python(), gw.python(), gb.python());
}

PyTensor* column_sum_op(PyTensor& x, PyTensor* out, nb::str path, PyStream* stream, nb::handle deterministic) {
    reject_view(&x, "accel.ops.column_sum", "x");
    reject_view(out, "accel.ops.column_sum", "out");
    auto o = options(path, stream, deterministic, x.t, "column_sum");
    need_rank(x.t, 2, "column_sum", "x");
    return one_output(out, x.t, accel::Shape{x.t.shape()[1]}, x.t.dtype(), double(x.t.elements()),
                      output_name("y", out, "y"), [&](accel::Tensor& y) { ops::column_sum(x.t, y, o); });
}

void bind_linear_ops(nb::module_& m) {
    m.def("matmul", &matmul_op,
          nb::arg("a"), nb::arg("b"), nb::arg("out").none() = nb::none(), nb::kw_only(), nb::arg("trans_a") = false,
          nb::arg("trans_b") = false, nb::arg("path") = "auto", nb::arg("stream").none() = nb::none(),
          nb::arg("deterministic").none() = nb::none(), owned,
          doc("c[M, N] = op(a) @ op(b), row-major: op(a) is a [M, K] (a [K, M] with trans_a), op(b) is b [K, N] "
              "(b [N, K] with trans_b). All rank 2; c must not be a or b.")
              .c_str());
    m.def("dense", &dense_op,
          nb::arg("x"), nb::arg("w"), nb::arg("bias").none() = nb::none(), nb::arg("out").none() = nb::none(),
          nb::arg("activation") = "none", nb::kw_only(), nb::arg("path") = "auto",
          nb::arg("stream").none() = nb::none(), nb::arg("deterministic").none() = nb::none(), owned,
          doc("y[batch, out] = act(x[batch, in] @ w[out, in].T + bias[out]) (w laid out as torch.nn.Linear.weight); "
              "bias optional (None: no bias); x may be rank 1 [in] (y then [out]); activation 'none', 'relu', "
              "'sigmoid', 'gelu' or 'gelu_tanh'. y must not be x, w or bias.")
              .c_str());
    m.def("dense_backward", &dense_backward_op,
          nb::arg("x"), nb::arg("w"), nb::arg("y"), nb::arg("dy"), nb::arg("activation") = "none",
          nb::arg("dx").none() = nb::none(), nb::arg("dw").none() = nb::none(), nb::arg("db").none() = nb::none(),
          nb::arg("with_dx") = true, nb::arg("with_db") = true, nb::kw_only(), nb::arg("path") = "auto",
          nb::arg("stream").none() = nb::none(),
          nb::arg("deterministic").none() = nb::none(), nb::arg("pre_activation").none() = nb::none(),
          nb::sig("def dense_backward(x: Tensor, w: Tensor, y: Tensor, dy: Tensor, activation: str = 'none', "
                  "dx: Tensor | None = None, dw: Tensor | None = None, db: Tensor | None = None, "
                  "with_dx: bool = True, with_db: bool = True, *, path: str = 'auto', stream: Stream | None = None, "
                  "deterministic: bool | None = None, "
                  "pre_activation: Tensor | None = None) -> tuple[Tensor | None, Tensor, Tensor | None]"),
          doc("Gradients of dense given dy (dL/dy) and the forward's x, w and output y (read for 'relu' and "
              "'sigmoid'): returns (dx [batch, in] or None, dw [out, in], db [out] or None). dx, dw, db: tensors "
              "to write, or None for new ones; with_dx / with_db False skips that gradient (None returned). The "
              "`out` option is dw. 'gelu' and 'gelu_tanh' need pre_activation, z = x @ w.T + bias [batch, out] "
              "(dense with activation 'none'): their derivative is not a function of y; InvalidArgument without "
              "it.")
              .c_str());
    m.def("column_sum", &column_sum_op,
          nb::arg("x"), nb::arg("out").none() = nb::none(), nb::kw_only(), nb::arg("path") = "auto",
          nb::arg("stream").none() = nb::none(), nb::arg("deterministic").none() = nb::none(), owned,
          doc("y[c] = sum over r of x[r, c]: x rank 2 [rows, cols], y rank 1 [cols].").c_str());
}

double bce_loss_op(PyTensor& z, PyTensor& t, nb::str path, PyStream* stream, nb::handle deterministic) {
    reject_view(&z, "accel.ops.bce_with_logits_loss", "z");
    reject_view(&t, "accel.ops.bce_with_logits_loss", "t");
    auto o = options(path, stream, deterministic, z.t, "bce_with_logits_loss");
    GilRelease gil(waits_for_queue(z.t) ? kSmallWork : double(z.t.elements()));
    return static_cast<double>(ops::bce_with_logits_loss(z.t, t.t, o));
}

PyTensor* bce_backward_op(PyTensor& z, PyTensor& t, PyTensor* out, nb::object scale, nb::str path,
                          PyStream* stream, nb::handle deterministic) {
    for (auto [p, name] : {std::pair<const PyTensor*, const char*>{&z, "z"}, {&t, "t"}, {out, "out"}})
        reject_view(p, "accel.ops.bce_with_logits_backward", name);
    auto o = options(path, stream, deterministic, z.t, "bce_with_logits_backward");
    const bool scaled = !scale.is_none();
    const float s = scaled ? nb::cast<float>(scale) : 0.0f;
    return one_output(out, z.t, z.t.shape(), z.t.dtype(), double(z.t.elements()), output_name("dz", out, "z"),
                      [&](accel::Tensor& dz) {
                          if (scaled) ops::bce_with_logits_backward_scaled(z.t, t.t, dz, s, o);
                          else ops::bce_with_logits_backward(z.t, t.t, dz, o);
                      });
}

PyTensor* convert_op(PyTensor& x, PyTensor* out, nb::object dtype, nb::str path, PyStream* stream,
                     nb::handle deterministic) {
    reject_view(&x, "accel.ops.convert", "x");
    reject_view(out, "accel.ops.convert", "out");
    auto o = options(path, stream, deterministic, x.t, "convert");
    const accel::DType d = dtype.is_none() ? x.t.dtype() : dtype_from(dtype);
    return one_output(out, x.t, x.t.shape(), d, double(x.t.elements()), output_name("y", out, "x"),
                      [&](accel::Tensor& y) { ops::convert(x.t, y, o); });
}

PyTensor* scale_op(PyTensor& x, double s, PyTensor* out, nb::str path, PyStream* stream, nb::handle deterministic) {
    reject_view(&x, "accel.ops.scale", "x");
    reject_view(out, "accel.ops.scale", "out");
    auto o = options(path, stream, deterministic, x.t, "scale");
    return one_output(out, x.t, x.t.shape(), x.t.dtype(), double(x.t.elements()), output_name("y", out, "x"),
                      [&](accel::Tensor& y) { ops::scale(x.t, s, y, o); });
}

PyTensor* triad_op(PyTensor& b, PyTensor& c, double s, PyTensor* out, nb::str path, PyStream* stream,
                   nb::handle deterministic) {
    for (auto [p, name] : {std::pair<const PyTensor*, const char*>{&b, "b"}, {&c, "c"}, {out, "out"}})
        reject_view(p, "accel.ops.triad", name);
    auto o = options(path, stream, deterministic, b.t, "triad");
    return one_output(out, b.t, b.t.shape(), b.t.dtype(), double(b.t.elements()), output_name("a", out, "b"),
                      [&](accel::Tensor& a) { ops::triad(b.t, c.t, s, a, o); });
}

PyTensor* dot_op(PyTensor& a, PyTensor& b, PyTensor* out, nb::str path, PyStream* stream, nb::handle deterministic) {
    for (auto [p, name] : {std::pair<const PyTensor*, const char*>{&a, "a"}, {&b, "b"}, {out, "out"}})
        reject_view(p, "accel.ops.dot", name);
    auto o = options(path, stream, deterministic, a.t, "dot");
    return one_output(out, a.t, accel::Shape{1}, a.t.dtype(), double(a.t.elements()), output_name("y", out, "y"),
                      [&](accel::Tensor& y) { ops::dot(a.t, b.t, y, o); });
}

void bind_stream_ops(nb::module_& m) {
    m.def("scale", &scale_op,
          nb::arg("x"), nb::arg("s"), nb::arg("out").none() = nb::none(), nb::kw_only(), nb::arg("path") = "auto",
          nb::arg("stream").none() = nb::none(), nb::arg("deterministic").none() = nb::none(), owned,
          doc("y = s * x elementwise (BabelStream's mul): s a float, rounded once to the compute type (float64 for "
              "f64, float32 otherwise); y may be x.")
              .c_str());
    m.def("triad", &triad_op,
          nb::arg("b"), nb::arg("c"), nb::arg("s"), nb::arg("out").none() = nb::none(), nb::kw_only(),
          nb::arg("path") = "auto", nb::arg("stream").none() = nb::none(), nb::arg("deterministic").none() = nb::none(),
          owned,
          doc("a = b + s * c elementwise (BabelStream's triad); b, c, a: one shape; a may be b or c.").c_str());
    m.def("dot", &dot_op,
          nb::arg("a"), nb::arg("b"), nb::arg("out").none() = nb::none(), nb::kw_only(), nb::arg("path") = "auto",
          nb::arg("stream").none() = nb::none(), nb::arg("deterministic").none() = nb::none(), owned,
          doc("y[0] = sum over i of a[i] * b[i] (BabelStream's dot), accumulated in the compute type in a fixed "
              "order (the same bits on every run); a, b: one shape; y: a new or given tensor of shape [1].")
              .c_str());
}

void bind_loss_and_convert_ops(nb::module_& m) {
    m.def("bce_with_logits_loss", &bce_loss_op,
          nb::arg("z"), nb::arg("t"), nb::kw_only(), nb::arg("path") = "auto", nb::arg("stream").none() = nb::none(),
          nb::arg("deterministic").none() = nb::none(),
          "The mean of bce_with_logits over all elements (float, computed in float32), returned to the host: "
          "blocking (waits for the stream). Empty inputs give NaN, as PyTorch. path, stream and errors as the "
          "other ops.");
    m.def("bce_with_logits_backward", &bce_backward_op,
          nb::arg("z"), nb::arg("t"), nb::arg("out").none() = nb::none(), nb::kw_only(),
          nb::arg("scale").none() = nb::none(), nb::arg("path") = "auto", nb::arg("stream").none() = nb::none(),
          nb::arg("deterministic").none() = nb::none(),
          nb::sig("def bce_with_logits_backward(z: Tensor, t: Tensor, out: Tensor | None = None, *, "
                  "scale: float | None = None, path: str = 'auto', stream: Stream | None = None, "
                  "deterministic: bool | None = None) -> Tensor"),
          owned,
          doc("dz = (sigmoid(z) - t) * scale, scale 1/n (n = elements, the gradient of the mean loss) unless "
              "given (finite). z, t, dz: one shape.")
              .c_str());
    m.def("convert", &convert_op,
          nb::arg("x"), nb::arg("out").none() = nb::none(), nb::kw_only(), nb::arg("dtype").none() = nb::none(),
          nb::arg("path") = "auto", nb::arg("stream").none() = nb::none(), nb::arg("deterministic").none() = nb::none(),
          nb::sig("def convert(x: Tensor, out: Tensor | None = None, *, dtype: str | numpy.typing.DTypeLike | None = None, "
                  "path: str = 'auto', stream: Stream | None = None, deterministic: bool | None = None) -> Tensor"),
          owned,
          doc("y = x converted to y's dtype elementwise (widening exact, narrowing to nearest, ties to even; NaN "
              "and Inf kept). Give out, or dtype for a new tensor ('f32', 'f64', 'f16', 'bf16', or a NumPy dtype "
              "such as numpy.float16).")
              .c_str());
}

ops::AdamParams adam_params(double lr, double beta1, double beta2, double eps) {
    ops::AdamParams hp;
    hp.lr = static_cast<float>(lr);
    hp.beta1 = static_cast<float>(beta1);
    hp.beta2 = static_cast<float>(beta2);
    hp.eps = static_cast<float>(eps);
    return hp;
}

// The step of an adam_step call: a number, or a StepCount read at every enqueue (ops::adam_step_from), which a
// graph capturing the call keeps alive.
struct AdamStep {
    std::size_t number = 0;
    const PyStepCount* count = nullptr;
    void keep_alive_while_capturing() const {
        if (count) accel_python::keep_alive_while_capturing(count->count);
    }
    void run(PyTensor& param, PyTensor& grad, PyTensor& m, PyTensor& v, const ops::AdamParams& hp,
             const ops::Options& o) const {
        with_python_names({{"p", "param"}}, [&] {
            if (count)
                ops::adam_step_from(param.t, grad.t, m.t, v.t, *count->count, hp, o);
            else
                ops::adam_step(param.t, grad.t, m.t, v.t, number, hp, o);
        });
    }
};

void adam_step_single(PyTensor& param, PyTensor& grad, PyTensor& m, PyTensor& v, const AdamStep& step, double lr,
                      double beta1, double beta2, double eps, nb::str path, PyStream* stream, nb::handle deterministic) {
    for (auto [p, name] : {std::pair<const PyTensor*, const char*>{&param, "param"}, {&grad, "grad"}, {&m, "m"},
                           {&v, "v"}})
        reject_view(p, "accel.ops.adam_step", name);
    auto o = options(path, stream, deterministic, param.t, "adam_step");
    const ops::AdamParams hp = adam_params(lr, beta1, beta2, eps);
    step.keep_alive_while_capturing();
    GilRelease gil(double(param.t.elements()));
    step.run(param, grad, m, v, hp, o);
}

void adam_step_op(PyTensor& param, PyTensor& grad, PyTensor& m, PyTensor& v, std::size_t step, double lr,
                  double beta1, double beta2, double eps, nb::str path, PyStream* stream, nb::handle deterministic) {
    adam_step_single(param, grad, m, v, AdamStep{step, nullptr}, lr, beta1, beta2, eps, path, stream, deterministic);
}

void adam_step_count_op(PyTensor& param, PyTensor& grad, PyTensor& m, PyTensor& v, const PyStepCount& step,
                        double lr, double beta1, double beta2, double eps, nb::str path, PyStream* stream,
                        nb::handle deterministic) {
    adam_step_single(param, grad, m, v, AdamStep{0, &step}, lr, beta1, beta2, eps, path, stream, deterministic);
}

void adam_step_lists(const std::vector<PyTensor*>& params, const std::vector<PyTensor*>& grads,
                     const std::vector<PyTensor*>& ms, const std::vector<PyTensor*>& vs, const AdamStep& step,
                     double lr, double beta1, double beta2, double eps, nb::str path, PyStream* stream,
                     nb::handle deterministic) {
    if (grads.size() != params.size() || ms.size() != params.size() || vs.size() != params.size())
        throw accel::InvalidArgument("accel.ops.adam_step: " + std::to_string(params.size()) + " params, " +
                                     std::to_string(grads.size()) + " grads, " + std::to_string(ms.size()) +
                                     " m and " + std::to_string(vs.size()) + " v; give one of each per parameter");
    for (std::size_t i = 0; i < params.size(); ++i)
        if (!params[i] || !grads[i] || !ms[i] || !vs[i])
            throw accel::InvalidArgument("accel.ops.adam_step: entry " + std::to_string(i) + " is None");
    for (const auto* list : {&params, &grads, &ms, &vs})
        for (const PyTensor* p : *list) reject_view(p, "accel.ops.adam_step", "a list entry");
    const ops::AdamParams hp = adam_params(lr, beta1, beta2, eps);
    if (params.empty()) return;
    // One Options for all: each call still checks its tensors and the stream against each other.
    const ops::Options o = options(path, stream, deterministic, params[0]->t, "adam_step");
    double elements = 0;
    for (const PyTensor* p : params) elements += double(p->t.elements());
    step.keep_alive_while_capturing();
    GilRelease gil(elements);
    for (std::size_t i = 0; i < params.size(); ++i) step.run(*params[i], *grads[i], *ms[i], *vs[i], hp, o);
}

void adam_step_list_op(const std::vector<PyTensor*>& params, const std::vector<PyTensor*>& grads,
                       const std::vector<PyTensor*>& ms, const std::vector<PyTensor*>& vs, std::size_t step,
                       double lr, double beta1, double beta2, double eps, nb::str path, PyStream* stream,
                       nb::handle deterministic) {
    adam_step_lists(params, grads, ms, vs, AdamStep{step, nullptr}, lr, beta1, beta2, eps, path, stream,
                    deterministic);
}

void adam_step_list_count_op(const std::vector<PyTensor*>& params, const std::vector<PyTensor*>& grads,
                             const std::vector<PyTensor*>& ms, const std::vector<PyTensor*>& vs,
                             const PyStepCount& step, double lr, double beta1, double beta2, double eps, nb::str path,
                             PyStream* stream, nb::handle deterministic) {
    adam_step_lists(params, grads, ms, vs, AdamStep{0, &step}, lr, beta1, beta2, eps, path, stream, deterministic);
}

void bind_adam_step(nb::module_& m) {
    nb::class_<PyStepCount>(m, "StepCount",
                            "An optimizer's step count that adam_step reads each time its kernel is enqueued: at "
                            "the call and at every replay of a graph that captured the call (as PyTorch's "
                            "Adam(capturable=True) keeps its step on the device). Capture one training step once, "
                            "then advance the count and replay: count += 1; graph.launch(). A graph keeps the "
                            "StepCounts its ops read alive. Thread-safety: not synchronized; change it while no "
                            "replay that reads it is being enqueued.")
        .def(nb::init<>())
        .def("__init__", [](PyStepCount* self, std::size_t value) {
                new (self) PyStepCount();
                *self->count = value;
            }, nb::arg("value"), "A count starting at `value` (the 1-based step of the next update; 0 until then).")
        .def_prop_rw("value", [](const PyStepCount& c) { return *c.count; },
                     [](PyStepCount& c, std::size_t v) { *c.count = v; }, "The count (int >= 0).")
        .def("__iadd__", [](PyStepCount& c, std::size_t n) -> PyStepCount& {
                *c.count += n;
                return c;
            }, nb::rv_policy::none, "Advances the count by n.")
        .def("__int__", [](const PyStepCount& c) { return *c.count; })
        .def("__index__", [](const PyStepCount& c) { return *c.count; })
        .def("__repr__", [](const PyStepCount& c) { return "accel.StepCount(" + std::to_string(*c.count) + ")"; });
    m.def("adam_step", &adam_step_op,
          nb::arg("param"), nb::arg("grad"), nb::arg("m"), nb::arg("v"), nb::arg("step"), nb::kw_only(),
          nb::arg("lr") = 1e-3, nb::arg("beta1") = 0.9, nb::arg("beta2") = 0.999, nb::arg("eps") = 1e-8,
          nb::arg("path") = "auto", nb::arg("stream").none() = nb::none(), nb::arg("deterministic").none() = nb::none(),
          "One Adam update of param in place (torch.optim.Adam's arithmetic, single-tensor form): m = beta1*m + "
          "(1-beta1)*g; v = beta2*v + (1-beta2)*g*g; param -= lr/(1-beta1^step) * m / (sqrt(v)/sqrt(1-beta2^step) "
          "+ eps). m and v: moments of param's shape, zeroed before step 1; step: the 1-based step count. Computed "
          "in float32 (float64 for f64). Returns None. Raises InvalidArgument for step 0, lr or eps not positive, "
          "betas outside [0, 1). path, stream, GIL and the other errors as the other ops.");
    m.def("adam_step", &adam_step_list_op,
          nb::arg("param"), nb::arg("grad"), nb::arg("m"), nb::arg("v"), nb::arg("step"), nb::arg("lr") = 1e-3,
          nb::kw_only(), nb::arg("beta1") = 0.9, nb::arg("beta2") = 0.999, nb::arg("eps") = 1e-8,
          nb::arg("path") = "auto", nb::arg("stream").none() = nb::none(), nb::arg("deterministic").none() = nb::none(),
          "adam_step over lists of tensors (as torch.optim.Adam's foreach form): param[i] updated from grad[i], "
          "m[i], v[i], one after the other on the stream, in one call. The lists must have one length. Errors "
          "as the single-tensor form; a rejected entry leaves the later ones untouched.");
    m.def("adam_step", &adam_step_count_op,
          nb::arg("param"), nb::arg("grad"), nb::arg("m"), nb::arg("v"), nb::arg("step"), nb::kw_only(),
          nb::arg("lr") = 1e-3, nb::arg("beta1") = 0.9, nb::arg("beta2") = 0.999, nb::arg("eps") = 1e-8,
          nb::arg("path") = "auto", nb::arg("stream").none() = nb::none(), nb::arg("deterministic").none() = nb::none(),
          "adam_step with `step` an accel.StepCount, read each time the update is enqueued: at this call and at "
          "every replay of a graph that captured it (ops::adam_step_from). Raises InvalidArgument as adam_step "
          "for a count of 0 at the call or at a replay.");
    m.def("adam_step", &adam_step_list_count_op,
          nb::arg("param"), nb::arg("grad"), nb::arg("m"), nb::arg("v"), nb::arg("step"), nb::arg("lr") = 1e-3,
          nb::kw_only(), nb::arg("beta1") = 0.9, nb::arg("beta2") = 0.999, nb::arg("eps") = 1e-8,
          nb::arg("path") = "auto", nb::arg("stream").none() = nb::none(), nb::arg("deterministic").none() = nb::none(),
          "The list form with `step` an accel.StepCount (see the single-tensor form).");
}

// ---- The operators of accel.Tensor, defined here beside the ops they run -----------------------------------

// Whether NumPy would broadcast shapes a and b (aligned from the last dimension, each pair equal or one of them 1).
bool broadcastable(const accel::Shape& a, const accel::Shape& b) {
    for (std::size_t i = 1; i <= std::min(a.rank(), b.rank()); ++i) {
        const std::size_t x = a[a.rank() - i], y = b[b.rank() - i];
        if (x != y && x != 1 && y != 1) return false;
    }
    return true;
}

// a SYMBOL b as accel.ops.NAME(a, b) into `out` (nullptr: a new tensor): elementwise op `name` of the table, the
// default path and stream. Shapes NumPy would broadcast are a TypeError naming what accel has instead.
PyTensor* elementwise_operator(const char* name, const char* symbol, PyTensor& a, PyTensor& b, PyTensor* out) {
    const accel::Shape& sa = a.storage().shape();
    const accel::Shape& sb = b.storage().shape();
    if (!a.is_view() && !b.is_view() && sa != sb && broadcastable(sa, sb))
        throw nb::type_error(("accel.Tensor " + std::string(symbol) + " accel.Tensor: shapes " + sa.to_string() +
                              " and " + sb.to_string() + "; accel does not broadcast (the operands of an "
                              "elementwise op have one shape). A bias row added to x @ w.T: accel.ops.dense(x, w, "
                              "bias); other broadcasts on the host: numpy.asarray(a) " + symbol + " numpy.asarray(b)")
                                 .c_str());
    return run_elementwise(elementwise_op(name, "accel.Tensor operator"), {&a, &b}, out, nb::str("auto"), nullptr,
                           nb::none());
}

// a SYMBOL s for a Python number s: elementwise op `name` with a tensor of a's shape, dtype and device holding s
// (rounded to a's dtype, as NumPy rounds a Python scalar to an array's dtype), into `out` (nullptr: a new tensor).
PyTensor* scalar_operator(const char* name, PyTensor& a, double s, PyTensor* out) {
    reject_view(&a, std::string("accel.ops.") + name, "a");
    if (!a.t.device_ptr()) throw accel::InvalidArgument("the tensor has no storage");
    PyTensor filled(filled_tensor(a.t.device_ptr(), a.t.shape(), a.t.dtype(), s));
    return run_elementwise(elementwise_op(name, "accel.Tensor operator"), {&a, &filled}, out, nb::str("auto"),
                           nullptr, nb::none());
}

// a - b: the op table's elementwise 'sub' where there is one (a plugin's, or a later table's), else TypeError.
PyTensor* sub_operator(PyTensor& a, PyTensor& b) {
    const accel::OpInfo* sub = accel::find_op("sub");
    if (!sub || !is_elementwise(*sub) || sub->inputs.size() != 2)
        throw nb::type_error(("accel.Tensor - accel.Tensor: accel has no elementwise op 'sub' (its elementwise "
                              "ops: " + joined(elementwise_names(), ", ") + "); add the negation, a + (-b) "
                              "(the same result: IEEE 754 subtraction is the addition of the negated operand), "
                              "subtract on the host (numpy.asarray(a) - numpy.asarray(b)) or add a 'sub' op to the "
                              "op table")
                                 .c_str());
    return run_elementwise(*sub, {&a, &b}, nullptr, nb::str("auto"), nullptr, nb::none());
}

// a - s and s - a for a Python number s: TypeError naming the additions that give the same result.
[[noreturn]] void no_scalar_subtraction(const PyTensor&, double) {
    throw nb::type_error("accel.Tensor - number: accel has no elementwise op 'sub'; add the negation: a + (-s) "
                         "for a - s, -a + s for s - a (the same results: IEEE 754 subtraction is the addition of "
                         "the negated operand)");
}

// a / b and its reflected and in-place forms: accel has no division.
[[noreturn]] void no_division(nb::handle, nb::handle) {
    throw nb::type_error("accel.Tensor / ...: accel has no division op; for a / s multiply by the reciprocal, "
                         "a * (1 / s) (which can differ from a / s in the last bit), else divide on the host: "
                         "numpy.asarray(a) / numpy.asarray(b)");
}

// Binds method `name` of Tensor: `f` with the operator's docstring (one overload of several where the name repeats).
template <class F, class Extra = std::decay_t<decltype(owned)>>
void tensor_operator(const char* name, F&& f, const std::string& doc_text, Extra extra = owned) {
    nb::cpp_function_def(std::forward<F>(f), nb::scope(nb::type<PyTensor>()), nb::name(name), nb::is_method(),
                         nb::is_operator(), nb::arg("other"), extra, doc_text.c_str());
}

void bind_operators() {
    const std::string operand =
        " The other operand a Tensor of the same device (an operand of another type gives NotImplemented: Python "
        "then tries its operator); a new output, the default path ('auto') and stream. Raises what the op raises; "
        "TypeError for shapes NumPy would broadcast (accel does not) and for a transposed view (Tensor.T).";
    const std::string scalar =
        " With a Python number s: the op with a tensor of a's shape, dtype and device holding s (rounded to a's "
        "dtype, as NumPy rounds a Python scalar; made by an upload).";
    struct Forms {
        const char *name, *reflected, *in_place, *op, *symbol;
    };
    for (const Forms& f : {Forms{"__add__", "__radd__", "__iadd__", "add", "+"},
                           Forms{"__mul__", "__rmul__", "__imul__", "mul", "*"}}) {
        const char *name = f.name, *op = f.op, *symbol = f.symbol;
        const std::string what = std::string("a ") + symbol + " b: accel.ops." + op + "(a, b), elementwise; one "
                                 "shape and dtype.";
        tensor_operator(name, [op = op, symbol = symbol](PyTensor& a, PyTensor& b) {
            return elementwise_operator(op, symbol, a, b, nullptr);
        }, what + operand);
        tensor_operator(name, [op = op](PyTensor& a, double s) { return scalar_operator(op, a, s, nullptr); },
                        what + scalar);
        // s + a, s * a: both ops commute exactly (IEEE 754 addition and multiplication are commutative).
        tensor_operator(f.reflected,
                        [op = op](PyTensor& a, double s) { return scalar_operator(op, a, s, nullptr); },
                        std::string("s ") + symbol + " a for a Python number s: a " + symbol + " s." + scalar);
        // a += b, a *= b: into a's own storage (NumPy's in-place semantics: every name of a sees the change).
        const char* in_place = f.in_place;
        const std::string in_place_doc = std::string("a ") + symbol + "= b: accel.ops." + op + "(a, b, out=a), "
                                         "into a's own storage (as NumPy: every name bound to a sees it); b a "
                                         "Tensor of a's shape, dtype and device, or a Python number. Returns a.";
        tensor_operator(in_place, [op = op, symbol = symbol](PyTensor& a, PyTensor& b) {
            return elementwise_operator(op, symbol, a, b, &a);
        }, in_place_doc, nb::rv_policy::reference);
        tensor_operator(in_place, [op = op](PyTensor& a, double s) { return scalar_operator(op, a, s, &a); },
                        in_place_doc, nb::rv_policy::reference);
    }
    nb::cpp_function_def([](PyTensor& a) { return scalar_operator("mul", a, -1.0, nullptr); },
                         nb::scope(nb::type<PyTensor>()), nb::name("__neg__"), nb::is_method(), owned,
                         "-a: accel.ops.mul(a, -1) elementwise, a new tensor (negation is exact in every dtype).");
    tensor_operator("__matmul__",
                    [](PyTensor& a, PyTensor& b) {
                        return matmul_op(a, b, nullptr, false, false, nb::str("auto"), nullptr, nb::none());
                    },
                    "a @ b: accel.ops.matmul(a, b), c[M, N] = a[M, K] @ b[K, N]; both rank 2; a transposed view "
                    "(Tensor.T) is taken through matmul's transpose flag, no copy." + operand);
    tensor_operator("__sub__", &sub_operator,
                    "a - b: the op table's elementwise op 'sub' where it has one; accel's own table has none, and "
                    "then this raises TypeError naming the elementwise ops there are." + operand);
    for (const auto& [name, sig] :
         {std::pair<const char*, const char*>{"__sub__", "def __sub__(self, other: float) -> typing.NoReturn"},
          {"__rsub__", "def __rsub__(self, other: float) -> typing.NoReturn"}})
        tensor_operator(name, &no_scalar_subtraction, std::string("Raises TypeError: a - s is a + (-s), s - a is -a + s."),
                        nb::sig(sig));
    for (const auto& [name, sig] :
         {std::pair<const char*, const char*>{"__truediv__", "def __truediv__(self, other: object) -> typing.NoReturn"},
          {"__rtruediv__", "def __rtruediv__(self, other: object) -> typing.NoReturn"},
          {"__itruediv__", "def __itruediv__(self, other: object) -> typing.NoReturn"}})
        nb::cpp_function_def(&no_division, nb::scope(nb::type<PyTensor>()), nb::name(name), nb::is_method(),
                             nb::arg("other"), nb::sig(sig),
                             "Raises TypeError: accel has no division; multiply by a reciprocal or use NumPy.");
}

}  // namespace

void bind_ops(nb::module_& m) {
    bind_table_ops(m);
    bind_linear_ops(m);
    bind_loss_and_convert_ops(m);
    bind_stream_ops(m);
    bind_adam_step(m);
    bind_operators();
}

}  // namespace accel_python
