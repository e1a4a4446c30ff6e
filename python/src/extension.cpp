// extension.cpp — the extension module accel._accel: its definition, accel's
// exceptions as Python classes (and the translation of the C++ ones), and
// the version. Devices, tensors, DLPack, ops and the MLP example are bound in
// their own files (binding.hpp lists them).
#include "binding.hpp"

#include <nanobind/stl/string.h>

#include <string>
#include <vector>

namespace accel_python {

namespace {

// The Python classes of accel's exceptions (accel/error.hpp), created once.
struct Exceptions {
    PyObject* error = nullptr;
    PyObject* backend_unavailable = nullptr;
    PyObject* invalid_argument = nullptr;
    PyObject* unsupported = nullptr;
    PyObject* out_of_memory = nullptr;
    PyObject* device_error = nullptr;
};
Exceptions exceptions;

PyObject* new_exception(nb::module_& m, const char* name, const char* doc, std::vector<PyObject*> bases) {
    nb::tuple base_tuple = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(bases.size())));
    for (std::size_t i = 0; i < bases.size(); ++i) {
        Py_INCREF(bases[i]);
        PyTuple_SET_ITEM(base_tuple.ptr(), static_cast<Py_ssize_t>(i), bases[i]);
    }
    // Named in this module (as stubgen finds them); accel/__init__.py shows them as accel.NAME.
    const std::string qualified = nb::cast<std::string>(m.attr("__name__")) + "." + name;
    PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base_tuple.ptr(), nullptr);
    if (!cls) throw nb::python_error();
    m.attr(name) = nb::handle(cls);
    return cls;  // the module keeps a reference; so does `exceptions`
}

void set_error(PyObject* cls, const std::exception& e) { PyErr_SetString(cls, e.what()); }

void translate(const std::exception_ptr& p, void*) {
    try {
        std::rethrow_exception(p);
    } catch (const accel::DeviceError& e) {
        nb::object err = nb::steal(PyObject_CallFunction(exceptions.device_error, "s", e.what()));
        if (!err.is_valid()) return;  // the call's own error is set
        err.attr("code") = nb::int_(e.code());
        err.attr("code_name") = nb::str(e.code_name().c_str());
        PyErr_SetObject(exceptions.device_error, err.ptr());
    } catch (const accel::BackendUnavailable& e) {
        set_error(exceptions.backend_unavailable, e);
    } catch (const accel::InvalidArgument& e) {
        set_error(exceptions.invalid_argument, e);
    } catch (const accel::Unsupported& e) {
        set_error(exceptions.unsupported, e);
    } catch (const accel::OutOfMemory& e) {
        set_error(exceptions.out_of_memory, e);
    } catch (const accel::Error& e) {
        set_error(exceptions.error, e);
    }
}

}  // namespace

void bind_exceptions(nb::module_& m) {
    // Each class after its bases: a base is read through its slot once the class before has filled it.
    struct Class {
        PyObject** slot;
        const char* name;
        const char* doc;
        std::vector<PyObject**> bases;
    };
    const Class classes[] = {
        {&exceptions.error, "Error",
         "Base of every exception accel raises (C++ accel::Error). str(e) is the C++ message: a complete sentence "
         "naming what was asked, what was found and what would be right.",
         {&PyExc_RuntimeError}},
        {&exceptions.backend_unavailable, "BackendUnavailable",
         "The backend a selector names cannot be used here: plugin file missing, driver or runtime error, no "
         "device, or a device index out of range. The message lists every backend with its status.",
         {&exceptions.error}},
        {&exceptions.invalid_argument, "InvalidArgument",
         "The caller passed something invalid: a malformed selector, mismatched shapes, a rank other than 1 or 2, "
         "a tensor of another device or dtype, an unknown dtype or path name. Also a ValueError.",
         {&exceptions.error, &PyExc_ValueError}},
        {&exceptions.unsupported, "Unsupported",
         "The op, dtype or path asked for is not implemented by this device (e.g. the vendor path where the "
         "backend was built without its library, f64 on a device without double precision). Also a "
         "NotImplementedError.",
         {&exceptions.error, &PyExc_NotImplementedError}},
        {&exceptions.out_of_memory, "OutOfMemory",
         "An allocation larger than the device can hold, or refused by its runtime; the message gives the bytes "
         "asked and the device's total. Also a MemoryError.",
         {&exceptions.error, &PyExc_MemoryError}},
        {&exceptions.device_error, "DeviceError",
         "A native runtime call failed. Attributes: code (int, the runtime's numeric code: cudaError_t, cl_int, "
         "...) and code_name (str, its symbolic name, e.g. 'CL_OUT_OF_RESOURCES').",
         {&exceptions.error}},
    };
    for (const Class& c : classes) {
        std::vector<PyObject*> bases;
        for (PyObject** base : c.bases) bases.push_back(*base);
        *c.slot = new_exception(m, c.name, c.doc, bases);
    }
    nb::register_exception_translator(translate);
}

}  // namespace accel_python

NB_MODULE(_accel, m) {
    m.doc() = "accel's native module; use the package `accel`, which re-exports it.";
    accel_python::bind_exceptions(m);
    accel_python::bind_device(m);
    accel_python::bind_tensor(m);
    accel_python::bind_dlpack(m);
    accel_python::bind_ops(m);
    accel_python::bind_kernels(m);
    accel_python::bind_mlp(m);
    accel_python::bind_graph(m);
    m.def("version", []() { return std::string(ACCEL_VERSION); },
          "accel's version and the `git describe` of the build, e.g. '0.1.0 (v0.1.0-12-gabc123)'.");
}
