// What the rest of libaccel asks of a capture in progress (accel/graph.hpp,
// core/src/graph.cpp): the op front-end records kernel calls into it, the
// device refuses what a graph cannot hold, and a free waits for the graphs
// that use the memory. Internal to libaccel.
#pragma once

#include <accel/graph.hpp>
#include <accel/kernel_args.hpp>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace accel::detail {

/// How a recorded call is enqueued: on a stream of the graph's device;
/// `observed` traces and checks it as an eager call when a trace or the
/// shadow check is on (false inside a native recording, which must hold the
/// kernel alone).
using NodeRun = std::function<void(Stream& stream, bool observed)>;

/// One recorded call.
struct GraphNode {
    std::string name;     ///< the op's name, or the program kernel's
    NodeRun run;          ///< enqueues the call
    bool varies = false;  ///< its arguments are updated before each replay (never in a native graph)
};

/// A run of consecutive nodes a replay enqueues together: through `native`
/// where the device recorded them (GraphRecorder), else one by one.
struct GraphSegment {
    std::size_t first = 0, count = 0;
    std::shared_ptr<NativeGraph> native;
};

/// What a graph holds (Graph's shared state). Its memory pins are released,
/// and the frees they held back done, when it is destroyed.
struct GraphData {
    std::shared_ptr<Device> device;
    std::vector<GraphNode> nodes;
    std::vector<GraphSegment> segments;  ///< the nodes in order, split at end_capture
    std::vector<DeviceHandle> pinned;    ///< one pin each (graph.cpp's pin)
    ~GraphData();
};

/// The calling thread's capture in progress.
struct Capture {
    Stream* stream = nullptr;
    std::shared_ptr<GraphData> graph;
    std::string refused;  ///< the first refused call's message, "" while none
    int scratch = 0;      ///< ScratchAllowed scopes open
};

/// The calling thread's capture, or null (a thread-local read). Never throws.
Capture* capture_of_thread() noexcept;

/// When the calling thread captures, throws InvalidArgument "<call> while
/// capturing a graph on <stream>: <why>" and marks the capture failed (its
/// end_capture throws). Does nothing otherwise. `why` says what to do instead.
void refuse_while_capturing(const char* call, const char* why);

/// Device::allocate's check: refuse_while_capturing unless a ScratchAllowed
/// scope is open on the thread.
void refuse_allocation_while_capturing(std::size_t bytes);

/// Records a call of `name` into `c`: refused when `stream` is not c's
/// stream. `handles` (null ones skipped) are pinned for the graph's life.
/// `varies`: its arguments are updated before each replay (ReplayUpdate).
void record(Capture& c, std::string name, Stream& stream, const std::vector<DeviceHandle>& handles, NodeRun run,
            bool varies = false);

/// The calling thread's ReplayUpdate's function, or an empty one: what a
/// kernel call recorded now reruns on its arguments before each replay.
std::function<void(KernelArgs&)> replay_update_of_thread();

/// While one lives, allocations on this thread pass the capture's check: the
/// op front-end's own temporaries, which the graph keeps (a Tensor's free is
/// held back while a graph uses its memory).
class ScratchAllowed {
public:
    ScratchAllowed() noexcept;
    ~ScratchAllowed();
    ScratchAllowed(const ScratchAllowed&) = delete;
    ScratchAllowed& operator=(const ScratchAllowed&) = delete;
};

/// While one lives, the calling thread does not capture: what the front-end
/// runs for itself (the automatic path's one measurement) runs eagerly.
class CaptureSuspended {
public:
    CaptureSuspended() noexcept;
    ~CaptureSuspended();
    CaptureSuspended(const CaptureSuspended&) = delete;
    CaptureSuspended& operator=(const CaptureSuspended&) = delete;

private:
    Capture* saved_;
};

/// While one lives, the kernel calls recorded on this thread rerun `update`
/// on their arguments before each replay (adam_step_from's step count).
class ReplayUpdate {
public:
    explicit ReplayUpdate(std::function<void(KernelArgs&)> update);
    ~ReplayUpdate();
    ReplayUpdate(const ReplayUpdate&) = delete;
    ReplayUpdate& operator=(const ReplayUpdate&) = delete;

private:
    std::function<void(KernelArgs&)> saved_;
};

/// Non-zero while some graph pins memory (Device::deallocate's fast path).
extern std::atomic<std::size_t> g_pins;

/// Device::deallocate's question: when a live graph uses `h` of `d`, holds
/// the free back until the last such graph is gone and returns true; false
/// otherwise (free it now). Never throws.
bool hold_free(const Device& d, DeviceHandle h) noexcept;

}  // namespace accel::detail
