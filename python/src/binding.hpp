// binding.hpp — what the parts of the extension module accel._accel share.
#pragma once

#include <accel/accel.hpp>

#include <nanobind/nanobind.h>

#include <memory>
#include <string>

namespace accel_python {

namespace nb = nanobind;

/// A Python accel.Stream: a stream of a device, or the device's default
/// stream (then `owned` is empty). Holds the device, so that the stream never
/// outlives it (accel::Stream must not).
struct PyStream {
    std::shared_ptr<accel::Device> device;
    std::unique_ptr<accel::Stream> owned;
    accel::Stream* stream = nullptr;
};

/// A Python accel.Event; holds its device as PyStream does.
struct PyEvent {
    std::shared_ptr<accel::Device> device;
    std::unique_ptr<accel::Event> event;
};

/// A Python accel.Tensor. Tensors of the host backend are listed by their
/// data pointer while they live, so that from_dlpack can hand back the
/// tensor a DLPack capsule of host memory came from (zero-copy).
///
/// A transposed view (Tensor.T of a rank-2 tensor) has no storage of its own:
/// `t` is empty and `transposed_of` holds the Tensor it is the transpose of.
/// matmul takes it through its transpose flags; every other op rejects it
/// (reject_view), and code that reads `t` without asking gets accel's "no
/// storage" error, never the base's elements in the wrong order.
struct PyTensor {
    accel::Tensor t;
    nb::object transposed_of;  ///< a view's base (a Python Tensor), else empty
    explicit PyTensor(accel::Tensor&& tensor);
    /// The transposed view of `base` (a Python Tensor of rank 2).
    static PyTensor view_of(nb::handle base);
    bool is_view() const { return transposed_of.is_valid(); }
    /// The tensor holding the elements: `t`, or a view's base's.
    const accel::Tensor& storage() const;
    PyTensor(PyTensor&& o) noexcept;
    ~PyTensor();
    PyTensor(const PyTensor&) = delete;
    PyTensor& operator=(const PyTensor&) = delete;
    PyTensor& operator=(PyTensor&&) = delete;
};

/// A Python accel.StepCount: an optimizer's step count that ops read each
/// time their kernel is enqueued — at the call and at every replay of a
/// graph that captured it (ops::adam_step_from). Shared, so that a graph
/// keeps the count alive (keep_alive_while_capturing).
struct PyStepCount {
    std::shared_ptr<std::size_t> count = std::make_shared<std::size_t>(0);
};

/// While accel.capture() records on this thread, `object` is kept alive by
/// the graph it makes; otherwise nothing. For what a replay reads that is not
/// a tensor (a StepCount). graph.cpp.
void keep_alive_while_capturing(std::shared_ptr<const void> object);

/// Whether `d` is a device of the host backend (its handles are host pointers).
bool is_host(const accel::Device& d);

/// The device a call without one uses: accel::default_device() (ACCEL_BACKEND).
std::shared_ptr<accel::Device> device_or_default(const std::shared_ptr<accel::Device>& d);

/// A DType from a Python dtype argument: an accel name as accel::parse_dtype reads it ("f32", "float32", ...)
/// or a NumPy dtype (numpy.float32, numpy.dtype("float64"), numpy.float16, ml_dtypes.bfloat16). Raises
/// InvalidArgument naming what was given and the dtypes accel has.
accel::DType dtype_from(nb::handle dtype);

/// A dtype argument as Python passes it, parsed by dtype_from where it is used (so that a bad one raises
/// InvalidArgument with accel's message, not nanobind's TypeError); typed `str | numpy.typing.DTypeLike` in
/// the stub.
struct DTypeArg {
    nb::object value;
    accel::DType get() const { return dtype_from(value); }
};

/// Raises TypeError where `p` (null: nothing to check) is a transposed view, which `what` (the call, e.g.
/// "accel.ops.add") does not take: the message names `name` (the parameter), the calls that take views
/// (matmul, a @ b) and the row-major copy (view.contiguous()).
void reject_view(const PyTensor* p, const std::string& what, const char* name);

/// A new tensor on `device` of `shape` and `dtype`, every element `value` rounded to the dtype (to nearest,
/// ties to even): one element converted on the host, repeated, uploaded (blocking, GIL released).
accel::Tensor filled_tensor(const std::shared_ptr<accel::Device>& device, const accel::Shape& shape,
                            accel::DType dtype, double value);

/// The live host tensor whose storage starts at `data` and is `bytes` long, or nullptr.
PyTensor* find_host_tensor(const void* data, std::size_t bytes);

/// The parts of the module, bound in this order (extension.cpp): accel's exceptions and their translation
/// from C++ (extension.cpp); Device, DeviceInfo, MemoryInfo, Stream, Event and the registry's functions
/// (device.cpp); Tensor, its NumPy exchange and the factories (tensor.cpp); DLPack both ways (dlpack.cpp,
/// after Tensor, whose methods it adds); the ops, the op table's queries and Tensor's operators (ops.cpp); the
/// MLP example's data (mlp.cpp).
void bind_exceptions(nb::module_& m);
void bind_device(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_dlpack(nb::module_& m);
void bind_ops(nb::module_& m);
void bind_kernels(nb::module_& m);
void bind_mlp(nb::module_& m);
void bind_graph(nb::module_& m);

}  // namespace accel_python

namespace nanobind::detail {
template <>
struct type_caster<accel_python::DTypeArg> {
    NB_TYPE_CASTER(accel_python::DTypeArg, const_name("str | numpy.typing.DTypeLike"))
    bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
        value.value = borrow(src);
        return true;
    }
    static handle from_cpp(const accel_python::DTypeArg& d, rv_policy, cleanup_list*) noexcept {
        return d.value.inc_ref();
    }
};
}  // namespace nanobind::detail
