// Graphs (accel/graph.hpp): the calling thread's capture, the memory pins
// that keep a graph's tensors alive, and the replay.
#include <accel/error.hpp>
#include <accel/graph.hpp>

#include <accel_internal/graph_capture.hpp>
#include <accel_internal/instrument.hpp>

#include <cstdio>
#include <map>
#include <mutex>
#include <utility>

namespace accel {
namespace detail {

std::atomic<std::size_t> g_pins{0};

namespace {

thread_local Capture t_slot;
thread_local Capture* t_capture = nullptr;
thread_local std::function<void(KernelArgs&)> t_update;

// Memory some live graph uses: (device, handle) → how many pins, and whether
// its free was asked for meanwhile.
struct Pin {
    std::size_t count = 0;
    bool free_held = false;
};
std::mutex& pins_mutex() {
    static std::mutex m;
    return m;
}
std::map<std::pair<const Device*, DeviceHandle>, Pin>& pins() {
    static std::map<std::pair<const Device*, DeviceHandle>, Pin> p;
    return p;
}

void pin(const Device& d, DeviceHandle h) {
    std::lock_guard<std::mutex> lock(pins_mutex());
    Pin& p = pins()[{&d, h}];
    if (p.count++ == 0) g_pins.fetch_add(1, std::memory_order_relaxed);
}

// "host:0's default stream", "host:0's stream 0x5581..." (an address: streams have no names).
std::string stream_text(Stream& s) {
    Device& d = s.device();
    if (&s == &d.default_stream()) return d.selector() + "'s default stream";
    char address[32];
    std::snprintf(address, sizeof address, "%p", static_cast<void*>(&s));
    return d.selector() + "'s stream " + address;
}

// Marks the capture failed with `message` (the first refusal wins) and throws it.
[[noreturn]] void fail(Capture& c, const std::string& message) {
    if (c.refused.empty()) c.refused = message;
    throw InvalidArgument(message);
}

}  // namespace

GraphData::~GraphData() {
    std::vector<DeviceHandle> frees;
    {
        std::lock_guard<std::mutex> lock(pins_mutex());
        for (DeviceHandle h : pinned) {
            const auto it = pins().find({device.get(), h});
            if (it == pins().end() || --it->second.count) continue;
            if (it->second.free_held) frees.push_back(h);
            pins().erase(it);
            g_pins.fetch_sub(1, std::memory_order_relaxed);
        }
    }
    for (DeviceHandle h : frees) device->deallocate(h);
}

bool hold_free(const Device& d, DeviceHandle h) noexcept {
    std::lock_guard<std::mutex> lock(pins_mutex());
    const auto it = pins().find({&d, h});
    if (it == pins().end()) return false;
    it->second.free_held = true;
    return true;
}

Capture* capture_of_thread() noexcept { return t_capture; }

void refuse_while_capturing(const char* call, const char* why) {
    if (!t_capture) return;
    fail(*t_capture, std::string(call) + " while capturing a graph on " + stream_text(*t_capture->stream) + ": " + why);
}

void refuse_allocation_while_capturing(std::size_t bytes) {
    if (!t_capture || t_capture->scratch) return;
    const std::string call = "allocate (" + std::to_string(bytes) + " bytes)";
    refuse_while_capturing(call.c_str(),
                           "an allocation happens once, at capture, not at every replay; make the tensors before "
                           "begin_capture and reuse them");
}

void record(Capture& c, std::string name, Stream& stream, const std::vector<DeviceHandle>& handles, NodeRun run,
            bool varies) {
    if (&stream != c.stream)
        fail(c, name + " on " + stream_text(stream) + " while capturing a graph on " + stream_text(*c.stream) +
                    ": a graph replays on one stream; issue every op of the capture on the capturing stream "
                    "(ops::Options::stream)");
    GraphData& g = *c.graph;
    for (DeviceHandle h : handles) {
        if (!h) continue;
        g.pinned.push_back(h);  // listed before pinned: ~GraphData releases exactly what pin() counted
        try {
            pin(*g.device, h);
        } catch (...) {
            g.pinned.pop_back();
            throw;
        }
    }
    g.nodes.push_back({std::move(name), std::move(run), varies});
}

namespace {

// Splits g's nodes into runs of fixed and of varying calls; on a device
// with GraphRecorder, records each fixed run as one native graph.
void make_segments(GraphData& g) {
    GraphRecorder* recorder = g.device->capability<GraphRecorder>();
    for (std::size_t first = 0; first < g.nodes.size();) {
        const bool varies = g.nodes[first].varies;
        std::size_t end = first + 1;
        while (end < g.nodes.size() && g.nodes[end].varies == varies) ++end;
        GraphSegment seg{first, end - first, nullptr};  // native stays null where the run cannot be recorded
        if (recorder && !varies)
            seg.native = recorder->record_graph([&g, first, end](Stream& s) {
                for (std::size_t i = first; i < end; ++i) g.nodes[i].run(s, false);
            });
        g.segments.push_back(std::move(seg));
        first = end;
    }
}

// Enqueues g's calls on `s`: one by one, observed, while a trace or the
// shadow check is on; else each segment natively where it was recorded so.
void replay(const GraphData& g, Stream& s) {
    if (instrument::active()) {
        for (const GraphNode& n : g.nodes) n.run(s, true);
        return;
    }
    for (const GraphSegment& seg : g.segments) {
        if (seg.native) {
            seg.native->launch(s);
            continue;
        }
        for (std::size_t i = seg.first; i < seg.first + seg.count; ++i) g.nodes[i].run(s, false);
    }
}

}  // namespace

std::function<void(KernelArgs&)> replay_update_of_thread() { return t_update; }

ScratchAllowed::ScratchAllowed() noexcept {
    if (t_capture) ++t_capture->scratch;
}
ScratchAllowed::~ScratchAllowed() {
    if (t_capture) --t_capture->scratch;
}

CaptureSuspended::CaptureSuspended() noexcept : saved_(t_capture) { t_capture = nullptr; }
CaptureSuspended::~CaptureSuspended() { t_capture = saved_; }

ReplayUpdate::ReplayUpdate(std::function<void(KernelArgs&)> update) : saved_(std::move(t_update)) {
    t_update = std::move(update);
}
ReplayUpdate::~ReplayUpdate() { t_update = std::move(saved_); }

}  // namespace detail

void begin_capture(Stream& stream) {
    if (detail::t_capture)
        throw InvalidArgument("begin_capture: this thread captures already, on " +
                              detail::stream_text(*detail::t_capture->stream) +
                              "; end_capture it first (one capture per thread at a time)");
    auto graph = std::make_shared<detail::GraphData>();
    graph->device = stream.device().shared_from_this();
    detail::t_slot = detail::Capture{&stream, std::move(graph), "", 0};
    detail::t_capture = &detail::t_slot;
}

Graph end_capture(Stream& stream) {
    detail::Capture* c = detail::t_capture;
    if (!c) throw InvalidArgument("end_capture: this thread does not capture; call begin_capture(stream) first");
    detail::Capture ended = std::move(*c);
    detail::t_slot = detail::Capture{};
    detail::t_capture = nullptr;
    if (ended.stream != &stream)
        throw InvalidArgument("end_capture: this thread captured on " + detail::stream_text(*ended.stream) +
                              ", not on " + detail::stream_text(stream) + "; the capture is abandoned");
    if (!ended.refused.empty())
        throw InvalidArgument("end_capture: the capture failed, so no graph was made: " + ended.refused);
    detail::make_segments(*ended.graph);
    return Graph(std::move(ended.graph));
}

void abandon_capture() noexcept {
    detail::t_slot = detail::Capture{};
    detail::t_capture = nullptr;
}

Graph capture(Stream& stream, const std::function<void()>& record) {
    begin_capture(stream);
    try {
        record();
    } catch (...) {
        abandon_capture();
        throw;
    }
    return end_capture(stream);
}

bool capturing() noexcept { return detail::t_capture != nullptr; }

void Graph::launch(Stream& stream) const {
    if (!data_) return;
    Device& d = *data_->device;
    if (&stream.device() != &d)
        throw InvalidArgument("Graph::launch: the stream belongs to " + stream.device().selector() +
                              " but the graph to " + d.selector() + "; replay it on a stream of its device");
    detail::refuse_while_capturing("Graph::launch",
                                   "a replay inside a capture is not recorded; replay the graphs one after another");
    if (!instrument::tracing()) return detail::replay(*data_, stream);
    instrument::Span span(d, "graph", "graph", &stream);  // encloses its kernels' events
    if (span.live()) {
        std::string names;
        for (const detail::GraphNode& n : data_->nodes) names += (names.empty() ? "" : ",") + n.name;
        span.arg("ops", names);
        span.arg("calls", std::uint64_t{data_->nodes.size()});
    }
    detail::replay(*data_, stream);
}

void Graph::launch() const {
    if (data_) launch(data_->device->default_stream());
}

bool Graph::empty() const noexcept { return !data_ || data_->nodes.empty(); }

std::size_t Graph::size() const noexcept { return data_ ? data_->nodes.size() : 0; }

std::vector<std::string> Graph::op_names() const {
    std::vector<std::string> names;
    if (data_)
        for (const detail::GraphNode& n : data_->nodes) names.push_back(n.name);
    return names;
}

Device& Graph::device() const {
    if (!data_) throw InvalidArgument("Graph::device: the graph is empty (default-constructed); capture one first");
    return *data_->device;
}

std::string Graph::mechanism(const Device& device) {
    // capability() reads only: do_capability changes nothing.
    if (GraphRecorder* r = const_cast<Device&>(device).capability<GraphRecorder>())
        return r->graph_mechanism() + "; adam_step_from's kernels, whose scalars change per replay, enqueued one by one";
    return "replay: the captured kernels enqueued again without the op front-end's work";
}

}  // namespace accel
