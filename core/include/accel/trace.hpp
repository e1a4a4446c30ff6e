// accel/trace.hpp — a timeline of what a program asked of its devices, in the
// Chrome trace event format (the JSON Object Format of "Trace Event Format",
// Google, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU),
// which Perfetto's UI (ui.perfetto.dev) and chrome://tracing open.
//
// What a trace holds:
//   - one process per device ("host:0 (Intel Xeon ...)"; under an MPI
//     launcher "rank R · host:0 (...)", and pids that differ between ranks,
//     so that the per-rank files can be merged by concatenating their
//     traceEvents arrays);
//   - on a track per host thread ("host thread N"): one complete event ("X")
//     per op, copy, synchronize, allocation and free, with the host time the
//     call took. An op's args: seq (its number on the device, see below),
//     of_op (which call of that op it is on the device: the 37th matmul),
//     dtype, path (native/vendor), shapes ("a[256,30] b[30,1024] -> c[256,
//     1024]": operands as stored, absent optional ones left out), stream,
//     bytes (the least bytes it moves) and flops; convert adds src_dtype,
//     dense and bias_activation activation and bias (true when given),
//     matmul and gemm trans_a and trans_b (whether a and b are stored
//     transposed). Ops the front-end composes from kernels (matmul and dense
//     on the vendor path, dense_backward, bce_with_logits_loss) are events of
//     category "composed" that enclose their kernels' events on the same
//     track; they carry the call as the program made it: dtype and shapes
//     (dense_backward: "x[..] w[..] y[..] dy[..] [pre_activation[..]] ->
//     [dx[..]] dw[..] [db[..]]"; bce_with_logits_loss: "z[n] t[n] ->
//     loss[]"), and matmul's and dense's path, activation, bias and
//     transposes as above (dense_backward: its activation). Args are only
//     ever added, so readers ignore those they do not know
//     (accel-conformance --case-file reads a trace's calls as test cases);
//   - a graph's replay (Graph::launch, accel/graph.hpp) as one event of
//     category "graph", named "graph", with its device time on the stream's
//     track; args ops (the recorded calls' op names, comma-separated, in
//     order) and calls (their number); it encloses its kernels' events, as
//     a composed call does. A capture records no kernel event (it runs none);
//   - on a track per stream ("stream N", the default stream "stream 0"): the
//     device time of each op and copy, measured with the device's events
//     (Device::create_event: cudaEvent, OpenCL profiling, Vulkan timestamps,
//     ...) and placed on the host clock through one event synchronized when
//     the device first appears in the trace. Events are read back when their
//     stream or device is synchronized (or, past 2048 unread ones, the oldest
//     are waited for), so streams that ran concurrently still do;
//   - a counter "memory in use" per device: the bytes accel holds there
//     (Device::memory_info().in_use), after each allocation and free.
// Times are microseconds since the first trace of the process started.
//
// Sequence numbers: each device numbers the kernel calls it is given (1, 2,
// ...) in the order the calls reach it, from the process's first traced or
// checked call on; calls of one thread are numbered in that thread's order,
// calls of several threads in the order they took the device's number (each
// call one number, none skipped). The shadow check (accel/check.hpp) names
// ops by the same numbers.
//
// When no trace is written (and no check is on), every traced call costs one
// relaxed atomic load and a branch.
#pragma once

#include <string>

namespace accel {
namespace trace {

/// Starts writing a trace to `path` (created or truncated), finishing a
/// trace already being written first. Under an MPI launcher that started
/// more than one rank (OMPI_COMM_WORLD_SIZE, PMI_SIZE or SLURM_NTASKS > 1),
/// each rank writes its own file: ".rankR" is inserted before the path's
/// extension ("t.json" → "t.rank1.json"). The environment variable
/// ACCEL_TRACE=FILE does the same when the first device is opened. The file
/// is complete once stop() ran (also at normal process exit); flush() makes
/// what was written so far reach the file. Throws InvalidArgument naming the
/// path when the file cannot be created. Thread-safe.
void start(const std::string& path);

/// Finishes the trace: waits for the device times not read yet, writes the
/// end of the JSON document and closes the file. Does nothing when no trace
/// is being written. Never throws (a failure to write is reported on stderr).
/// Thread-safe.
void stop() noexcept;

/// Writes what the trace holds so far to its file (device times not read yet
/// stay pending). Thread-safe; never throws.
void flush() noexcept;

/// Whether a trace is being written. Thread-safe; never throws.
bool active() noexcept;

/// The file being written ("" when none): the path given to start() with
/// the rank inserted under MPI. Thread-safe.
std::string path();

}  // namespace trace
}  // namespace accel
