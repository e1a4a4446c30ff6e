// tensor.cpp — accel.Tensor, its exchange with NumPy (numpy(), __array__,
// copy_from, accel.from_numpy), its transposed view (T, contiguous()),
// float(t), the NumPy habits it answers with a TypeError naming what to use
// (indexing, reductions, reshape), and the tensor factories (accel.empty,
// zeros, ones, full); DLPack is dlpack.cpp's. On the host backend __array__
// is a view of the tensor's own memory; every other exchange with NumPy copies.
#include "exchange.hpp"

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace accel_python {

namespace {

std::mutex host_tensors_mutex;
std::unordered_map<const void*, PyTensor*> host_tensors;  // live host tensors by data pointer

using ShapeTuple = nb::typed<nb::tuple, int, nb::ellipsis>;
ShapeTuple shape_tuple(const accel::Shape& s) {
    if (s.rank() == 1) return ShapeTuple(nb::make_tuple(s[0]));
    return ShapeTuple(nb::make_tuple(s[0], s[1]));
}

// A host buffer owned by a capsule, for arrays handed to Python.
HostCopy host_buffer(std::size_t bytes) {
    HostCopy c;
    c.data = ::operator new(bytes ? bytes : 1);
    c.owner = nb::capsule(c.data, [](void* p) noexcept { ::operator delete(p); });
    return c;
}

bool have_ml_dtypes() {
    static int state = -1;
    if (state < 0) {
        try {
            nb::module_::import_("ml_dtypes");
            state = 1;
        } catch (const nb::python_error&) {
            state = 0;
        }
    }
    return state == 1;
}

nb::object to_numpy(const accel::Tensor& t) {
    HostCopy c = download(t);
    const std::size_t shape[2] = {t.shape()[0], t.shape().rank() == 2 ? t.shape()[1] : 0};
    const std::size_t ndim = t.shape().rank();
    if (t.dtype() != accel::DType::bf16) {
        nb::ndarray<nb::numpy> a(c.data, ndim, shape, c.owner, nullptr, dl_dtype(t.dtype()));
        return nb::cast(a, nb::rv_policy::reference);
    }
    nb::ndarray<nb::numpy, std::uint16_t> bits(c.data, ndim, shape, c.owner);
    nb::object raw = nb::cast(bits, nb::rv_policy::reference);
    if (have_ml_dtypes()) return raw.attr("view")(nb::module_::import_("ml_dtypes").attr("bfloat16"));
    // No ml_dtypes: float32 values (bfloat16 widens to float32 exactly).
    std::vector<float> wide(t.elements());
    accel::convert_elements(c.data, accel::DType::bf16, wide.data(), accel::DType::f32, wide.size());
    HostCopy w = host_buffer(wide.size() * sizeof(float));
    std::memcpy(w.data, wide.data(), wide.size() * sizeof(float));
    nb::ndarray<nb::numpy, float> a(w.data, ndim, shape, w.owner);
    return nb::cast(a, nb::rv_policy::reference);
}

// Host memory `data` of `src` dtype, `count` elements, uploaded into `t` (converted to its dtype).
void upload(accel::Tensor& t, const void* data, accel::DType src, std::size_t count) {
    if (count != t.elements())
        throw accel::InvalidArgument("upload: " + std::to_string(count) + " elements for a tensor of shape " +
                                     t.shape().to_string());
    if (!t.bytes()) return;
    nb::gil_scoped_release release;
    if (src == t.dtype()) {
        t.buffer().upload(data, t.bytes());
    } else {
        std::vector<unsigned char> raw(t.bytes());
        accel::convert_elements(data, src, raw.data(), t.dtype(), count);
        t.buffer().upload(raw.data(), raw.size());
    }
}

// A C-contiguous host array of `obj`: its own memory where it exports a
// C-contiguous float32/float64/float16 buffer (the buffer protocol, the
// fast path), else a numpy.ascontiguousarray copy (bfloat16 viewed as uint16).
class HostArray {
public:
    HostArray(nb::handle obj, const char* what) {
        if (PyObject_CheckBuffer(obj.ptr()) &&
            PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
            has_view_ = true;
            if (from_view()) return;
        } else {
            PyErr_Clear();  // not a contiguous buffer: the general path below
        }
        nb::module_ np = nb::module_::import_("numpy");
        nb::object arr = np.attr("ascontiguousarray")(obj);
        const std::string name = nb::cast<std::string>(arr.attr("dtype").attr("name"));
        bool bf16 = false;
        if (name == "bfloat16") {
            arr = arr.attr("view")(np.attr("uint16"));
            bf16 = true;
        }
        keep_ = arr;
        if (!nb::try_cast(arr, nd_))
            throw accel::InvalidArgument(std::string(what) + ": cannot read an array of dtype " + name +
                                         "; accel tensors hold float32, float64, float16 or bfloat16 elements: "
                                         "convert first (e.g. array.astype(numpy.float32))");
        dtype = bf16 ? accel::DType::bf16 : from_dl_dtype(nd_.dtype(), what);
        data = nd_.data();
        count = nd_.size();
        ndim = std::min<std::size_t>(nd_.ndim(), dims.size());
        for (std::size_t i = 0; i < ndim; ++i) dims[i] = nd_.shape(i);
    }
    ~HostArray() {
        if (has_view_) PyBuffer_Release(&view_);
    }
    HostArray(const HostArray&) = delete;
    HostArray& operator=(const HostArray&) = delete;

    const void* data = nullptr;
    std::size_t count = 0;
    std::array<std::int64_t, 64> dims{};  // NumPy's most dimensions
    std::size_t ndim = 0;
    accel::DType dtype = accel::DType::f32;

private:
    // The buffer's element type, when it is one accel reads as it is.
    bool from_view() {
        const char* f = view_.format ? view_.format : "B";
        if (*f == '@' || *f == '=' || *f == '<') ++f;
        if (f[0] == 0 || f[1] != 0) return false;
        if (f[0] == 'f' && view_.itemsize == 4) dtype = accel::DType::f32;
        else if (f[0] == 'd' && view_.itemsize == 8) dtype = accel::DType::f64;
        else if (f[0] == 'e' && view_.itemsize == 2) dtype = accel::DType::f16;
        else return false;
        if (view_.ndim < 0 || static_cast<std::size_t>(view_.ndim) > dims.size()) return false;
        data = view_.buf;
        count = static_cast<std::size_t>(view_.len / view_.itemsize);
        ndim = static_cast<std::size_t>(view_.ndim);
        for (std::size_t i = 0; i < ndim; ++i) dims[i] = view_.shape ? view_.shape[i] : 0;
        return true;
    }
    Py_buffer view_{};
    bool has_view_ = false;
    nb::object keep_;
    nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu> nd_;
};

PyTensor make(const std::vector<std::size_t>& shape, const DTypeArg& dtype,
              const std::shared_ptr<accel::Device>& device) {
    return PyTensor(accel::Tensor(device_or_default(device), accel::Shape(shape), dtype.get()));
}

// accel.full: filled_tensor on `device` or the default device.
PyTensor filled(const std::vector<std::size_t>& shape, double value, const DTypeArg& dtype,
                const std::shared_ptr<accel::Device>& device) {
    return PyTensor(filled_tensor(device_or_default(device), accel::Shape(shape), dtype.get(), value));
}

// The tensor for numpy.asarray / numpy.array (the __array__ protocol of NumPy 1 and 2): on the host backend a
// view of the tensor's own memory, holding the tensor alive (bf16 as ml_dtypes.bfloat16 where installed), else a
// copy (to_numpy). copy=True always copies; copy=False raises ValueError where a copy would be needed (NumPy's
// rule), as does a `dtype` other than the tensor's (a conversion is a copy).
nb::object as_array(nb::handle self_py, const nb::object& dtype, const nb::object& copy) {
    const PyTensor& self = nb::cast<PyTensor&>(self_py);
    if (self.is_view()) return as_array(self.transposed_of, dtype, copy).attr("T");  // NumPy's own view
    const accel::Tensor& t = self.t;
    const bool want_copy = !copy.is_none() && nb::cast<bool>(copy);
    const bool forbid_copy = !copy.is_none() && !want_copy;
    const bool bf16 = t.dtype() == accel::DType::bf16;
    nb::object arr;
    if (!want_copy && native_dl_device(t).first == kDLCPU && (!bf16 || have_ml_dtypes())) {
        {
            nb::gil_scoped_release release;  // the view shows what was enqueued before
            t.device().synchronize();
        }
        const std::size_t shape[2] = {t.shape()[0], t.shape().rank() == 2 ? t.shape()[1] : 0};
        const nb::dlpack::dtype element = bf16 ? nb::dtype<std::uint16_t>() : dl_dtype(t.dtype());
        nb::ndarray<nb::numpy> a(t.handle(), t.shape().rank(), shape, self_py, nullptr, element);
        arr = nb::cast(a, nb::rv_policy::reference);
        if (bf16) arr = arr.attr("view")(nb::module_::import_("ml_dtypes").attr("bfloat16"));
    } else {
        if (forbid_copy)
            throw nb::value_error(("accel.Tensor.__array__: copy=False, but a tensor of " + t.device().selector() +
                                   " becomes a NumPy array only as a host copy (host-backend memory is shared, "
                                   "bf16 only with ml_dtypes installed)")
                                      .c_str());
        arr = to_numpy(t);
    }
    if (!dtype.is_none()) {
        nb::object want = nb::module_::import_("numpy").attr("dtype")(dtype);
        if (!want.equal(arr.attr("dtype"))) {
            if (forbid_copy)
                throw nb::value_error(("accel.Tensor.__array__: copy=False, but dtype " +
                                       nb::cast<std::string>(nb::str(want)) + " asks for a conversion of the " +
                                       accel::dtype_name(t.dtype()) + " tensor, which is a copy")
                                          .c_str());
            arr = arr.attr("astype")(want);
        }
    }
    return arr;
}

// The shape Python sees: a view's is its base's, swapped.
accel::Shape shape_seen(const PyTensor& p) {
    const accel::Shape& s = p.storage().shape();
    return p.is_view() ? accel::Shape{s[1], s[0]} : s;
}

std::string tensor_repr(const PyTensor& p) {
    const accel::Tensor& t = p.storage();
    if (!t.device_ptr()) return "<accel.Tensor (empty)>";
    return std::string("<accel.Tensor ") + shape_seen(p).to_string() + " " + accel::dtype_name(t.dtype()) + " on " +
           t.device().selector() + (p.is_view() ? ", a transposed view>" : ">");
}

// The NumPy array of numpy(): a copy; a view's is its base's copy transposed (NumPy's view of it).
nb::object numpy_of(const PyTensor& p) {
    return p.is_view() ? to_numpy(p.storage()).attr("T") : to_numpy(p.t);
}

// Tensor.T: the transposed view of a rank-2 tensor, the base of a view, a rank-1 tensor itself (NumPy's rule).
nb::object transposed(nb::handle self_py) {
    const PyTensor& p = nb::cast<PyTensor&>(self_py);
    if (p.is_view()) return p.transposed_of;
    if (p.t.shape().rank() != 2) return nb::borrow(self_py);
    return nb::cast(PyTensor::view_of(self_py));
}

// float(t): the one element as a Python float (blocking); TypeError naming the shape for any other count.
double one_element(const PyTensor& p) {
    const accel::Tensor& t = p.storage();
    if (t.elements() != 1)
        throw nb::type_error(("float(t): t has shape " + shape_seen(p).to_string() + " (" +
                              std::to_string(t.elements()) + " elements); only a one-element tensor is a Python "
                              "float: pick the element on the host, e.g. float(numpy.asarray(t)[0, 1])")
                                 .c_str());
    HostCopy c = download(t);
    double value = 0;
    accel::convert_elements(c.data, t.dtype(), &value, accel::DType::f64, 1);
    return value;
}

// What NumPy users reach for and accel has not: each raises TypeError naming what to use instead.
[[noreturn]] void missing(const std::string& what, const std::string& instead) {
    throw nb::type_error(("accel.Tensor has no " + what + "; " + instead).c_str());
}

void bind_numpy_habits(nb::class_<PyTensor>& c) {
    c.def("__getitem__", [](const PyTensor&, nb::handle) { missing("indexing", "index a NumPy array of it: "
             "numpy.asarray(t)[0] (a view on the host backend, a copy elsewhere)"); },
          nb::arg("index"), nb::sig("def __getitem__(self, index: object) -> typing.NoReturn"),
          "Raises TypeError: accel tensors have no indexing; numpy.asarray(t)[...] reads elements.");
    c.def("__setitem__", [](const PyTensor&, nb::handle, nb::handle) { missing("item assignment",
             "write the whole tensor with t.copy_from(array) (a NumPy array changed on the host)"); },
          nb::arg("index"), nb::arg("value"),
          nb::sig("def __setitem__(self, index: object, value: object) -> typing.NoReturn"),
          "Raises TypeError: accel tensors have no item assignment; t.copy_from(array) writes the whole tensor.");
    c.def("sum", [](const PyTensor&, nb::args, nb::kwargs) { missing("reductions but column sums",
             "accel.ops.column_sum(x) gives y[c] = sum over r of x[r, c] of a rank-2 x; other sums on the host: "
             "numpy.asarray(t).sum()"); },
          nb::sig("def sum(self, *args: object, **kwargs: object) -> typing.NoReturn"),
          "Raises TypeError: accel's only reduction is accel.ops.column_sum; numpy.asarray(t).sum() for others.");
    c.def("mean", [](const PyTensor&, nb::args, nb::kwargs) { missing("reductions but column sums",
             "accel.ops.column_sum(x) gives the column sums of a rank-2 x (then scale); other means on the host: "
             "numpy.asarray(t).mean()"); },
          nb::sig("def mean(self, *args: object, **kwargs: object) -> typing.NoReturn"),
          "Raises TypeError: accel's only reduction is accel.ops.column_sum; numpy.asarray(t).mean() for others.");
    c.def("reshape", [](const PyTensor&, nb::args, nb::kwargs) { missing("reshape",
             "make a tensor of the new shape from a NumPy array: accel.from_numpy(numpy.asarray(t).reshape(...), "
             "device=t.device) (a copy)"); },
          nb::sig("def reshape(self, *args: object, **kwargs: object) -> typing.NoReturn"),
          "Raises TypeError: accel tensors have no reshape; accel.from_numpy(numpy.asarray(t).reshape(...)) copies.");
}

void bind_tensor_class(nb::module_& m) {
    auto c = nb::class_<PyTensor>(
        m, "Tensor", nb::is_weak_referenceable(),
        "A rank-1 [n] or rank-2 [rows, cols] row-major array of one dtype ('f32', 'f64', 'f16', 'bf16') on one "
        "device. Made by accel.empty, accel.zeros, accel.ones, accel.full, accel.from_numpy, accel.from_dlpack, or "
        "an op's result (also a + b, a * b, a @ b: accel.ops.add, mul, matmul). Keeps its device alive. Exchange: "
        "numpy() (a copy), numpy.asarray(t) (__array__: a view on the host backend, a copy elsewhere), "
        "__dlpack__ / __dlpack_device__ (zero-copy for the host backend and CUDA device memory, a host copy for "
        "other backends). Thread-safety: as the device's; two ops writing one tensor from two threads without "
        "ordering race on its contents.")
        .def_prop_ro("shape", [](const PyTensor& p) { return shape_tuple(shape_seen(p)); },
                     "The shape: (n,) or (rows, cols), in elements.")
        .def_prop_ro("dtype", [](const PyTensor& p) { return std::string(accel::dtype_name(p.storage().dtype())); },
                     "The element type: 'f32', 'f64', 'f16' or 'bf16'.")
        .def_prop_ro("device", [](const PyTensor& p) { return p.storage().device_ptr(); },
                     "The device holding the tensor.")
        .def_prop_ro("ndim", [](const PyTensor& p) { return p.storage().shape().rank(); }, "The rank: 1 or 2.")
        .def_prop_ro("size", [](const PyTensor& p) { return p.storage().elements(); }, "The number of elements.")
        .def_prop_ro("nbytes", [](const PyTensor& p) { return p.storage().bytes(); }, "Size of the storage in bytes.")
        .def_prop_ro("T", &transposed, nb::sig("def T(self) -> Tensor"),
                     "The transpose of a rank-2 tensor as a view (no copy; a rank-1 tensor is its own transpose, "
                     "as in NumPy; the view's .T is the tensor again). accel.ops.matmul and a @ b take a view "
                     "through their transpose flags (trans_a / trans_b), without a copy; numpy(), "
                     "numpy.asarray and the properties see the transpose; every other op and method raises "
                     "TypeError for it: view.contiguous() makes a row-major copy for them.")
        .def("transpose", &transposed, nb::sig("def transpose(self) -> Tensor"), "The same as Tensor.T.")
        .def("contiguous", [](nb::handle self_py) -> nb::object {
                const PyTensor& p = nb::cast<PyTensor&>(self_py);
                if (!p.is_view()) return nb::borrow(self_py);
                const accel::Tensor& base = p.storage();
                return nb::cast(from_numpy(numpy_of(p), base.device_ptr(), nb::str(accel::dtype_name(base.dtype()))));
            },
             nb::sig("def contiguous(self) -> Tensor"),
             "A row-major tensor of the same contents: the tensor itself, or for a transposed view a new tensor on "
             "its device holding the transpose (a copy through the host: download, transposed by NumPy, upload; "
             "blocking).")
        .def("__float__", &one_element,
             "float(t) of a one-element tensor (shape (1,) or (1, 1)): its element, widened to a Python float "
             "(blocking: waits for the ops enqueued on it). Raises TypeError naming the shape for any other "
             "element count.")
        .def_prop_ro("data_ptr", [](const PyTensor& p) { return reinterpret_cast<std::uintptr_t>(p.storage().handle()); },
                     "The backend's handle of the storage as an int: the address of the data on the host backend "
                     "(and CUDA), an opaque handle (cl_mem, ...) elsewhere; 0 for an empty tensor.")
        // Before numpy(): in the stub, a `numpy.typing` annotation after the method numpy would name it.
        .def("to", [](const PyTensor& p, nb::handle target) {
                reject_view(&p, "accel.Tensor.to", "self");
                accel::Tensor r;
                if (nb::isinstance<accel::Device>(target)) {
                    auto dev = nb::cast<std::shared_ptr<accel::Device>>(target);
                    nb::gil_scoped_release release;
                    r = p.t.to(dev);
                } else {
                    const accel::DType d = dtype_from(target);
                    nb::gil_scoped_release release;
                    r = p.t.to(d);
                }
                return PyTensor(std::move(r));
            },
             nb::arg("target"), nb::sig("def to(self, target: Device | str | numpy.typing.DTypeLike) -> Tensor"),
             "A copy on another Device (blocking, bit for bit), or converted to a dtype given by name ('f32', "
             "'f64', 'f16', 'bf16') or as a NumPy dtype (numpy.float64, ...; to nearest, ties to even). Raises "
             "Unsupported where the device cannot convert to that dtype, InvalidArgument for a dtype accel has not.")
        .def("__array__", &as_array, nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none(),
             nb::sig("def __array__(self, dtype: numpy.typing.DTypeLike | None = None, copy: bool | None = None) "
                     "-> numpy.typing.NDArray[typing.Any]"),
             "The tensor as a NumPy array, for numpy.asarray(t) and numpy.array(t). On the host backend a view of "
             "the tensor's own memory (no copy: writes through either are seen by the other; the device is "
             "synchronized first), elsewhere a host copy (blocking), as numpy(). dtype: a NumPy dtype to convert "
             "to (a copy). copy: None copies where needed, True always, False never (ValueError where a copy "
             "would be needed, as NumPy 2 asks).")
        .def("numpy", &numpy_of,
             nb::sig("def numpy(self) -> numpy.typing.NDArray[typing.Any]"),
             "A NumPy copy of the contents (blocking: waits for the ops enqueued on the default stream; the GIL "
             "is released meanwhile). dtype: float32, float64, float16, and for bf16 ml_dtypes.bfloat16 when "
             "ml_dtypes is installed, else float32 (exact). For a view without a copy on the host backend use "
             "numpy.asarray(tensor) or numpy.from_dlpack(tensor).")
        .def("copy_from", [](PyTensor& p, nb::handle array) {
                reject_view(&p, "accel.Tensor.copy_from", "self");
                HostArray h(array, "Tensor.copy_from");
                if (h.count != p.t.elements())
                    throw accel::InvalidArgument("Tensor.copy_from: an array of " + std::to_string(h.count) +
                                                 " elements into a tensor of shape " + p.t.shape().to_string() +
                                                 "; the element counts must agree");
                upload(p.t, h.data, h.dtype, h.count);
            },
             nb::arg("array"),
             "Overwrites the contents with `array` (any shape of the same element count, row-major; float32, "
             "float64, float16 or bfloat16, rounded to the tensor's dtype), a blocking upload. Raises "
             "InvalidArgument for another element count or an element type accel has not.")
        .def("__repr__", &tensor_repr)
        .def("__len__", [](const PyTensor& p) { return shape_seen(p)[0]; }, "The first dimension.");
    bind_numpy_habits(c);
}

// The factories: a new tensor of a shape, empty, filled, or a copy of a NumPy array.
void bind_factories(nb::module_& m) {
    m.def("empty", &make, nb::arg("shape"), nb::arg("dtype") = "f32", nb::arg("device") = nb::none(),
          "A tensor of `shape` ((n,) or (rows, cols)) and `dtype` ('f32', 'f64', 'f16', 'bf16'; also 'float32', "
          "..., or a NumPy dtype: numpy.float32, numpy.dtype('float64'), numpy.float16, ml_dtypes.bfloat16) on "
          "`device` (default: accel.default_device()), contents uninitialized. Raises InvalidArgument for a rank "
          "other than 1 or 2 or a dtype accel has not (the message lists those it has), OutOfMemory.");
    m.def("zeros", [](const std::vector<std::size_t>& shape, const DTypeArg& dtype,
                      const std::shared_ptr<accel::Device>& device) { return filled(shape, 0.0, dtype, device); },
          nb::arg("shape"), nb::arg("dtype") = "f32", nb::arg("device") = nb::none(),
          "As accel.empty, filled with zeros (a blocking upload).");
    m.def("ones", [](const std::vector<std::size_t>& shape, const DTypeArg& dtype,
                     const std::shared_ptr<accel::Device>& device) { return filled(shape, 1.0, dtype, device); },
          nb::arg("shape"), nb::arg("dtype") = "f32", nb::arg("device") = nb::none(),
          "As accel.empty, filled with ones (a blocking upload).");
    m.def("full", &filled, nb::arg("shape"), nb::arg("value"), nb::arg("dtype") = "f32",
          nb::arg("device") = nb::none(),
          "As accel.empty, every element `value` (a float, rounded to the dtype: to nearest, ties to even; inf and "
          "NaN kept), a blocking upload.");
    m.def("from_numpy", &from_numpy, nb::arg("array"), nb::arg("device") = nb::none(), nb::arg("dtype") = nb::none(),
          nb::sig("def from_numpy(array: object, device: Device | None = None, dtype: str | numpy.typing.DTypeLike | None "
                  "= None) -> Tensor"),
          "A new tensor on `device` (default: accel.default_device()) holding a copy of `array` (anything "
          "numpy.asarray takes; rank 1 or 2, row-major; float32, float64, float16 or ml_dtypes.bfloat16), "
          "converted to `dtype` when given (a name such as 'f32' or a NumPy dtype; default: the array's). Blocking. Raises InvalidArgument for another "
          "rank or element type, naming it.");
}

}  // namespace

accel::Shape shape_of(std::size_t ndim, const std::int64_t* dims, const char* what) {
    if (ndim < 1 || ndim > 2) {
        std::string s = "(";
        for (std::size_t i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
        s += ndim == 1 ? ",)" : ")";
        throw accel::InvalidArgument(std::string(what) + ": an array of shape " + s + " (rank " +
                                     std::to_string(ndim) +
                                     "); accel tensors are rank 1 [n] or rank 2 [rows, cols]: reshape it first");
    }
    std::vector<std::size_t> v;
    for (std::size_t i = 0; i < ndim; ++i) v.push_back(static_cast<std::size_t>(dims[i]));
    return accel::Shape(v);
}

// The tensor's contents downloaded into a new host buffer (blocking, GIL released).
HostCopy download(const accel::Tensor& t) {
    HostCopy c = host_buffer(t.bytes());
    if (t.bytes()) {
        nb::gil_scoped_release release;
        t.buffer().download(c.data, t.bytes());
    }
    return c;
}

PyTensor from_numpy(nb::handle array, const std::shared_ptr<accel::Device>& device, const nb::object& dtype) {
    // A Python list or tuple has no dtype: its numbers are read as float64 (exact for Python floats and ints
    // up to 2^53) and stored as accel's default, f32 (as torch.tensor does), unless `dtype` says otherwise.
    const bool listed = nb::isinstance<nb::list>(array) || nb::isinstance<nb::tuple>(array);
    nb::object read = listed ? nb::module_::import_("numpy").attr("asarray")(array, "float64") : nb::borrow(array);
    HostArray h(read, "from_numpy");
    accel::Shape shape = shape_of(h.ndim, h.dims.data(), "from_numpy");
    const accel::DType target = !dtype.is_none() ? dtype_from(dtype) : listed ? accel::DType::f32 : h.dtype;
    PyTensor out(accel::Tensor(device_or_default(device), shape, target));
    upload(out.t, h.data, h.dtype, shape.elements());
    return out;
}

accel::DType dtype_from(nb::handle dtype) {
    if (nb::isinstance<nb::str>(dtype)) return accel::parse_dtype(nb::cast<std::string>(dtype));
    static const char* const kHeld =
        "; accel tensors hold f32 (numpy.float32), f64 (numpy.float64), f16 (numpy.float16) or bf16 "
        "(ml_dtypes.bfloat16), also named by those strings";
    // numpy.dtype(None) is float64: a None here is a mistake, not a choice.
    const std::string given = nb::cast<std::string>(nb::repr(dtype));
    if (dtype.is_none()) throw accel::InvalidArgument(std::string("dtype None") + kHeld);
    std::string name;
    try {  // a NumPy dtype, or what numpy.dtype() takes (numpy.float32, ml_dtypes.bfloat16): by its name
        name = nb::cast<std::string>(nb::module_::import_("numpy").attr("dtype")(dtype).attr("name"));
    } catch (const nb::python_error&) {
        throw accel::InvalidArgument("dtype " + given + " is neither an accel dtype name nor a NumPy dtype" + kHeld);
    }
    if (name == "float32") return accel::DType::f32;
    if (name == "float64") return accel::DType::f64;
    if (name == "float16") return accel::DType::f16;
    if (name == "bfloat16") return accel::DType::bf16;
    throw accel::InvalidArgument("dtype " + given + " (NumPy " + name + ") is not an accel dtype" + kHeld);
}

accel::Tensor filled_tensor(const std::shared_ptr<accel::Device>& device, const accel::Shape& shape,
                            accel::DType dtype, double value) {
    accel::Tensor t(device, shape, dtype);
    if (!t.bytes()) return t;
    const std::size_t size = accel::dtype_size(dtype);
    std::vector<unsigned char> bytes(t.bytes(), 0);
    if (value != 0.0 || std::signbit(value)) {  // all-zero bytes are 0.0 in every dtype
        accel::convert_elements(&value, accel::DType::f64, bytes.data(), dtype, 1);
        for (std::size_t at = size; at < bytes.size(); at += size) std::memcpy(&bytes[at], bytes.data(), size);
    }
    nb::gil_scoped_release release;
    t.buffer().upload(bytes.data(), bytes.size());
    return t;
}

void reject_view(const PyTensor* p, const std::string& what, const char* name) {
    if (!p || !p->is_view()) return;
    throw nb::type_error((what + ": '" + name + "' is a transposed view (t.T), which only accel.ops.matmul and "
                          "a @ b take (through trans_a / trans_b); pass a row-major copy: view.contiguous()")
                             .c_str());
}

PyTensor PyTensor::view_of(nb::handle base) {
    PyTensor v{accel::Tensor()};
    v.transposed_of = nb::borrow(base);
    return v;
}

const accel::Tensor& PyTensor::storage() const {
    return is_view() ? nb::cast<PyTensor&>(transposed_of).t : t;
}

PyTensor::PyTensor(accel::Tensor&& tensor) : t(std::move(tensor)) {
    if (t.handle() && t.device_ptr() && is_host(t.device())) {
        std::lock_guard<std::mutex> lock(host_tensors_mutex);
        host_tensors[t.handle()] = this;
    }
}

PyTensor::PyTensor(PyTensor&& o) noexcept : t(std::move(o.t)), transposed_of(std::move(o.transposed_of)) {
    if (t.handle() && t.device_ptr() && is_host(t.device())) {
        std::lock_guard<std::mutex> lock(host_tensors_mutex);
        host_tensors[t.handle()] = this;
    }
}

PyTensor::~PyTensor() {
    if (t.handle()) {
        std::lock_guard<std::mutex> lock(host_tensors_mutex);
        auto it = host_tensors.find(t.handle());
        if (it != host_tensors.end() && it->second == this) host_tensors.erase(it);
    }
}

PyTensor* find_host_tensor(const void* data, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(host_tensors_mutex);
    auto it = host_tensors.find(data);
    if (it == host_tensors.end() || it->second->t.bytes() != bytes) return nullptr;
    return it->second;
}

void bind_tensor(nb::module_& m) {
    bind_tensor_class(m);
    bind_factories(m);
}

}  // namespace accel_python
