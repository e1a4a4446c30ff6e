// device.cpp — accel.Device, its facts (DeviceInfo, MemoryInfo), streams and
// events, and the registry's functions that open devices and list backends
// (accel.device, accel.default_device, accel.devices, accel.backends).
#include "binding.hpp"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

namespace accel_python {

namespace {

using StrDict = nb::typed<nb::dict, nb::str, nb::object>;

std::string device_repr(const accel::Device& d) {
    return "<accel.Device " + d.selector() + ": " + d.name() + ">";
}

std::string info_repr(const accel::DeviceInfo& i) {
    return "DeviceInfo(backend='" + i.backend + "', index=" + std::to_string(i.index) + ", name='" + i.name +
           "', vendor='" + i.vendor + "', type='" + i.type + "', compute_units=" + std::to_string(i.compute_units) +
           ", global_memory_bytes=" + std::to_string(i.global_memory_bytes) + ")";
}

}  // namespace

bool is_host(const accel::Device& d) { return d.info().backend == "host"; }

std::shared_ptr<accel::Device> device_or_default(const std::shared_ptr<accel::Device>& d) {
    if (d) return d;
    nb::gil_scoped_release release;  // opening a device may probe runtimes
    return accel::default_device();
}

namespace {

// DeviceInfo::determinism as a dict (DeviceInfo.determinism).
StrDict determinism_dict(const accel::Determinism& p) {
    StrDict d;
    d["reproducible"] = p.reproducible;
    d["batch_invariant"] = p.batch_invariant;
    d["basis"] = p.basis;
    return d;
}

// DeviceInfo::subnormals as a dict (DeviceInfo.subnormals).
StrDict subnormals_dict(const accel::Subnormals& p) {
    nb::list flushed;
    for (accel::DType t : p.flushed) flushed.append(nb::str(accel::dtype_name(t)));
    StrDict d;
    d["flushed"] = flushed;
    d["basis"] = p.basis;
    return d;
}

// DeviceInfo and MemoryInfo: what a device is, and what accel holds on it.
void bind_device_facts(nb::module_& m) {
    nb::class_<accel::DeviceInfo>(m, "DeviceInfo",
                                  "What a device is, as its runtime reports it (read-only, as a frozen dataclass). "
                                  "as_dict() gives every field.")
        .def_ro("backend", &accel::DeviceInfo::backend, "Backend name: 'host', 'opencl', 'kokkos', 'cuda', 'vulkan'.")
        .def_ro("index", &accel::DeviceInfo::index, "Index of the device within its backend.")
        .def_ro("name", &accel::DeviceInfo::name, "The runtime's name of the device.")
        .def_ro("vendor", &accel::DeviceInfo::vendor, "The device's vendor.")
        .def_ro("type", &accel::DeviceInfo::type, "'cpu', 'gpu' or 'accelerator'.")
        .def_ro("driver_version", &accel::DeviceInfo::driver_version, "Driver or platform version text.")
        .def_ro("runtime_version", &accel::DeviceInfo::runtime_version, "Runtime or library version text.")
        .def_ro("compute_units", &accel::DeviceInfo::compute_units,
                "SMs, OpenCL compute units, CPU threads or Kokkos concurrency.")
        .def_ro("global_memory_bytes", &accel::DeviceInfo::global_memory_bytes, "Device memory in bytes.")
        .def_ro("timer", &accel::DeviceInfo::timer, "How kernel times (Event, elapsed_ms) are measured.")
        .def_ro("kernel_languages", &accel::DeviceInfo::kernel_languages,
                "The languages of accel.Kernel's code this device builds, in the order it tries them (e.g. "
                "['hip', 'cuda']); 'host' is a C++ callable, which Python cannot give; empty: none.")
        .def_ro("stable_selector", &accel::DeviceInfo::stable_selector,
                "A selector that survives a reordering of the runtime's devices, e.g. 'opencl:pocl:0'; '' where "
                "Device.selector is stable already.")
        .def_ro("uuid", &accel::DeviceInfo::uuid, "The runtime's device UUID (8-4-4-4-12 hex), or ''.")
        .def_ro("pci_bus_id", &accel::DeviceInfo::pci_bus_id, "PCI address 'DDDD:BB:DD.F', or ''.")
        .def_ro("host", &accel::DeviceInfo::host, "Name of the machine the device is attached to.")
        .def_ro("extra", &accel::DeviceInfo::extra, "Backend-specific facts as (key, value) pairs.")
        .def_prop_ro("determinism", [](const accel::DeviceInfo& i) { return determinism_dict(i.determinism); },
                     "What the native kernels promise in deterministic mode (Device.deterministic), stated by the "
                     "backend: a dict with reproducible (bool: the same bits on every run, stream and thread "
                     "count), batch_invariant (bool: matmul/dense rows do not depend on the batch size) and basis "
                     "(str: what the promise rests on).")
        .def_prop_ro("subnormals", [](const accel::DeviceInfo& i) { return subnormals_dict(i.subnormals); },
                     "The dtypes whose subnormal values the kernels may flush to zero, stated by the backend from "
                     "what the runtime reports: a dict with flushed (list of dtype names, e.g. ['f32', 'bf16']; "
                     "empty: every dtype keeps its subnormals) and basis (str: why).")
        .def(
            "as_dict",
            [](const accel::DeviceInfo& i) {
                StrDict d;
                d["backend"] = i.backend;
                d["index"] = i.index;
                d["name"] = i.name;
                d["vendor"] = i.vendor;
                d["type"] = i.type;
                d["driver_version"] = i.driver_version;
                d["runtime_version"] = i.runtime_version;
                d["compute_units"] = i.compute_units;
                d["global_memory_bytes"] = i.global_memory_bytes;
                d["timer"] = i.timer;
                d["kernel_languages"] = i.kernel_languages;
                d["stable_selector"] = i.stable_selector;
                d["uuid"] = i.uuid;
                d["pci_bus_id"] = i.pci_bus_id;
                d["host"] = i.host;
                d["extra"] = i.extra;
                d["determinism"] = determinism_dict(i.determinism);
                d["subnormals"] = subnormals_dict(i.subnormals);
                return d;
            },
            "Every field as a dict (field name to value).")
        .def("__repr__", &info_repr);

    nb::class_<accel::MemoryInfo>(m, "MemoryInfo", "The memory a device holds for accel, in bytes (read-only).")
        .def_ro("in_use", &accel::MemoryInfo::in_use, "Bytes allocated by accel and not yet freed.")
        .def_ro("peak_in_use", &accel::MemoryInfo::peak_in_use, "The most in_use has been since the device was opened.")
        .def_ro("cached", &accel::MemoryInfo::cached, "Bytes freed by accel but kept by the backend for reuse.")
        .def_ro("limit", &accel::MemoryInfo::limit, "Device.set_memory_limit's cap; 0: none.")
        .def_ro("total", &accel::MemoryInfo::total, "The device's global memory; 0: unknown.")
        .def("__repr__", [](const accel::MemoryInfo& i) {
            return "MemoryInfo(in_use=" + std::to_string(i.in_use) + ", peak_in_use=" + std::to_string(i.peak_in_use) +
                   ", cached=" + std::to_string(i.cached) + ", limit=" + std::to_string(i.limit) +
                   ", total=" + std::to_string(i.total) + ")";
        });
}

void bind_streams_and_events(nb::module_& m) {
    nb::class_<PyStream>(m, "Stream",
                         "An in-order queue of device work (CUDA stream, OpenCL command queue, Kokkos execution "
                         "space instance). Ops given stream=s are enqueued on it and may return before they ran. "
                         "Made by Device.create_stream() or Device.default_stream(); keeps its device alive. "
                         "Thread-safety: any thread may submit to and synchronize any stream.")
        .def("synchronize", [](PyStream& s) {
                nb::gil_scoped_release release;
                s.stream->synchronize();
            },
             "Blocks until all work submitted to this stream has finished (the GIL is released meanwhile). "
             "Raises DeviceError if the runtime reports a failure.")
        .def_prop_ro("device", [](const PyStream& s) { return s.device; }, "The device this stream belongs to.")
        .def_prop_ro("native_handle",
                     [](const PyStream& s) { return s.device->native_queue(s.device->info().backend, *s.stream); },
                     "The runtime's queue behind this stream as an int (a cudaStream_t, a cl_command_queue), valid "
                     "while the stream lives: e.g. torch.cuda.ExternalStream(s.native_handle). Raises Unsupported "
                     "on backends without native queues (host, Vulkan).")
        .def("__repr__", [](const PyStream& s) {
            return std::string("<accel.Stream of ") + s.device->selector() + (s.owned ? ">" : " (default)>");
        });

    nb::class_<PyEvent>(m, "Event",
                        "A marker recorded on a stream, for timing: Device.elapsed_ms(start, end) is the device time "
                        "between two recorded events, in milliseconds. Made by Device.create_event(); keeps its "
                        "device alive. Thread-safety: record an Event from one thread at a time.")
        .def("record", [](PyEvent& e, PyStream* s) {
                if (s && s->device != e.device)
                    throw accel::InvalidArgument("Event.record: the stream belongs to " + s->device->selector() +
                                                 ", the event to " + e.device->selector() +
                                                 "; record on a stream of the event's device");
                accel::Stream& stream = s ? *s->stream : e.device->default_stream();
                nb::gil_scoped_release release;
                e.event->record(stream);
            },
             nb::arg("stream") = nb::none(),
             "Records the event on `stream` (default: the device's default stream): it completes when all work "
             "submitted to the stream before it has. Raises InvalidArgument for a stream of another device.")
        .def("synchronize", [](PyEvent& e) {
                nb::gil_scoped_release release;
                e.event->synchronize();
            },
             "Blocks until the event has completed (GIL released). Raises InvalidArgument if it was never recorded.")
        .def_prop_ro("recorded", [](const PyEvent& e) { return e.event->recorded(); },
                     "True once record() was called.")
        .def_prop_ro("device", [](const PyEvent& e) { return e.device; }, "The device this event belongs to.");
}

void bind_device_class(nb::module_& m) {
    nb::class_<accel::Device>(m, "Device", nb::is_weak_referenceable(),
                              "One device of one backend. Obtained from accel.device(selector), "
                              "accel.default_device() or accel.devices(); the same selector gives the same Device "
                              "object while it is alive. Tensors, streams and events keep their device alive. "
                              "Thread-safety: any thread may use a Device at any time.")
        .def_prop_ro("selector", &accel::Device::selector, "Selector naming this device, e.g. 'opencl:0'.")
        .def_prop_ro("name", [](const accel::Device& d) { return d.name(); },
                     "The device's name as its runtime reports it.")
        .def_prop_ro("backend", [](const accel::Device& d) { return d.info().backend; },
                     "The backend's name, e.g. 'host'.")
        .def_prop_ro("info", [](const accel::Device& d) { return d.info(); },
                     "The device's facts (DeviceInfo): name, vendor, memory, timer, ...")
        .def("memory_info", &accel::Device::memory_info,
             "Bytes accel holds on this device now (MemoryInfo). Never raises.")
        .def_prop_rw(
            "deterministic", [](const accel::Device& d) { return d.deterministic(); },
            [](accel::Device& d, bool on) { d.set_deterministic(on); },
            "Deterministic mode of this device (bool; starts as ACCEL_DETERMINISTIC, off when unset): every op "
            "runs its native kernel, bitwise reproducible across runs, streams and thread counts, matmul/dense rows "
            "independent of the batch size (info.determinism says what the backend promises); the vendor path, or "
            "a backend that promises nothing, raises Unsupported instead. Set it from any thread.")
        .def("set_memory_limit", &accel::Device::set_memory_limit, nb::arg("bytes"),
             "Caps the bytes accel holds on this device: an allocation past it raises OutOfMemory. 0 removes the "
             "cap; allocations already made stay.")
        .def("synchronize", [](accel::Device& d) {
                nb::gil_scoped_release release;
                d.synchronize();
            },
             "Blocks until all work on every stream of this device has finished (GIL released).")
        .def("create_stream", [](accel::Device& d) {
                PyStream s;
                s.device = d.shared_from_this();
                s.owned = d.create_stream();
                s.stream = s.owned.get();
                return s;
            },
             "A new stream of this device, independent of the others. Raises DeviceError on failure.")
        .def("stream_over", [](accel::Device& d, std::uint64_t handle) {
                PyStream s;
                s.device = d.shared_from_this();
                s.owned = d.stream_over_native_queue(d.info().backend, handle);
                s.stream = s.owned.get();
                return s;
            },
             nb::arg("handle"),
             "A stream whose work goes to the program's own native queue `handle`, an int of this device's "
             "runtime: a cudaStream_t (e.g. torch.cuda.current_stream().cuda_stream; 0, the legacy default "
             "stream, too) or a cl_command_queue (in order, with profiling). accel's ops on it run in order with "
             "the program's work there. The queue stays the program's and must outlive the stream. Raises "
             "InvalidArgument for a queue the runtime does not accept (another device or context), Unsupported on "
             "backends without native queues (host, Vulkan).")
        .def("default_stream", [](accel::Device& d) {
                PyStream s;
                s.device = d.shared_from_this();
                s.stream = &d.default_stream();
                return s;
            },
             "The stream ops run on when given none.")
        .def("create_event", [](accel::Device& d) {
                PyEvent e;
                e.device = d.shared_from_this();
                e.event = d.create_event();
                return e;
            },
             "A new event of this device, not yet recorded.")
        .def("elapsed_ms", [](accel::Device& d, PyEvent& start, PyEvent& end) {
                nb::gil_scoped_release release;
                if (end.event->recorded() && &end.event->device() == &d) end.event->synchronize();
                return d.elapsed_ms(*start.event, *end.event);
            },
             nb::arg("start"), nb::arg("end"),
             "Milliseconds (float, >= 0, by the device's timer, info.timer) between two completed, recorded events "
             "of this device; waits for `end`. Raises InvalidArgument if either was not recorded or belongs to "
             "another device, or if `end` was recorded before `start`.")
        .def("supports", [](const accel::Device& d, const std::string& op, const DTypeArg& dtype,
                            const std::string& path) {
                const accel::OpInfo* info = accel::find_op(op);
                if (!info) throw accel::InvalidArgument("Device.supports: no op named '" + op + "'; see accel.op_names()");
                accel::OpPath p = accel::OpPath::native;
                if (path == "vendor") p = accel::OpPath::vendor;
                else if (path != "native")
                    throw accel::InvalidArgument("Device.supports: path '" + path + "'; expected 'native' or 'vendor'");
                return d.kernel_table().supports(info->op, dtype.get(), p);
            },
             nb::arg("op"), nb::arg("dtype") = "f32", nb::arg("path") = "native",
             "Whether op `op` (a name from accel.op_names()) runs on this device in `dtype` ('f32', 'f64', 'f16', "
             "'bf16', or a NumPy dtype such as numpy.float32) on `path` ('native' or 'vendor'). Raises InvalidArgument for an unknown op, dtype or path.")
        .def("__repr__", &device_repr)
        .def("__str__", [](const accel::Device& d) { return d.selector() + " (" + d.name() + ")"; });
}

// The registry's functions (accel/registry.hpp): devices opened by selector, and the backends found.
void bind_registry(nb::module_& m) {
    m.def("device", [](const std::string& selector) {
            nb::gil_scoped_release release;
            return accel::open_device(selector);
        },
          nb::arg("selector"),
          "Opens the device named by `selector`: 'auto', 'NAME' or 'NAME:N' (e.g. 'host', 'opencl:1', 'cuda:0'), "
          "or a form a backend adds (e.g. 'opencl:pocl', 'opencl:gpu'); case-insensitive. The same selector "
          "gives the same Device while it lives. Raises InvalidArgument for a malformed selector (the message "
          "lists the accepted forms), BackendUnavailable when the backend or device cannot be used (no fallback).");
    m.def("default_device", []() {
            nb::gil_scoped_release release;
            return accel::default_device();
        },
          "The device the environment variable ACCEL_BACKEND names (a selector, as accel.device takes), or "
          "'auto' when it is unset: a real GPU where a backend reports one, else the host. Raises as "
          "accel.device, messages about the selector prefixed with 'ACCEL_BACKEND: '.");
    m.def("devices", []() {
            std::vector<std::shared_ptr<accel::Device>> out;
            nb::gil_scoped_release release;
            for (const auto& st : accel::backend_statuses()) {
                if (!st.availability.available) continue;
                for (int i = 0; i < st.availability.device_count; ++i)
                    out.push_back(accel::open_device(st.name + ":" + std::to_string(i)));
            }
            return out;
        },
          "Every device of every available backend, opened, in backend-name order (a backend that is unavailable "
          "is left out: accel.backends() says why). Raises what opening a device raises.");
    m.def("backends", []() {
            nb::typed<nb::list, StrDict> out;
            std::vector<accel::BackendStatus> all;
            {
                nb::gil_scoped_release release;
                all = accel::backend_statuses();
            }
            for (const auto& st : all) {
                StrDict d;
                d["name"] = st.name;
                d["available"] = st.availability.available;
                d["reason"] = st.availability.reason;
                d["device_count"] = st.availability.device_count;
                d["has_gpu"] = st.availability.has_gpu;
                d["plugin_path"] = st.plugin_path;
                d["summary"] = st.summary();
                out.append(d);
            }
            return out;
        },
          "The backends whose plugins were found, each a dict: name (str), available (bool), reason (str, why "
          "not; '' when available), device_count (int), has_gpu (bool), plugin_path (str), summary (str). "
          "Loads and probes every plugin; never raises for a backend that cannot be used.");
    m.def("plugin_folders", &accel::plugin_folders,
          "The folders searched for backend plugins, in order: ACCEL_PLUGIN_PATH's, then libaccel's own (inside "
          "the installed package).");
}

}  // namespace

void bind_device(nb::module_& m) {
    bind_device_facts(m);
    bind_streams_and_events(m);
    bind_device_class(m);
    bind_registry(m);
}

}  // namespace accel_python
