// accel's CUDA emulation: stream capture and graphs (after the CUDA Runtime
// API reference's "Graph Management" and "Stream Management"). A capture
// records the tasks its stream would have queued (runtime.cpp); a graph is
// that list, and a launch queues it as one task on the launch's stream, in
// order with the stream's other work. Every capture mode behaves as
// cudaStreamCaptureModeRelaxed: calls on other streams are never refused.
#include "runtime_internal.hpp"

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <vector>

struct CUgraph_st {
    std::vector<std::function<void()>> tasks;
};

struct CUgraphExec_st {
    std::shared_ptr<const std::vector<std::function<void()>>> tasks;  // shared with the launches queued
};

namespace emulation = accel::cuda::emulation;

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode) {
    if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed)
        return emulation::returned(cudaErrorInvalidValue);
    return emulation::begin_capture(s);
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph) {
    if (!graph) return emulation::returned(cudaErrorInvalidValue);
    *graph = nullptr;
    std::vector<std::function<void()>> tasks;
    if (cudaError_t e = emulation::end_capture(s, tasks)) return e;
    *graph = new CUgraph_st{std::move(tasks)};
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
    if (!exec || !graph || flags != 0) return emulation::returned(cudaErrorInvalidValue);
    if (cudaError_t e = emulation::device_state(emulation::current_device())) return emulation::returned(e);
    *exec = new CUgraphExec_st{std::make_shared<const std::vector<std::function<void()>>>(graph->tasks)};
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
    if (!exec) return emulation::returned(cudaErrorInvalidValue);
    int device = emulation::current_device();
    if (s) cudaStreamGetDevice(s, &device);
    if (cudaError_t e = emulation::device_state(device)) return emulation::returned(e);
    const bool queued = emulation::enqueue(device, s, [device, tasks = exec->tasks] {
        for (const std::function<void()>& task : *tasks) {
            if (emulation::device_state(device)) return;  // after an unrecoverable error, nothing more runs
            task();
        }
    });
    if (!queued) return emulation::returned(cudaErrorInvalidResourceHandle);
    emulation::count_graph_launch(device);
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    delete exec;  // launches still queued share the tasks
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    delete graph;
    return cudaSuccess;
}
