// dlpack.cpp — DLPack both ways: accel.Tensor's export (__dlpack__,
// __dlpack_device__) and accel.from_dlpack, and the DLPack names of accel's
// dtypes and devices that tensor.cpp's NumPy exchange uses too.
//
// Zero-copy: a tensor of the host backend holds host memory; its DLPack
// export (__dlpack__) is that memory, and from_dlpack of a DLPack capsule
// that points at a live host tensor's storage (the same extent, dtype and
// shape) hands back that tensor. from_dlpack of other writable, contiguous
// host memory onto the host backend wraps it (Tensor::over_host_memory),
// holding the import alive. A CUDA device's tensor is exported as CUDA
// memory (kDLCUDA), and from_dlpack of contiguous, writable CUDA (ROCm)
// memory onto the CUDA (HIP) device it lives on wraps it (e.g. a PyTorch
// CUDA tensor). Every other tensor (OpenCL buffers, Kokkos views, the CUDA
// emulation, Vulkan) is exported as a host copy, and from_dlpack onto those
// devices copies the memory in.
#include "exchange.hpp"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace accel_python {

namespace {

// DLPack device types beside kDLCPU (dlpack.h: kDLCUDA, kDLROCM).
constexpr int kDLCUDA = 2;
constexpr int kDLROCM = 10;

}  // namespace

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

namespace {

nb::object dlpack(nb::handle self_py, nb::kwargs kwargs) {
    PyTensor& self = nb::cast<PyTensor&>(self_py);
    reject_view(&self, "accel.Tensor.__dlpack__", "self");
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

// A DLPack import (and through it the exporter's memory), released with
// the GIL held by the last tensor over it.
std::shared_ptr<nb::ndarray<>> hold(nb::ndarray<> array) {
    return std::shared_ptr<nb::ndarray<>>(new nb::ndarray<>(std::move(array)), [](nb::ndarray<>* p) {
        if (!Py_IsInitialized()) return;  // the interpreter is gone: nothing left to release
        nb::gil_scoped_acquire gil;
        delete p;
    });
}

// A tensor over CUDA (ROCm) device memory another library owns, e.g. a
// PyTorch CUDA tensor, without a copy: it must be contiguous and writable
// and live on `target`'s own GPU. The tensor holds the import alive.
accel::Tensor over_gpu_memory(nb::ndarray<> array, bool shareable, const std::shared_ptr<accel::Device>& target,
                              const accel::Shape& shape, accel::DType dtype) {
    const bool cuda = array.device_type() == kDLCUDA;
    const std::string runtime = cuda ? "cuda" : "hip";
    const std::string where = std::string(cuda ? "CUDA" : "ROCm") + " device " + std::to_string(array.device_id());
    if (target->info().backend != runtime)
        throw accel::InvalidArgument("from_dlpack: the array lives in " + where + "'s memory, and " +
                                     target->selector() + " is not a " + runtime + " device; pass device= the " +
                                     runtime + " device it lives on, or copy the array to the host first");
    if (!shareable)
        throw accel::InvalidArgument("from_dlpack: the array in " + where +
                                     "'s memory is read-only or not contiguous (or copy=True was asked), and accel "
                                     "imports device memory without a copy only; pass a contiguous, writable array");
    const auto ordinal = target->native_object(runtime, "device");
    if (ordinal != static_cast<std::uint64_t>(array.device_id()))
        throw accel::InvalidArgument("from_dlpack: the array lives in " + where + "'s memory, " +
                                     target->selector() + " is device " + std::to_string(ordinal) +
                                     "; pass device= the device it lives on");
    auto held = hold(std::move(array));
    const std::size_t bytes = shape.elements() * accel::dtype_size(dtype);
    return accel::Tensor::over_native_memory(target, runtime, {reinterpret_cast<std::uint64_t>(held->data()), 0, bytes},
                                             shape, dtype, held);
}

nb::object from_dlpack(nb::handle x, const std::shared_ptr<accel::Device>& device, const nb::object& copy) {
    const bool want_copy = !copy.is_none() && nb::cast<bool>(copy);
    const bool forbid_copy = !copy.is_none() && !nb::cast<bool>(copy);
    // An accel tensor: itself, or a copy on `device`.
    if (nb::isinstance<PyTensor>(x)) {
        PyTensor& src = nb::cast<PyTensor&>(x);
        reject_view(&src, "from_dlpack", "x");
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
    if (nd.device_type() == kDLCUDA || nd.device_type() == kDLROCM)
        return nb::cast(PyTensor(over_gpu_memory(std::move(writable), is_writable && contiguous && !want_copy,
                                                 device_or_default(device), shape, dtype)));
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
        auto held = hold(std::move(writable));
        try {
            return nb::cast(PyTensor(accel::Tensor::over_host_memory(device_or_default(device), held->data(), shape,
                                                                     dtype, held)));
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

}  // namespace

void bind_dlpack(nb::module_& m) {
    nb::handle tensor = nb::type<PyTensor>();
    nb::cpp_function_def(&dlpack, nb::scope(tensor), nb::name("__dlpack__"), nb::is_method(),
                         nb::sig("def __dlpack__(self, *, stream: typing.Any = None, max_version: tuple[int, int] | "
                                 "None = None, dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> "
                                 "typing_extensions.CapsuleType"),
                         "The DLPack capsule of the tensor (array API): the tensor's own memory on the host backend "
                         "and for CUDA device memory (the device is synchronized first), a host copy for other "
                         "backends. Keywords: stream (ignored: the device is synchronized), max_version, dl_device "
                         "((1, 0) asks for host memory), copy (True: always a host copy; False: BufferError where a "
                         "copy would be needed).");
    nb::cpp_function_def(
        [](const PyTensor& p) {
            auto d = native_dl_device(p.storage());
            return d.first ? std::make_tuple(d.first, d.second) : std::make_tuple(kDLCPU, 0);
        },
        nb::scope(tensor), nb::name("__dlpack_device__"), nb::is_method(),
        "(device type, device id) of __dlpack__'s memory: (1, 0) host, (2, index) CUDA.");
    m.def("from_dlpack", &from_dlpack, nb::arg("x"), nb::arg("device") = nb::none(), nb::arg("copy") = nb::none(),
          nb::sig("def from_dlpack(x: object, device: Device | None = None, copy: bool | None = None) -> Tensor"),
          "A tensor of the DLPack-exporting object `x` (NumPy, PyTorch, accel.Tensor, ...) on `device` (default: "
          "accel.default_device()): host memory (device type 1), or CUDA (2) / ROCm (10) memory onto the CUDA / "
          "HIP device it lives on; rank 1 or 2, float32/64, float16 or bfloat16. Zero-copy where `x` is an accel.Tensor, or exports the storage of a live host-backend tensor "
          "(e.g. numpy.from_dlpack of one): that tensor is returned; and where `x` is writable, C-contiguous host "
          "memory and `device` is of the host backend: a tensor over that memory (writes through either are seen "
          "by the other), holding `x`'s export alive; and where `x` is contiguous, writable CUDA (ROCm) memory: a tensor over it, "
          "zero copy (e.g. a PyTorch CUDA tensor; its producer's pending work must be done or on the stream accel "
          "uses: see Device.stream_over). Otherwise a copy onto `device` (device memory is never copied: a "
          "read-only or strided CUDA array, or one of another device, is an InvalidArgument). copy=True always copies, "
          "copy=False raises BufferError where a copy would be needed. Raises InvalidArgument for another rank, "
          "element type or device type.");
}

}  // namespace accel_python
