// tensor.cpp — accel.Tensor, its construction from NumPy and DLPack, and
// its export to both.
//
// Zero-copy: a tensor of the host backend holds host memory; its DLPack
// export (__dlpack__) is that memory, and from_dlpack of a DLPack capsule
// that points at a live host tensor's storage (the same extent, dtype and
// shape) hands back that tensor. from_dlpack of other writable, contiguous
// host memory onto the host backend wraps it (Tensor::over_host_memory),
// holding the import alive. A CUDA device's tensor is exported as CUDA
// memory (kDLCUDA). Every other tensor (OpenCL buffers, Kokkos views, the
// CUDA emulation, Vulkan) is exported as a host copy, and from_dlpack onto
// those devices copies the memory in.
#include "binding.hpp"

#include <nanobind/ndarray.h>
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

// DLPack device types (dlpack.h: kDLCPU, kDLCUDA, kDLROCM).
constexpr int kDLCPU = 1;
constexpr int kDLCUDA = 2;
constexpr int kDLROCM = 10;

std::mutex host_tensors_mutex;
std::unordered_map<const void*, PyTensor*> host_tensors;  // live host tensors by data pointer

// How a tensor is exported through DLPack without a copy, or {0, 0} when it is not.
std::pair<int, int> native_dl_device(const accel::Tensor& t) {
    if (!t.device_ptr()) return {0, 0};
    const accel::DeviceInfo& i = t.device().info();
    if (i.backend == "host") return {kDLCPU, 0};
    const bool emulated = i.name.find("emulation") != std::string::npos;  // host memory behind a GPU's API
    if (i.backend == "cuda" && !emulated) return {kDLCUDA, i.index};
    if (i.backend == "hip" && !emulated) return {kDLROCM, i.index};
    return {0, 0};
}

nb::dlpack::dtype dl_dtype(accel::DType d) {
    switch (d) {
        case accel::DType::f32: return nb::dtype<float>();
        case accel::DType::f64: return nb::dtype<double>();
        case accel::DType::f16: return {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
        case accel::DType::bf16: return {static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bfloat), 16, 1};
    }
    return nb::dtype<float>();
}

// The accel dtype of a DLPack dtype, or throws InvalidArgument naming it.
accel::DType from_dl_dtype(nb::dlpack::dtype d, const char* what) {
    const auto code = static_cast<nb::dlpack::dtype_code>(d.code);
    if (d.lanes == 1) {
        if (code == nb::dlpack::dtype_code::Float && d.bits == 32) return accel::DType::f32;
        if (code == nb::dlpack::dtype_code::Float && d.bits == 64) return accel::DType::f64;
        if (code == nb::dlpack::dtype_code::Float && d.bits == 16) return accel::DType::f16;
        if (code == nb::dlpack::dtype_code::Bfloat && d.bits == 16) return accel::DType::bf16;
    }
    static const char* codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
    const std::string name = (d.code < 7 ? codes[d.code] : "code " + std::to_string(d.code)) + std::to_string(d.bits);
    throw accel::InvalidArgument(std::string(what) + ": elements of type " + name +
                                 "; accel tensors hold float32, float64, float16 or bfloat16: convert first "
                                 "(e.g. array.astype(numpy.float32))");
}

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

using ShapeTuple = nb::typed<nb::tuple, int, nb::ellipsis>;
ShapeTuple shape_tuple(const accel::Shape& s) {
    if (s.rank() == 1) return ShapeTuple(nb::make_tuple(s[0]));
    return ShapeTuple(nb::make_tuple(s[0], s[1]));
}

// A host buffer owned by a capsule, for arrays handed to Python.
struct HostCopy {
    void* data = nullptr;
    nb::capsule owner;
};
HostCopy host_buffer(std::size_t bytes) {
    HostCopy c;
    c.data = ::operator new(bytes ? bytes : 1);
    c.owner = nb::capsule(c.data, [](void* p) noexcept { ::operator delete(p); });
    return c;
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

// A new tensor with every element `value` (rounded to the dtype): one element converted on the host, repeated,
// uploaded (blocking, GIL released).
PyTensor filled(const std::vector<std::size_t>& shape, double value, const DTypeArg& dtype,
                const std::shared_ptr<accel::Device>& device) {
    PyTensor p = make(shape, dtype, device);
    if (!p.t.bytes()) return p;
    const std::size_t size = accel::dtype_size(p.t.dtype());
    std::vector<unsigned char> bytes(p.t.bytes(), 0);
    if (value != 0.0 || std::signbit(value)) {  // all-zero bytes are 0.0 in every dtype
        accel::convert_elements(&value, accel::DType::f64, bytes.data(), p.t.dtype(), 1);
        for (std::size_t at = size; at < bytes.size(); at += size) std::memcpy(&bytes[at], bytes.data(), size);
    }
    nb::gil_scoped_release release;
    p.t.buffer().upload(bytes.data(), bytes.size());
    return p;
}

PyTensor from_numpy(nb::handle array, const std::shared_ptr<accel::Device>& device, const nb::object& dtype) {
    HostArray h(array, "from_numpy");
    accel::Shape shape = shape_of(h.ndim, h.dims.data(), "from_numpy");
    const accel::DType target = dtype.is_none() ? h.dtype : dtype_from(dtype);
    PyTensor out(accel::Tensor(device_or_default(device), shape, target));
    upload(out.t, h.data, h.dtype, shape.elements());
    return out;
}

nb::object dlpack(nb::handle self_py, nb::kwargs kwargs) {
    PyTensor& self = nb::cast<PyTensor&>(self_py);
    const accel::Tensor& t = self.t;
    const auto native = native_dl_device(t);
    bool want_copy = false, forbid_copy = false, to_host = false;
    nb::dict forward;
    for (auto [key, value] : kwargs) {
        const std::string k = nb::cast<std::string>(key);
        if (k == "copy") {
            if (!value.is_none()) (nb::cast<bool>(value) ? want_copy : forbid_copy) = true;
        } else if (k == "dl_device") {
            if (value.is_none()) continue;
            auto dev = nb::cast<std::pair<int, int>>(value);
            if (dev == std::pair<int, int>{kDLCPU, 0}) to_host = true;
            else if (dev != native)
                throw nb::buffer_error("accel.Tensor.__dlpack__: dl_device must be this tensor's "
                                       "__dlpack_device__() or (1, 0), the host");
        } else if (k == "max_version") {
            forward[key] = value;
        } else if (k != "stream") {
            throw nb::type_error(("accel.Tensor.__dlpack__: unexpected keyword argument '" + k + "'").c_str());
        }
    }
    const bool zero_copy = native.first != 0 && !want_copy && !(to_host && native.first != kDLCPU);
    if (!zero_copy && forbid_copy)
        throw nb::buffer_error(("accel.Tensor.__dlpack__: copy=False, but a tensor of " + t.device().selector() +
                                " is exported as a host copy (only host and CUDA device memory is shared)")
                                   .c_str());
    std::size_t shape[2] = {t.shape()[0], t.shape().rank() == 2 ? t.shape()[1] : 0};
    nb::object arr;
    if (zero_copy) {
        {
            nb::gil_scoped_release release;  // the consumer reads what was enqueued before
            t.device().synchronize();
        }
        nb::ndarray<nb::array_api> a(t.handle(), t.shape().rank(), shape, self_py, nullptr, dl_dtype(t.dtype()),
                                     native.first, native.second);
        arr = nb::cast(a, nb::rv_policy::reference);
    } else {
        HostCopy c = download(t);
        nb::ndarray<nb::array_api> a(c.data, t.shape().rank(), shape, c.owner, nullptr, dl_dtype(t.dtype()), kDLCPU, 0);
        arr = nb::cast(a, nb::rv_policy::reference);
    }
    return arr.attr("__dlpack__")(**forward);
}

nb::object from_dlpack(nb::handle x, const std::shared_ptr<accel::Device>& device, const nb::object& copy) {
    const bool want_copy = !copy.is_none() && nb::cast<bool>(copy);
    const bool forbid_copy = !copy.is_none() && !nb::cast<bool>(copy);
    // An accel tensor: itself, or a copy on `device`.
    if (nb::isinstance<PyTensor>(x)) {
        PyTensor& src = nb::cast<PyTensor&>(x);
        if (!want_copy && (!device || device == src.t.device_ptr())) return nb::borrow(x);
        if (forbid_copy)
            throw nb::buffer_error("from_dlpack: copy=False, but the tensor lives on another device");
        const auto target = device ? device : src.t.device_ptr();
        accel::Tensor moved;
        {
            nb::gil_scoped_release release;
            moved = src.t.to(target);
        }
        return nb::cast(PyTensor(std::move(moved)));
    }
    nb::ndarray<nb::ro> nd;
    {
        // bfloat16 NumPy arrays (ml_dtypes) have no DLPack export: read them as NumPy arrays.
        nb::object dt = nb::getattr(x, "dtype", nb::none());
        if (!dt.is_none() && nb::hasattr(dt, "name") && nb::str(dt.attr("name")).equal(nb::str("bfloat16")) &&
            nb::hasattr(x, "view") && nb::hasattr(x, "__array_interface__")) {
            return nb::cast(from_numpy(x, device, nb::none()));
        }
    }
    // A writable view first (zero-copy needs one: ops write tensors); read-only arrays are copied.
    nb::ndarray<> writable;
    const bool is_writable = !want_copy && nb::try_cast(x, writable);
    if (is_writable)
        nd = nb::ndarray<nb::ro>(writable);
    else if (!nb::try_cast(x, nd))
        throw accel::InvalidArgument("from_dlpack: the object of type " +
                                     nb::cast<std::string>(nb::str(x.type().attr("__name__"))) +
                                     " has no usable DLPack export (__dlpack__ and __dlpack_device__)");
    const accel::DType dtype = from_dl_dtype(nd.dtype(), "from_dlpack");
    std::vector<std::int64_t> dims(nd.ndim());
    for (std::size_t i = 0; i < nd.ndim(); ++i) dims[i] = nd.shape(i);
    const accel::Shape shape = shape_of(nd.ndim(), dims.data(), "from_dlpack");
    // Row-major contiguous?
    bool contiguous = true;
    std::int64_t expect = 1;
    for (std::size_t i = nd.ndim(); i-- > 0;) {
        if (nd.shape(i) != 1 && nd.stride(i) != expect) contiguous = false;
        expect *= nd.shape(i);
    }
    if (nd.device_type() != kDLCPU)
        throw accel::InvalidArgument("from_dlpack: the array lives on DLPack device type " +
                                     std::to_string(nd.device_type()) +
                                     "; accel imports host memory (device type 1): copy it to the host first "
                                     "(e.g. tensor.cpu())");
    const std::size_t bytes = shape.elements() * accel::dtype_size(dtype);
    if (!want_copy && contiguous) {
        PyTensor* owner = find_host_tensor(nd.data(), bytes);
        if (owner && owner->t.dtype() == dtype && owner->t.shape() == shape &&
            (!device || device == owner->t.device_ptr())) {
            nb::handle found = nb::find(owner);
            if (found.is_valid()) return nb::borrow(found);
        }
    }
    std::string why_copy = "the array is read-only or not contiguous";
    if (is_writable && contiguous) {
        // The tensor holds the DLPack import (and through it the exporter's memory) for its life.
        auto* held = new nb::ndarray<>(std::move(writable));
        std::shared_ptr<const void> keep_alive(held, [](const void* p) {
            if (!Py_IsInitialized()) return;  // the interpreter is gone: nothing left to release
            nb::gil_scoped_acquire gil;
            delete static_cast<const nb::ndarray<>*>(p);
        });
        try {
            return nb::cast(PyTensor(accel::Tensor::over_host_memory(device_or_default(device), held->data(), shape,
                                                                     dtype, std::move(keep_alive))));
        } catch (const accel::Unsupported& e) {
            why_copy = e.what();
        } catch (const accel::InvalidArgument& e) {  // e.g. elements not aligned to their size
            why_copy = e.what();
        }
    }
    if (forbid_copy)
        throw nb::buffer_error(("from_dlpack: copy=False, but the array cannot be shared without a copy: " + why_copy)
                                   .c_str());
    nb::object arr = nb::module_::import_("numpy").attr("from_dlpack")(x);
    return nb::cast(from_numpy(arr, device, nb::none()));
}

// The tensor for numpy.asarray / numpy.array (the __array__ protocol of NumPy 1 and 2): on the host backend a
// view of the tensor's own memory, holding the tensor alive (bf16 as ml_dtypes.bfloat16 where installed), else a
// copy (to_numpy). copy=True always copies; copy=False raises ValueError where a copy would be needed (NumPy's
// rule), as does a `dtype` other than the tensor's (a conversion is a copy).
nb::object as_array(nb::handle self_py, const nb::object& dtype, const nb::object& copy) {
    const accel::Tensor& t = nb::cast<PyTensor&>(self_py).t;
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

std::string tensor_repr(const PyTensor& p) {
    if (!p.t.device_ptr()) return "<accel.Tensor (empty)>";
    return std::string("<accel.Tensor ") + p.t.shape().to_string() + " " + accel::dtype_name(p.t.dtype()) + " on " +
           p.t.device().selector() + ">";
}

}  // namespace

PyTensor::PyTensor(accel::Tensor&& tensor) : t(std::move(tensor)) {
    if (t.handle() && t.device_ptr() && is_host(t.device())) {
        std::lock_guard<std::mutex> lock(host_tensors_mutex);
        host_tensors[t.handle()] = this;
    }
}

PyTensor::PyTensor(PyTensor&& o) noexcept : t(std::move(o.t)) {
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
    nb::class_<PyTensor>(
        m, "Tensor", nb::is_weak_referenceable(),
        "A rank-1 [n] or rank-2 [rows, cols] row-major array of one dtype ('f32', 'f64', 'f16', 'bf16') on one "
        "device. Made by accel.empty, accel.zeros, accel.ones, accel.full, accel.from_numpy, accel.from_dlpack, or "
        "an op's result (also a + b, a * b, a @ b: accel.ops.add, mul, matmul). Keeps its device alive. Exchange: "
        "numpy() (a copy), numpy.asarray(t) (__array__: a view on the host backend, a copy elsewhere), "
        "__dlpack__ / __dlpack_device__ (zero-copy for the host backend and CUDA device memory, a host copy for "
        "other backends). Thread-safety: as the device's; two ops writing one tensor from two threads without "
        "ordering race on its contents.")
        .def_prop_ro("shape", [](const PyTensor& p) { return shape_tuple(p.t.shape()); },
                     "The shape: (n,) or (rows, cols), in elements.")
        .def_prop_ro("dtype", [](const PyTensor& p) { return std::string(accel::dtype_name(p.t.dtype())); },
                     "The element type: 'f32', 'f64', 'f16' or 'bf16'.")
        .def_prop_ro("device", [](const PyTensor& p) { return p.t.device_ptr(); }, "The device holding the tensor.")
        .def_prop_ro("ndim", [](const PyTensor& p) { return p.t.shape().rank(); }, "The rank: 1 or 2.")
        .def_prop_ro("size", [](const PyTensor& p) { return p.t.elements(); }, "The number of elements.")
        .def_prop_ro("nbytes", [](const PyTensor& p) { return p.t.bytes(); }, "Size of the storage in bytes.")
        .def_prop_ro("data_ptr", [](const PyTensor& p) { return reinterpret_cast<std::uintptr_t>(p.t.handle()); },
                     "The backend's handle of the storage as an int: the address of the data on the host backend "
                     "(and CUDA), an opaque handle (cl_mem, ...) elsewhere; 0 for an empty tensor.")
        // Before numpy(): in the stub, a `numpy.typing` annotation after the method numpy would name it.
        .def("to", [](const PyTensor& p, nb::handle target) {
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
        .def("numpy", [](const PyTensor& p) { return to_numpy(p.t); },
             nb::sig("def numpy(self) -> numpy.typing.NDArray[typing.Any]"),
             "A NumPy copy of the contents (blocking: waits for the ops enqueued on the default stream; the GIL "
             "is released meanwhile). dtype: float32, float64, float16, and for bf16 ml_dtypes.bfloat16 when "
             "ml_dtypes is installed, else float32 (exact). For a view without a copy on the host backend use "
             "numpy.asarray(tensor) or numpy.from_dlpack(tensor).")
        .def("copy_from", [](PyTensor& p, nb::handle array) {
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
        .def("__dlpack__", &dlpack, nb::sig("def __dlpack__(self, *, stream: typing.Any = None, max_version: tuple[int, int] | None = None, "
                     "dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> "
                     "typing_extensions.CapsuleType"),
             "The DLPack capsule of the tensor (array API): the tensor's own memory on the host backend and for "
             "CUDA device memory (the device is synchronized first), a host copy for other backends. Keywords: "
             "stream (ignored: the device is synchronized), max_version, dl_device ((1, 0) asks for host memory), "
             "copy (True: always a host copy; False: BufferError where a copy would be needed).")
        .def("__dlpack_device__", [](const PyTensor& p) {
                auto d = native_dl_device(p.t);
                return d.first ? std::make_tuple(d.first, d.second) : std::make_tuple(kDLCPU, 0);
            },
             "(device type, device id) of __dlpack__'s memory: (1, 0) host, (2, index) CUDA.")
        .def("__repr__", &tensor_repr)
        .def("__len__", [](const PyTensor& p) { return p.t.shape()[0]; }, "The first dimension.");

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
    m.def("from_dlpack", &from_dlpack, nb::arg("x"), nb::arg("device") = nb::none(), nb::arg("copy") = nb::none(),
          nb::sig("def from_dlpack(x: object, device: Device | None = None, copy: bool | None = None) -> Tensor"),
          "A tensor of the DLPack-exporting object `x` (NumPy, PyTorch, accel.Tensor, ...) on `device` (default: "
          "accel.default_device()): host memory only (device type 1), rank 1 or 2, float32/64, float16 or "
          "bfloat16. Zero-copy where `x` is an accel.Tensor, or exports the storage of a live host-backend tensor "
          "(e.g. numpy.from_dlpack of one): that tensor is returned; and where `x` is writable, C-contiguous host "
          "memory and `device` is of the host backend: a tensor over that memory (writes through either are seen "
          "by the other), holding `x`'s export alive. Otherwise a copy onto `device`. copy=True always copies, "
          "copy=False raises BufferError where a copy would be needed. Raises InvalidArgument for another rank, "
          "element type or device type.");
}

}  // namespace accel_python
