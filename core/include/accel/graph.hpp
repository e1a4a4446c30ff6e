// accel/graph.hpp — record a sequence of ops once, replay it many times
// (after CUDA graphs' stream capture, cudaStreamBeginCapture, and PyTorch's
// torch.cuda.graph).
//
// A small model pays the op front-end's work (validation, path choice,
// launch geometry) and a launch for every op of every step. A graph does that
// work once, at capture: it holds the kernel calls the captured ops resolved
// to, on the same tensors, and a replay enqueues them again without any of it.
// The program changes the tensors' contents between replays (a new batch
// uploaded into the same input tensor), never which tensors.
#pragma once

#include <accel/capability.hpp>
#include <accel/device.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace accel {

/// A recording as a device's own runtime holds it (a CUDA or HIP graph
/// instantiated, a Vulkan secondary command buffer): what
/// GraphRecorder::record_graph returns and a replay launches. Backends
/// implement it; programs never see it.
class NativeGraph {
public:
    virtual ~NativeGraph() = default;
    /// Enqueues the recorded work on `stream` (a stream of the device that
    /// recorded it) after the stream's earlier work, and returns before it
    /// ran. May be called from several threads at once, also while an
    /// earlier launch runs. Throws DeviceError from the runtime (the device's
    /// sticky error after it was lost).
    virtual void launch(Stream& stream) = 0;
};

/// The capability of a device whose runtime records a sequence of kernel
/// launches once and replays it as one submission: CUDA and HIP stream
/// capture into a graph (cudaStreamBeginCapture, cudaGraphInstantiate,
/// cudaGraphLaunch), a Vulkan command buffer recorded once and executed
/// again (vkCmdExecuteCommands). A device without it replays a Graph by
/// enqueuing its kernel calls again (Graph::mechanism). Thread-safe.
class GraphRecorder {
public:
    static constexpr std::string_view capability_name = "accel.graph_recorder/1";
    virtual ~GraphRecorder() = default;
    /// How a recorded run reaches the device, one line for people, e.g.
    /// "CUDA graph: ..." (Graph::mechanism adds how adam_step_from's calls
    /// go). Never throws beyond std::bad_alloc.
    virtual std::string graph_mechanism() const = 0;
    /// Calls `enqueue(s)` once, on this thread, with a stream `s` of this
    /// device that records instead of running (nothing reaches the device),
    /// and returns the recording, or nullptr where the run holds a call the
    /// device cannot record (a vendor library's kernel, which enqueues on a
    /// queue itself): a replay then enqueues that run's calls one by one.
    /// `enqueue` issues kernel launches only (no copy, allocation, event or
    /// synchronization: the graph front-end refused those at capture).
    /// Nothing reaches the device either way. Throws DeviceError when the
    /// runtime refuses the recording, and what `enqueue` throws; nothing is
    /// left recording either way.
    virtual std::shared_ptr<NativeGraph> record_graph(const std::function<void(Stream&)>& enqueue) = 0;
};

namespace detail {
struct GraphData;
}

/// A recorded sequence of kernel calls on one device, made by capture() or
/// begin_capture()/end_capture(). Copies share one recording (a handle, as
/// std::shared_ptr). A default-constructed Graph is empty: launch() does
/// nothing.
///
/// What a graph holds: its device (the Device lives while the graph does)
/// and the memory of every tensor its ops read or write. A Tensor destroyed
/// while a graph that uses it lives gives its memory back when the last such
/// graph is destroyed (Device::memory_info() counts it until then), so a
/// replay never touches freed memory. Memory a tensor only wraps (host
/// memory of Tensor::over_host_memory, another library's memory of
/// Tensor::over_native_memory) stays its owner's and must outlive the graph.
///
/// What a replay repeats: each kernel call with the dtype, path, shapes,
/// geometry, tile and scalars it had at capture, in capture order, on the
/// stream given to launch(); so its results are bitwise those of the eager
/// calls it recorded on the same data, deterministic mode included. The one
/// value read anew at every replay is the step count of
/// ops::adam_step_from. How it is replayed on each device: mechanism().
/// On a device with the GraphRecorder capability (CUDA, HIP, Vulkan),
/// end_capture records each run of calls that change nothing between
/// replays into one native graph, which a replay launches as one
/// submission; adam_step_from's calls, whose scalars change at every
/// replay, are enqueued one by one between them.
///
/// Thread-safety: launch() may be called from several threads at once, also
/// on different streams of the device; replays that write the same tensors
/// race on their contents as any two ops do.
class Graph {
public:
    Graph() = default;

    /// Enqueues the recorded kernel calls on `stream` (of the graph's
    /// device), in capture order, after the stream's earlier work; returns
    /// before they ran, as an op does. A trace (ACCEL_TRACE) shows a replay
    /// as one event, "graph", with its ops' names, enclosing its kernels'
    /// events; the shadow check (ACCEL_CHECK) checks each kernel call of a
    /// replay as it checks an eager one (a capture runs, so checks, none).
    /// While a trace or the shadow check is on, a replay enqueues the
    /// kernel calls one by one, not the native graphs, so that each is
    /// observed; the bits are the same.
    /// Throws
    /// InvalidArgument for a stream of another device or while the calling
    /// thread captures (a graph inside a graph is not recorded), and what
    /// the kernels throw: DeviceError from the runtime, the device's sticky
    /// error after it was lost.
    void launch(Stream& stream) const;
    /// launch() on the device's default stream. Does nothing for an empty graph.
    void launch() const;

    /// True for a default-constructed graph and for a capture that recorded
    /// no op.
    bool empty() const noexcept;
    /// The number of kernel calls a replay enqueues (one op may be several:
    /// dense_backward is up to three). Never throws.
    std::size_t size() const noexcept;
    /// The ops of the recorded calls, in order, as the op table names them
    /// (e.g. {"dense", "dense", "bce_with_logits_backward", ...}); a
    /// program's own kernel by its name. Thread-safe.
    std::vector<std::string> op_names() const;
    /// The device the graph runs on. Throws InvalidArgument for an empty graph.
    Device& device() const;
    /// How a replay reaches the device, one line for people: the device's
    /// GraphRecorder::graph_mechanism() and how adam_step_from's calls are
    /// replayed, where it has that capability, else
    /// "replay: the captured kernels enqueued again without the op
    /// front-end's work". Never throws beyond std::bad_alloc.
    static std::string mechanism(const Device& device);

    /// The graph of a recording (what end_capture makes; GraphData is
    /// libaccel's own, so a program gets graphs from capture and end_capture).
    explicit Graph(std::shared_ptr<const detail::GraphData> data) noexcept : data_(std::move(data)) {}

private:
    std::shared_ptr<const detail::GraphData> data_;
};

/// Starts recording, on the calling thread, the ops it issues on `stream`:
/// from now until end_capture(stream), every op of accel::ops (and every
/// UserKernel launch) the thread issues is validated, given its path and
/// geometry as usual, and recorded instead of run: nothing reaches the
/// device during a capture. Other threads' work is not captured.
///
/// Refused while capturing, with an InvalidArgument naming the call (and the
/// capture then fails: end_capture throws, and the stream is usable again):
/// - an op or launch on another stream or another device: a graph replays on
///   one stream;
/// - an allocation (a Tensor or Buffer made): it would happen once, at
///   capture, not at each replay; allocate before capturing (the front-end's
///   own temporaries, e.g. dense_backward's gradient before the activation,
///   are allowed and kept by the graph);
/// - every copy, upload and download, blocking or not, and every op that
///   returns a value to the host (bce_with_logits_loss): their data moves
///   once, at capture; copy before or after a replay;
/// - a synchronize of a stream, event or the device, an event record, and a
///   replay (Graph::launch): a capture runs nothing to wait for.
/// Throws InvalidArgument when the thread captures already (one capture per
/// thread at a time). Thread-safe.
void begin_capture(Stream& stream);

/// Ends the calling thread's capture on `stream` and returns the graph of
/// what it recorded (empty when nothing was); on a device with the
/// GraphRecorder capability, records its native graphs. Throws
/// InvalidArgument when the thread does not capture on `stream`, and when a
/// call was refused during the capture (naming it): no graph then, as no
/// half-recorded graph is ever replayed; DeviceError when the device's
/// runtime refuses a native recording. Either way the thread's capture is
/// over.
Graph end_capture(Stream& stream);

/// Ends the calling thread's capture without a graph, if it has one.
/// Never throws.
void abandon_capture() noexcept;

/// begin_capture(stream), `record()`, end_capture(stream): the graph of the
/// ops `record` issues on `stream`. When `record` throws, the capture is
/// abandoned (the stream usable again) and the exception passes on.
/// Example:
///     Graph step = capture(stream, [&] { ops::dense(x, w, b, y, Activation::relu, opts); });
///     for (...) { x.upload(batch); step.launch(stream); }
Graph capture(Stream& stream, const std::function<void()>& record);

/// Whether the calling thread is capturing (on any stream). Never throws.
bool capturing() noexcept;

}  // namespace accel
