// accel-bench: what a benchmark run measures and the records it produces.
#pragma once

#include <accel/accel.hpp>

#include "stats.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bench {

/// The clock of every host-side timing.
using Clock = std::chrono::steady_clock;

/// Milliseconds from t0 to now.
inline double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// "[done/total] what  ~N s left" on stderr, rewritten in place; the line is
/// cleared when done == total. `seconds_left` < 0 leaves the estimate out
/// (nothing measured yet). For terminals only (callers check isatty).
void show_progress(std::size_t done, std::size_t total, double seconds_left, const std::string& what);

/// The seconds left of a run whose items take about equal time: the mean
/// seconds per item done since t0 times the items left; -1 before the first.
double seconds_left_at_mean(std::size_t done, std::size_t total, Clock::time_point t0);

/// The ops accel-bench can time, in op-table order: every elementwise op of
/// the table with an oracle (OpInfo::elementwise_reference; ops a plugin or
/// the program defined included), adam_step, matmul, dense and column_sum.
std::vector<accel::Op> benchmarkable_ops();

/// The op named `name` ("add", "matmul", ...); when no op of the table has
/// that name, the plugins are loaded first (a backend may define ops) and it
/// is looked up again. Throws accel::InvalidArgument listing the valid names
/// when it is not one of benchmarkable_ops().
accel::Op parse_op(const std::string& name);

/// The activation of accel-bench's dense problems when --activations is not
/// given: y = sigmoid(x·Wᵀ + b) (and the activation of dense rows of files
/// written before rows named theirs).
constexpr accel::Activation kDenseActivation = accel::Activation::sigmoid;

/// One problem size of an op. Elementwise ops use dims {n}; matmul {M, N, K};
/// dense {batch, in, out}; column_sum {rows, cols}.
struct Problem {
    accel::Op op;
    std::vector<std::size_t> dims;
    accel::DType dtype = accel::DType::f32;  ///< of every operand
    /// What dense applies to x·Wᵀ + b; other ops have none (ignored).
    accel::Activation activation = kDenseActivation;
    /// Join key and table text: "1000000", "1024x1024x1024" (matmul M×N×K,
    /// dense batch×in×out), "4096x1024" (column_sum rows×cols).
    std::string shape() const;
    /// The x value of plots: elements (elementwise, column_sum), N (matmul),
    /// multiply-adds batch·in·out (dense).
    double size() const;
    /// Unit of size(): "elements", "N" or "MACs".
    const char* size_unit() const;
    /// The name of the activation the op applies ("sigmoid"); "" for ops without one.
    std::string activation_text() const;
    /// The op as tables name it: "dense+sigmoid" (the op and its activation), else the op's name.
    std::string op_text() const;
};

/// What to run and how (the `run` subcommand's options).
struct Settings {
    std::vector<std::string> selectors;    ///< devices to run on, e.g. {"host", "opencl:0"}
    std::vector<accel::Op> ops;            ///< ops to run, in this order
    std::vector<std::size_t> elementwise_sizes;  ///< n for add, sigmoid, relu, adam_step
    std::vector<std::size_t> matmul_sizes;       ///< N for N×N×N matmul
    std::vector<std::vector<std::size_t>> matmul_shapes;  ///< {M, N, K} matmuls beside the N×N×N ones
    std::vector<std::vector<std::size_t>> dense_shapes;       ///< {batch, in, out}
    std::vector<accel::Activation> dense_activations{kDenseActivation};  ///< each dense shape with each
    std::vector<std::vector<std::size_t>> column_sum_shapes;  ///< {rows, cols}
    std::vector<accel::OpPath> paths{accel::OpPath::native, accel::OpPath::vendor};
    std::vector<accel::DType> dtypes{accel::DType::f32};  ///< each problem runs in each of these
    std::vector<std::size_t> block_sizes;  ///< elementwise launch sweep; empty = device default
    int warmup = 1;                        ///< untimed runs before timing
    int repeats = 5;                       ///< timed rounds with host↔device copies (≥ 1; 3 once 3 s passed)
    /// A row's warm samples hold at least this much kernel time, ms; a sample
    /// is the median of launches filling min_time_ms / kMinSamples.
    double min_time_ms = 20;
    /// Samples per row, fixed (--runs); 0: until the median's confidence
    /// interval is within ±target_ci or the row's time cap ends.
    int runs = 0;
    double target_ci = 0.03;               ///< half-width of the median's 95 % interval, relative to the median
    double max_row_ms = 120;               ///< host ms a row may spend taking samples (time cap; ≥ kMinCappedSamples taken)
    bool quick = false;                    ///< small ceiling probes (CI)
    /// --untuned: matmul and dense native rows of a device that runs a tuning
    /// record also run with its default parameters (the record set aside for
    /// the row), as path "untuned", just before the tuned row.
    bool untuned = false;
    std::size_t copy_bytes = std::size_t{256} << 20;  ///< buffer size of the copy-bandwidth ceiling
    /// Sizes of the host↔device transfer figures, bytes (each at most an
    /// eighth of the device's memory).
    std::vector<std::size_t> transfer_sizes = {std::size_t{1} << 16, std::size_t{1} << 20, std::size_t{1} << 24,
                                               std::size_t{1} << 28};
    double fma_target_ms = 20;             ///< kernel time the peak-FMA probe aims for
    bool progress = false;                 ///< rows done / time left on stderr, one line rewritten (a terminal)
    /// A line on stderr per device's ceilings and per finished row (its
    /// time, rate and the time left): logs, pipes, CI.
    bool progress_lines = false;
    /// Called on the running thread after each device's ceilings and after
    /// each row (fleet runs feed the rank watchdog with it); may be empty.
    std::function<void()> on_progress;

    /// Problems of `op` under these settings, in size order, each size (dense:
    /// with each activation) in every dtype.
    std::vector<Problem> problems(accel::Op op) const;
};

/// The ceiling a row's rate is divided by (docs/benchmarking.md): memory-bound
/// ops the bandwidth; matmul and dense the peak of the unit their kernel
/// computes with in the row's dtype and path (accel::diagnostics::gemm_compute):
/// FMA in f32, f64 or f16, or the matrix engine on f16 or bf16 operands.
enum class Ceiling { bandwidth, fma_f32, fma_f64, fma_f16, matrix_f16, matrix_bf16 };
/// Every Ceiling, in enum order.
constexpr Ceiling kCeilings[] = {Ceiling::bandwidth, Ceiling::fma_f32,    Ceiling::fma_f64,
                                 Ceiling::fma_f16,   Ceiling::matrix_f16, Ceiling::matrix_bf16};
/// "bandwidth", "fma f32", "fma f64", "fma f16", "matrix f16", "matrix bf16"
/// (JSON rows' "ceiling", the table's legend). Never throws.
const char* ceiling_name(Ceiling c) noexcept;
/// The ceiling of a matmul/dense row whose kernel computes with `c`. Never throws.
Ceiling gemm_ceiling(const accel::GemmCompute& c) noexcept;

/// One host↔device transfer figure: Device's blocking copy of `bytes`
/// between a device buffer and host memory, timed by the host clock from
/// the call to its return (what a program waits for; clpeak and nvbandwidth
/// report the same direction and memory kinds).
struct Transfer {
    bool to_device = true;        ///< host→device, else device→host
    bool page_locked = false;     ///< host memory from accel::PageLockedBuffer, else pageable (new[], touched)
    std::size_t bytes = 0;
    std::vector<double> samples;  ///< ms per copy, in the order taken (rounds interleave the four kinds)
    double gbps = 0;              ///< bytes / median sample / 1e6
    bool ok = false;              ///< the bytes came back as sent (checked once per size)
};

/// A device's facts and its measured ceilings.
///
/// Ceilings are the limits a row's rate is divided by: bandwidth is the best
/// rate of accel's `add` (12 bytes per element, as the add rows count them)
/// at a working set well past the last-level cache; peak FMA is the best
/// rate of accel's FMA probe. On CPU devices (OpenCL CPU runtimes, Kokkos'
/// host spaces) the machine's own limits are used when higher: the host
/// backend's probes, which are vectorized and use every core, run on the same
/// processor. The device's own probe results are kept beside them.
struct DeviceReport {
    std::string selector;
    accel::DeviceInfo info;
    accel::MemoryInfo memory;    ///< at the end of the run (peak in use, cached)
    bool vendor_matmul = false;  ///< has a vendor path for matmul
    bool vendor_dense = false;   ///< has a vendor path for dense
    double copy_gbps = 0;        ///< device-to-device copy, (read + write bytes) / kernel time (information)
    std::size_t copy_bytes = 0;  ///< buffer size used for copy_gbps
    /// Host↔device transfers by size (Settings::transfer_sizes), pageable and
    /// page-locked; page-locked ones only where the device has such memory,
    /// page_locked_note saying why not otherwise.
    std::vector<Transfer> transfers;
    std::string page_locked_note;
    double add_gbps = 0;         ///< this device's add probe at add_elements, best run, GB/s
    std::size_t add_elements = 0;  ///< elements of each add operand in the bandwidth probe
    double probe_gflops = 0;     ///< this device's FMA probe in f32 (the compute type of f32/f16/bf16), GFLOP/s
    /// This device's FMA probe in f64, GFLOP/s; measured when the run has f64
    /// rows, 0 when not measured or the device has no f64 probe.
    double probe_gflops_f64 = 0;
    double bandwidth_gbps = 0;   ///< bandwidth ceiling: max(add_gbps, machine's on CPU devices)
    double peak_gflops = 0;      ///< f32 FMA ceiling: max(probe_gflops, machine's on CPU devices)
    double peak_gflops_f64 = 0;  ///< f64 FMA ceiling: max(probe_gflops_f64, machine's on CPU devices)
    /// Half-precision FMA, GFLOP/s (Probes::fma_throughput in f16); measured
    /// when the run has f16 rows, 0 where the device computes in no half.
    double peak_gflops_f16 = 0;
    /// The matrix engine on f16 / bf16 operands, GFLOP/s
    /// (diagnostics::matrix_throughput); measured when the run has rows of
    /// that dtype, 0 where the device has no such engine or no probe of it.
    double matrix_gflops_f16 = 0, matrix_gflops_bf16 = 0;
    /// Why a ceiling the run needed is absent (name, reason), e.g. the matrix
    /// engine on a device without one.
    std::vector<std::pair<Ceiling, std::string>> unmeasured;
    /// The GFLOP/s or GB/s of ceiling `c`; 0 when not measured (shown "–").
    double ceiling(Ceiling c) const;
    std::string ceiling_source;  ///< where the ceilings come from, e.g. "own probes" or "machine (host)"
    std::size_t cache_bytes = 0; ///< last-level cache of a CPU device (sysfs), 0 when unknown
    double bare_launch_us = 0;   ///< host µs per diagnostics::launch_empty (many back to back, then one sync)
    double add1_launch_us = 0;   ///< host µs per ops::add on 1 element, measured the same way
    double kernel1_launch_us = 0;  ///< host µs per direct call of the backend's add kernel on that element (0: none)
    /// Whether the device's own timer (events) agrees with the host clock.
    /// When not, every kernel time of this device is host time between
    /// synchronizations, and timer_note says why.
    bool device_timer_ok = true;
    std::string timer_note;
    std::string error;           ///< non-empty when the ceilings could not be measured
    /// The device's stable selector (e.g. "opencl:pocl:0"), else `selector`.
    const std::string& shown_selector() const {
        return info.stable_selector.empty() ? selector : info.stable_selector;
    }
};

/// One measured (op, shape, path, geometry, device) combination.
struct Row {
    std::string backend, device, selector, timer;
    std::string stable_selector;           ///< survives device reordering, e.g. "opencl:pocl:0" (or = selector)
    std::string runtime;                   ///< implementation and version (DeviceInfo::runtime_version)
    Problem problem;
    std::string path;                      ///< "native" or "vendor" ("untuned": native with the default parameters)
    std::string dtype;                     ///< "f32", "f64", "f16" or "bf16" (problem.dtype)
    std::string block;                     ///< block extents, e.g. "256" or "16x16"
    std::string geometry;                  ///< full grid/block text
    bool default_geometry = true;          ///< geometry chosen by the device
    int runs = 0;                          ///< warm samples taken (samples.size())
    /// The warm samples, ms, in the order taken (one per round of the run):
    /// each the median of launches_per_sample back-to-back launches on
    /// resident operands.
    std::vector<double> samples;
    int launches_per_sample = 1;
    /// Why sampling stopped: "target" (the median's 95 % interval within
    /// ±Settings::target_ci), "time cap", "runs" (--runs) or "sample cap".
    std::string stopped_by;
    stats::Interval median_ci;             ///< 95 % interval of the median (stats::median_ci)
    /// Of the samples (what the rates use).
    double kernel_ms_median = 0, kernel_ms_min = 0, kernel_ms_max = 0;
    /// Cold: the median run right after its inputs were uploaded (caches and
    /// TLBs hold the upload's data, not the kernel's working set).
    double kernel_ms_cold = 0;
    /// The warm runs' spread shows contention: the slowest took at least
    /// kStallRatio × the fastest and kStallMs more (a scheduler time slice
    /// lost to another process, not the kernel's own variation).
    bool stalled = false;
    /// The cold median beat the warm median by more than kColdRatio: the
    /// warm samples were slowed (contention, clock or thermal throttling),
    /// or the cold run skipped work.
    bool cold_faster = false;
    double flops = 0;                      ///< FLOPs of one call (op table; a FMA counts 2)
    double bytes = 0;                      ///< bytes one call must move at least (op table)
    double end_to_end_ms = 0;              ///< median, upload inputs + op + download output
    std::optional<double> gbps;            ///< memory-bound ops: bytes moved / kernel time
    std::optional<double> gflops;          ///< matmul, dense: 2·M·N·K / kernel time
    std::optional<double> fraction;        ///< rate / the device's `ceiling`; absent where it was not measured
    std::optional<Ceiling> ceiling;        ///< what `fraction` is of (rows that ran)
    bool cache_resident = false;           ///< memory-bound row whose operands fit in the last-level cache
    double nmse = 0;                       ///< against the float64 oracle
    double threshold = 0;                  ///< nmse limit: the op table's for the dtype (accel::nmse_threshold)
    std::string oracle;                    ///< "full" or "rows i,j,..." when sampled
    std::string error;                     ///< non-empty when the row could not run
    /// True when the row ran and its nmse is within the threshold.
    bool passed() const { return error.empty() && nmse <= threshold; }
};

/// A row is flagged stalled when its slowest warm run took this many times
/// its fastest and at least kStallMs longer.
constexpr double kStallRatio = 3.0, kStallMs = 1.0;
/// A row is flagged cold_faster when its cold median × this is below its warm median.
constexpr double kColdRatio = 1.5;
/// Samples a row takes before the confidence interval of its median may end
/// it; what the time cap leaves at least (4 + 4 samples can reach p < 0.05
/// in compare's U test); and at most.
constexpr int kMinSamples = 10, kMinCappedSamples = 4, kMaxSamples = 200;

/// Everything one `run` produced.
struct Results {
    std::vector<DeviceReport> devices;
    std::vector<Row> rows;
    std::vector<std::string> notes;         ///< skipped combinations and why
    std::vector<std::string> unavailable;   ///< backend status lines of backends not used
};

/// Opens every selector (accel::open_device; BackendUnavailable propagates),
/// measures each device's ceilings, then sets up every op × problem × device
/// × path × block row (cold rounds, oracle check, warm-up) and samples the
/// rows in rounds, one sample of each row still sampling per round in plan
/// order, until each stops (Row::stopped_by); rows are held resident up to
/// 1 GiB of tensors at a time, the plan sampled stretch by stretch beyond
/// that. Rows come back in plan order. Row-level accel errors (e.g.
/// OutOfMemory) become Row::error. Not thread-safe (one run at a time).
Results run(const Settings& s);

}  // namespace bench
