// graph.cpp — accel.Graph and accel.capture (accel/graph.hpp): record the ops
// a Python function issues on a stream once, replay them.
#include "binding.hpp"

#include <nanobind/stl/function.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace accel_python {

namespace {

/// A Python accel.Graph: the recording, and what its replays read besides
/// tensors (StepCounts), kept alive with it.
struct PyGraph {
    accel::Graph graph;
    std::vector<std::shared_ptr<const void>> keep_alive;
};

// The keep-alive list of the capture this thread is in (accel.capture), or null.
thread_local std::vector<std::shared_ptr<const void>>* t_keep_alive = nullptr;

// Makes `list` this thread's keep-alive list while it lives.
struct KeepAliveScope {
    std::vector<std::shared_ptr<const void>>* outer = t_keep_alive;
    explicit KeepAliveScope(std::vector<std::shared_ptr<const void>>* list) { t_keep_alive = list; }
    ~KeepAliveScope() { t_keep_alive = outer; }
    KeepAliveScope(const KeepAliveScope&) = delete;
    KeepAliveScope& operator=(const KeepAliveScope&) = delete;
};

}  // namespace

void keep_alive_while_capturing(std::shared_ptr<const void> object) {
    if (t_keep_alive) t_keep_alive->push_back(std::move(object));
}

void bind_graph(nb::module_& m) {
    nb::class_<PyGraph>(m, "Graph",
                             "Kernel calls recorded once by accel.capture() and replayed by launch() without the "
                             "ops' validation, path choice and launch geometry. A replay uses the tensors the "
                             "capture used (change their contents between replays, e.g. Tensor.copy_from) and gives "
                             "bitwise the results of the eager calls. A graph keeps its device and its tensors' "
                             "memory alive, and the StepCounts its ops read. Thread-safety: launch() may be called from any thread.")
        .def("launch", [](const PyGraph& pg, const PyStream* s) {
                const accel::Graph& g = pg.graph;
                if (g.empty()) return;
                accel::Stream& stream = s ? *s->stream : g.device().default_stream();
                nb::gil_scoped_release release;
                g.launch(stream);
            },
             nb::arg("stream") = nb::none(),
             "Enqueues the recorded calls on `stream` (default: the device's default stream), in order; returns "
             "before they ran, as an op does. Raises InvalidArgument for a stream of another device or inside a "
             "capture, DeviceError from the runtime.")
        .def_prop_ro("empty", [](const PyGraph& g) { return g.graph.empty(); }, "True when the capture recorded no op.")
        .def("__len__", [](const PyGraph& g) { return g.graph.size(); }, "The number of kernel calls a replay enqueues.")
        .def_prop_ro("op_names", [](const PyGraph& g) { return g.graph.op_names(); },
                     "The recorded calls' op names, in order (list of str).")
        .def_prop_ro("device", [](const PyGraph& g) { return g.graph.device().shared_from_this(); },
                     "The device the graph runs on. Raises InvalidArgument for an empty graph.")
        .def("__repr__", [](const PyGraph& pg) {
            const accel::Graph& g = pg.graph;
            return g.empty() ? std::string("<accel.Graph (empty)>")
                             : "<accel.Graph of " + std::to_string(g.size()) + " calls on " + g.device().selector() + ">";
        });

    m.def("capture", [](PyStream& stream, const std::function<void()>& record) {
            PyGraph g;
            {
                KeepAliveScope scope(&g.keep_alive);
                g.graph = accel::capture(*stream.stream, record);
            }
            return g;
        },
          nb::arg("stream"), nb::arg("record"),
          "Calls `record()` with every op it issues on `stream` recorded instead of run, and returns the Graph "
          "of them: validation, path choice and launch geometry happen now, once, and nothing reaches the "
          "device. Inside `record`, use ops with out= tensors made beforehand: an allocation (a + b, ops that "
          "return a new tensor, accel.empty), a copy or upload, a synchronize, an op on another stream and "
          "bce_with_logits_loss (its value goes to the host) raise InvalidArgument naming the call, and no graph "
          "is made; the stream stays usable. An exception from `record` passes on. Example: "
          "g = accel.capture(d.default_stream(), lambda: accel.ops.add(a, b, out=c)); g.launch().");
}

}  // namespace accel_python
