// kernel.cpp — accel.Param and accel.Kernel: a program's own kernel from
// Python (accel/user_kernel.hpp), written in each backend's language and
// launched with a grid and block on any device.
#include "binding.hpp"

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

namespace accel_python {

namespace {

accel::ParamType param_type_from(const std::string& name) {
    for (accel::ParamType t : {accel::ParamType::i32, accel::ParamType::u32, accel::ParamType::i64,
                               accel::ParamType::u64, accel::ParamType::f32, accel::ParamType::f64})
        if (name == accel::param_type_name(t)) return t;
    throw accel::InvalidArgument("accel.Param.scalar: type '" + name +
                                 "' is not a scalar type; give one of i32, u32, i64, u64, f32, f64");
}

// A grid or block: an int (x) or a tuple of 1 to 3 ints (x, y, z).
accel::Dim3 dim3_from(nb::handle h, const char* what) {
    if (nb::isinstance<nb::int_>(h)) return {nb::cast<std::size_t>(h), 1, 1};
    if (nb::isinstance<nb::tuple>(h) || nb::isinstance<nb::list>(h)) {
        const auto v = nb::cast<std::vector<std::size_t>>(h);
        if (!v.empty() && v.size() <= 3) return {v[0], v.size() > 1 ? v[1] : 1, v.size() > 2 ? v[2] : 1};
    }
    throw accel::InvalidArgument(std::string("accel.Kernel: ") + what +
                                 " must be an int or a tuple of 1 to 3 ints (x, y, z)");
}

struct PyKernel {
    accel::UserKernel kernel;
    explicit PyKernel(accel::KernelSource s) : kernel(std::move(s)) {}
};

}  // namespace

void bind_kernels(nb::module_& m) {
    nb::class_<accel::KernelParam>(m, "Param",
                                   "One parameter of a kernel's signature (accel.Kernel): made by Param.input, "
                                   "Param.output or Param.scalar.")
        .def_static("input", [](const std::string& name, DTypeArg dtype) { return accel::KernelParam::in(name, dtype.get()); },
                    nb::arg("name"), nb::arg("dtype") = nb::str("f32"), "A tensor the kernel reads.")
        .def_static("output", [](const std::string& name, DTypeArg dtype) { return accel::KernelParam::out(name, dtype.get()); },
                    nb::arg("name"), nb::arg("dtype") = nb::str("f32"), "A tensor the kernel writes (and may read).")
        .def_static("scalar", [](const std::string& name, const std::string& type) {
                        return accel::KernelParam::scalar(name, param_type_from(type));
                    },
                    nb::arg("name"), nb::arg("type"), "A scalar: type 'i32', 'u32', 'i64', 'u64', 'f32' or 'f64'.")
        .def_ro("name", &accel::KernelParam::name)
        .def_prop_ro("type", [](const accel::KernelParam& p) { return std::string(accel::param_type_name(p.type)); })
        .def("__repr__", [](const accel::KernelParam& p) {
            return "accel.Param('" + p.name + "', " + accel::param_type_name(p.type) +
                   (p.type == accel::ParamType::tensor
                        ? std::string(" ") + accel::dtype_name(p.dtype) + (p.written ? " written" : " read")
                        : std::string()) +
                   ")";
        });

    nb::class_<PyKernel>(m, "Kernel",
                         "A program's own kernel: its entry point `name`, its signature `params` (accel.Param, in "
                         "argument order) and its code per kernel language: `code` maps a language's name (what "
                         "Device.info's kernel_languages lists) to the code; opencl= (OpenCL C), cuda= (CUDA C++), "
                         "hip= (HIP C++) and glsl= (Vulkan GLSL 450) are the same for the in-tree backends' "
                         "languages. Built once per device on first launch; a device without code in any of its "
                         "languages raises Unsupported naming them (a Python kernel has no host code). Conventions "
                         "per language: docs/own-kernels.md. Thread-safe.")
        .def("__init__",
             [](PyKernel* self, const std::string& name, const std::vector<accel::KernelParam>& params,
                std::optional<std::string> opencl, std::optional<std::string> cuda, std::optional<std::string> hip,
                std::optional<std::string> glsl, const std::map<std::string, std::string>& code,
                const std::string& build_options) {
                 accel::KernelSource s;
                 s.name = name;
                 s.params = params;
                 s.code = code;
                 const std::pair<const char*, const std::optional<std::string>*> keywords[] = {
                     {"opencl", &opencl}, {"cuda", &cuda}, {"hip", &hip}, {"glsl", &glsl}};
                 for (const auto& [language, text] : keywords) {
                     if (!*text) continue;
                     if (s.code.count(language))
                         throw accel::InvalidArgument("accel.Kernel '" + name + "': " + language +
                                                      "= and code['" + language + "'] both given; give one");
                     s.code[language] = **text;
                 }
                 s.build_options = build_options;
                 new (self) PyKernel(std::move(s));
             },
             nb::arg("name"), nb::arg("params"), nb::kw_only(), nb::arg("opencl") = nb::none(),
             nb::arg("cuda") = nb::none(), nb::arg("hip") = nb::none(), nb::arg("glsl") = nb::none(),
             nb::arg("code") = std::map<std::string, std::string>{}, nb::arg("build_options") = "",
             "Raises InvalidArgument for an empty name or parameters without names or named twice.")
        .def(
            "__call__",
            [](PyKernel& k, nb::handle grid, nb::handle block, nb::args args, PyStream* stream) {
                accel::LaunchGeometry g;
                g.grid = dim3_from(grid, "grid");
                g.block = dim3_from(block, "block");
                const auto& params = k.kernel.source().params;
                std::vector<accel::KernelArg> resolved;
                for (std::size_t i = 0; i < args.size(); ++i) {
                    nb::handle a = args[i];
                    if (nb::isinstance<PyTensor>(a)) {
                        const PyTensor& p = nb::cast<PyTensor&>(a);
                        reject_view(&p, "accel.Kernel '" + k.kernel.source().name + "'", "a tensor argument");
                        resolved.emplace_back(p.t);
                    } else if (nb::isinstance<nb::bool_>(a)) {
                        throw accel::InvalidArgument("accel.Kernel '" + k.kernel.source().name + "': argument " +
                                                     std::to_string(i) + " is a bool; pass an int");
                    } else if (nb::isinstance<nb::int_>(a)) {
                        const long long v = nb::cast<long long>(a);
                        if (v < 0) resolved.emplace_back(static_cast<std::int64_t>(v));
                        else resolved.emplace_back(static_cast<std::uint64_t>(v));
                    } else if (nb::isinstance<nb::float_>(a)) {
                        const double v = nb::cast<double>(a);
                        // Python has one float type: an f32 parameter takes it rounded to float.
                        if (i < params.size() && params[i].type == accel::ParamType::f32)
                            resolved.emplace_back(static_cast<float>(v));
                        else
                            resolved.emplace_back(v);
                    } else {
                        throw accel::InvalidArgument("accel.Kernel '" + k.kernel.source().name + "': argument " +
                                                     std::to_string(i) + " is a " +
                                                     nb::cast<std::string>(nb::str(a.type())) +
                                                     "; pass an accel.Tensor, an int or a float");
                    }
                }
                nb::gil_scoped_release release;
                if (stream)
                    k.kernel.launch(g, resolved, *stream->stream);
                else
                    k.kernel.launch(g, resolved);
            },
            nb::arg("grid"), nb::arg("block"), nb::arg("args"), nb::arg("stream") = nb::none(),
            nb::sig("def __call__(self, grid: int | tuple[int, ...], block: int | tuple[int, ...], "
                    "*args: Tensor | int | float, stream: Stream | None = None) -> None"),
            "Enqueues one launch with `grid` blocks of `block` threads (ints or (x, y, z) tuples, CUDA terms) and "
            "the arguments in signature order (accel.Tensor, int, float), on `stream` or the first tensor's "
            "device's default stream; returns before the kernel ran. Raises InvalidArgument for arguments that do "
            "not match the signature (naming the parameter) or a geometry beyond the device's limits, "
            "Unsupported where the backend has no code for it, DeviceError when it fails to build (with the log).")
        .def("build", [](PyKernel& k, const std::shared_ptr<accel::Device>& d) {
                nb::gil_scoped_release release;
                k.kernel.build(*device_or_default(d));
            },
             nb::arg("device") = nb::none(), "Builds the kernel for `device` now (default: accel.default_device()).")
        .def_prop_ro("name", [](const PyKernel& k) { return k.kernel.source().name; })
        .def_prop_ro("params", [](const PyKernel& k) { return k.kernel.source().params; })
        .def("__repr__", [](const PyKernel& k) { return "<accel.Kernel " + k.kernel.source().name + ">"; });
}

}  // namespace accel_python
