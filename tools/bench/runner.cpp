#include "runner.hpp"

#include "ceilings.hpp"
#include "event_timer.hpp"
#include "report.hpp"
#include "stats.hpp"
#include "workload.hpp"
#include <accel/diagnostics.hpp>

#include <algorithm>
#include <optional>
#include <chrono>
#include <fstream>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

namespace bench {

const char* ceiling_name(Ceiling c) noexcept {
    switch (c) {
    case Ceiling::bandwidth: return "bandwidth";
    case Ceiling::fma_f32: return "fma f32";
    case Ceiling::fma_f64: return "fma f64";
    case Ceiling::fma_f16: return "fma f16";
    case Ceiling::matrix_f16: return "matrix f16";
    case Ceiling::matrix_bf16: return "matrix bf16";
    }
    return "?";
}

Ceiling gemm_ceiling(const accel::GemmCompute& c) noexcept {
    using accel::DType;
    if (c.unit == accel::GemmCompute::Unit::matrix) return c.type == DType::bf16 ? Ceiling::matrix_bf16 : Ceiling::matrix_f16;
    return c.type == DType::f64 ? Ceiling::fma_f64 : c.type == DType::f16 ? Ceiling::fma_f16 : Ceiling::fma_f32;
}

double DeviceReport::ceiling(Ceiling c) const {
    switch (c) {
    case Ceiling::bandwidth: return bandwidth_gbps;
    case Ceiling::fma_f32: return peak_gflops;
    case Ceiling::fma_f64: return peak_gflops_f64;
    case Ceiling::fma_f16: return peak_gflops_f16;
    case Ceiling::matrix_f16: return matrix_gflops_f16;
    case Ceiling::matrix_bf16: return matrix_gflops_bf16;
    }
    return 0;
}
namespace {

using accel::Op;
using accel::OpPath;

// Untimed warm-up before a row's first sample, as a multiple of
// Settings::min_time_ms (50 ms by default).
constexpr double kWarmUpFactor = 2.5;
// Host-clock time after which a row stops at three full rounds.
constexpr double kSlowRowMs = 3000;
// Tensors of rows being sampled, summed over devices, at most (bytes): rows
// are sampled round by round while resident, so a run holds the rows of one
// stretch of the plan at a time (all of them at the default sizes' small end).
constexpr double kResidentBytes = double(std::size_t{1} << 30);
// A sample is the median of launches filling about min_time_ms / this of
// kernel time (at least one, at most kMaxPerSample launches).
constexpr int kMaxPerSample = 1000;
// Before each sample, untimed launches for at least this much host time (a
// device idle while other rows ran wakes up, other devices' threads stop
// spinning); none for launches of kSlowLaunchMs or more.
constexpr double kSwitchWarmMs = 1, kSlowLaunchMs = 50;

// Timed over `elementwise_sizes`: the table's elementwise ops, and adam_step.
bool is_elementwise(Op op) {
    return accel::op_info(op).elementwise_reference || op == Op::adam_step || op == Op::scale || op == Op::triad ||
           op == Op::dot;
}

using stats::median;


// "256" or "16x16" (trailing 1 extents dropped).
std::string block_text(const accel::Dim3& b) {
    std::string s = std::to_string(b.x);
    if (b.y > 1 || b.z > 1) s += "x" + std::to_string(b.y);
    if (b.z > 1) s += "x" + std::to_string(b.z);
    return s;
}

// The output extents the op front-end passes to default_geometry().
std::pair<std::size_t, std::size_t> output_extent(const Problem& p) {
    switch (p.op) {
    case Op::matmul: return {p.dims[0], p.dims[1]};
    case Op::dense: return {p.dims[0], p.dims[2]};
    case Op::column_sum: return {1, p.dims[1]};
    default: return {1, p.dims[0]};
    }
}

// One row to measure.
struct Item {
    std::size_t problem;  // index into the problem list
    std::size_t device;   // index into Results::devices
    OpPath path;
    std::optional<accel::LaunchGeometry> geometry;  // nullopt = device default
    bool untuned = false;  // native with the device's default parameters (Settings::untuned)
};

// For its lifetime, the device's tunable kernels run their defaults; the
// parameters in use before come back after.
class DefaultParameters {
public:
    explicit DefaultParameters(accel::Device& d) : tuning_(d.tuning()) {
        if (!tuning_) return;
        for (const accel::TuningKey& k : tuning_->tunable()) saved_.emplace_back(k, tuning_->params(k));
        tuning_->reset_params();
    }
    ~DefaultParameters() {
        if (!tuning_) return;
        try {
            for (const auto& [key, params] : saved_) tuning_->set_params(key, params);
        } catch (const accel::Error&) {
            tuning_->reset_params();  // cannot happen: they were accepted before
        }
    }
    DefaultParameters(const DefaultParameters&) = delete;
    DefaultParameters& operator=(const DefaultParameters&) = delete;

private:
    accel::Tuning* tuning_;
    std::vector<std::pair<accel::TuningKey, accel::TuningParams>> saved_;
};

// Device tensors of a workload on one device, allocated once for all its rows.
struct Bound {
    std::vector<accel::Tensor> in;
    accel::Tensor out;
    /// The output's bytes as downloaded; allocated and its pages touched once,
    /// so the timed rounds copy into warm host memory.
    std::vector<unsigned char> host;
    accel::Tensor& output() { return out.elements() ? out : in.at(0); }
};

Bound allocate(const Workload& w, const std::shared_ptr<accel::Device>& d) {
    Bound b;
    for (const auto& s : w.input_shapes) b.in.emplace_back(d, s, w.problem.dtype);
    if (w.output_input < 0) b.out = accel::Tensor(d, w.output_shape, w.problem.dtype);
    b.host.assign(b.output().bytes(), 0);
    return b;
}

void upload(const Workload& w, Bound& b) {
    for (std::size_t i = 0; i < w.inputs.size(); ++i) b.in[i].buffer().upload(w.stored[i].data(), w.stored[i].size());
}

// What a row's rates are computed from (the workload's op-table counts).
struct Cost {
    double flops = 0, bytes = 0, all_flops = 0, all_bytes = 0;
};

// A row being sampled: its device tensors stay resident between rounds.
struct Sampling {
    std::size_t item = 0;  // index into the plan
    Row row;
    std::shared_ptr<accel::Device> device;
    Bound bound;
    Workload::Launch launch;
    accel::ops::Options options;
    std::unique_ptr<EventTimer> timer;
    Cost cost;
    accel::GemmCompute gemm;
    int per_sample = 1;        // launches whose median is one sample
    bool switch_warm = true;   // untimed launches before each sample (kSwitchWarmMs)
    double kernel_ms = 0;      // kernel time of every timed launch so far
    double host_ms = 0;        // host time spent taking samples so far
    double setup_s = 0;        // host seconds of the set-up (transfers, cold rounds, warm-up)
    double bytes = 0;          // of its device tensors
    void run_once() { launch(bound.in, bound.output(), options); }
};

// Warm-up, the full rounds (cold and end-to-end times), the NMSE against the
// oracle and the launches per sample, on tensors already allocated.
void set_up(Sampling& r, const Workload& w, const Item& it, const Settings& s, bool device_timer) {
    accel::Device& d = *r.device;
    Row& row = r.row;
    r.options.path = it.path == OpPath::vendor ? accel::ops::PathChoice::vendor : accel::ops::PathChoice::native;
    r.options.geometry = it.geometry;
    r.launch = w.launch;
    r.cost = {w.flops, w.bytes, w.all_flops, w.all_bytes};
    r.timer = std::make_unique<EventTimer>(d, device_timer);
    Bound& b = r.bound;
    auto launch = [&] { r.run_once(); };
    for (int i = 0; i < s.warmup; ++i) {
        upload(w, b);
        launch();
        d.synchronize();
    }
    // Full rounds: host clock around upload + op + download, events around
    // the op right after the upload (the cold timings). The download is the
    // output's bytes as the device holds them; widening them to float64 for
    // the oracle check is host work after the last round, not timed.
    std::vector<double> cold, e2e;
    for (int i = 0; i < std::max(1, s.repeats); ++i) {
        const auto t0 = Clock::now();
        upload(w, b);
        cold.push_back(r.timer->time(launch));
        b.output().buffer().download(b.host.data(), b.host.size());
        e2e.push_back(ms_since(t0));
        // Slow rows (big matmuls on CPUs): three rounds are enough once they took kSlowRowMs.
        if (cold.size() >= 3 && std::accumulate(e2e.begin(), e2e.end(), 0.0) > kSlowRowMs) break;
    }
    row.nmse = output_nmse(w, b.host.data());
    row.kernel_ms_cold = median(cold);
    row.end_to_end_ms = median(e2e);
    // Untimed runs before the first sample, for kWarmUpFactor × min_time_ms
    // of host time: after the rounds above (downloads, host conversions), a
    // CPU device takes some ten runs to reach its steady rate (PoCL's add at
    // 1e7: 8.3 ms for the first runs, 2.7 from the tenth on). In-place ops
    // keep updating their state, which leaves the work the same.
    if (std::accumulate(e2e.begin(), e2e.end(), 0.0) <= kSlowRowMs) {
        const auto t0 = Clock::now();
        do {
            launch();
            d.synchronize();
        } while (ms_since(t0) < kWarmUpFactor * s.min_time_ms);
    }
    const double one = r.timer->time(launch);
    const double batch_ms = s.min_time_ms / kMinSamples;
    r.per_sample = one >= batch_ms
                       ? 1
                       : int(std::min<double>(kMaxPerSample, std::ceil(batch_ms / std::max(one, 1e-6))));
    r.switch_warm = one < kSlowLaunchMs;
    row.launches_per_sample = r.per_sample;
}

// Takes one sample of a row: untimed launches while the device wakes up,
// then per_sample launches, each timed; the sample is their median.
void take_sample(Sampling& r) {
    accel::Device& d = *r.device;
    const auto t0 = Clock::now();
    if (r.switch_warm) do {
            r.run_once();
            d.synchronize();
        } while (ms_since(t0) < kSwitchWarmMs);
    std::vector<double> batch;
    for (int i = 0; i < r.per_sample; ++i) batch.push_back(r.timer->time([&] { r.run_once(); }));
    r.row.samples.push_back(median(batch));
    r.kernel_ms += std::accumulate(batch.begin(), batch.end(), 0.0);
    r.host_ms += ms_since(t0);
}

// Why a row has samples enough ("target", "time cap", "runs", "sample cap"), or "" to go on.
std::string stop_reason(const Sampling& r, const Settings& s) {
    const std::size_t n = r.row.samples.size();
    if (s.runs > 0) return n >= std::size_t(s.runs) ? "runs" : "";
    if (n >= std::size_t(kMinSamples) && r.kernel_ms >= s.min_time_ms) {
        const double m = median(r.row.samples);
        const stats::Interval ci = stats::median_ci(r.row.samples);
        if (ci.ok && ci.hi - m <= s.target_ci * m && m - ci.lo <= s.target_ci * m) return "target";
    }
    if (r.host_ms >= s.max_row_ms && n >= std::size_t(kMinCappedSamples)) return "time cap";
    if (n >= std::size_t(kMaxSamples)) return "sample cap";
    return "";
}

// The row's statistics from its samples.
void summarize(Row& row) {
    const auto& v = row.samples;
    row.runs = int(v.size());
    row.kernel_ms_median = median(v);
    row.kernel_ms_min = *std::min_element(v.begin(), v.end());
    row.kernel_ms_max = *std::max_element(v.begin(), v.end());
    row.median_ci = stats::median_ci(v);
    row.stalled = row.kernel_ms_max >= kStallRatio * row.kernel_ms_min && row.kernel_ms_max - row.kernel_ms_min >= kStallMs;
    row.cold_faster = row.kernel_ms_cold > 0 && row.kernel_ms_cold * kColdRatio < row.kernel_ms_median;
}

// `gemm`: what the device's matmul/dense computes with in the row's dtype and path.
void fill_rates(Row& row, const Cost& w, const DeviceReport& dev, const accel::GemmCompute& gemm) {
    row.flops = w.all_flops;
    row.bytes = w.all_bytes;
    const double seconds = row.kernel_ms_median * 1e-3;
    if (seconds <= 0) return;
    row.ceiling = w.flops > 0 ? gemm_ceiling(gemm) : Ceiling::bandwidth;
    const double ceiling = dev.ceiling(*row.ceiling);
    if (w.flops > 0) {
        row.gflops = w.flops / seconds * 1e-9;
        if (ceiling > 0) row.fraction = *row.gflops / ceiling;
    } else {
        row.gbps = w.bytes / seconds * 1e-9;
        if (ceiling > 0) row.fraction = *row.gbps / ceiling;
        // Operands within twice the last-level cache are served partly from it.
        row.cache_resident = dev.cache_bytes > 0 && w.bytes <= 2.0 * double(dev.cache_bytes);
    }
}

// The rows to run, in (op, problem, device, path, block) order; skipped combinations become notes.
std::vector<Item> plan(const Settings& s, const std::vector<Problem>& problems,
                       const std::vector<std::shared_ptr<accel::Device>>& devices, std::vector<std::string>& notes) {
    std::vector<Item> items;
    auto note = [&](const std::string& text) {  // once, not once per size
        if (std::find(notes.begin(), notes.end(), text) == notes.end()) notes.push_back(text);
    };
    for (std::size_t p = 0; p < problems.size(); ++p) {
        const Op op = problems[p].op;
        for (std::size_t d = 0; d < devices.size(); ++d) {
            for (OpPath path : s.paths) {
                const accel::DType dtype = problems[p].dtype;
                const std::string what = std::string(accel::op_name(op)) + " " + accel::dtype_name(dtype) + " " +
                                         path_name(path) + " on " + devices[d]->selector();
                if (path == OpPath::vendor && !accel::op_info(op).has_vendor_path) {
                    if (std::find(s.paths.begin(), s.paths.end(), OpPath::native) == s.paths.end())
                        note(what + ": this op has only the native path; skipped");
                    continue;
                }
                if (!devices[d]->kernel_table().supports(op, dtype, path)) {
                    note(what + ": not supported by this device; skipped");
                    continue;
                }
                if (s.untuned && path == OpPath::native && accel::op_info(op).tiled && devices[d]->tuning() &&
                    !devices[d]->tuning_record().empty())
                    items.push_back({p, d, path, std::nullopt, true});
                if (!is_elementwise(op) || s.block_sizes.empty()) {
                    items.push_back({p, d, path, std::nullopt});
                    continue;
                }
                for (std::size_t bs : s.block_sizes) {
                    try {
                        items.push_back({p, d, path, accel::geometry_1d(problems[p].dims[0], bs,
                                                                        devices[d]->info().limits)});
                    } catch (const accel::InvalidArgument& e) {
                        note(what + " block " + std::to_string(bs) + ": " + e.what() + "; skipped");
                    }
                }
            }
        }
    }
    return items;
}

// "  ~12 s left", or "" when nothing was measured yet (seconds < 0).
std::string left_text(double seconds) { return seconds < 0 ? "" : format("  ~%.0f s left", seconds); }

// The host seconds rows take, learned from the rows measured so far, for the
// time left of a run. Per kind of row (op, dtype, path, device) a row takes
// a + b·work, from the kind's rows but its first (whose time may hold kernel
// builds): a, the fixed part (warm-up and minimum kernel time, transfers'
// latency), is the shortest of them; b comes from the largest that took at
// least twice a (below that a row's time over a is noise), 0 while none
// did. Until a kind has a second row its rows take its first's time; a
// kind without a row takes the mean seconds per row of the run.
class RowTimes {
public:
    void add(const std::string& kind, double work, double seconds) {
        kinds_[kind].emplace_back(work, seconds);
        total_ += seconds;
        ++rows_;
    }
    // Seconds a row of `kind` and `work` is expected to take; -1 before any row was measured.
    double estimate(const std::string& kind, double work) const {
        const auto it = kinds_.find(kind);
        if (it == kinds_.end()) return rows_ ? total_ / double(rows_) : -1;
        const auto& rows = it->second;
        if (rows.size() == 1) return rows[0].second;
        double a = rows[1].second;
        for (auto r = rows.begin() + 1; r != rows.end(); ++r) a = std::min(a, r->second);
        double b = 0, largest = 0;
        for (auto r = rows.begin() + 1; r != rows.end(); ++r)
            if (r->second >= 2 * a && r->first > largest) {
                largest = r->first;
                b = (r->second - a) / r->first;
            }
        return a + b * work;
    }

private:
    std::map<std::string, std::vector<std::pair<double, double>>> kinds_;  // (work, seconds) in order, per kind
    double total_ = 0;
    std::size_t rows_ = 0;
};

double work_of(const Problem& p) {
    double w = 1;
    for (std::size_t d : p.dims) w *= double(d);
    return w;
}

// What one finished row measured, for the progress lines: "0.09876 ms, 12.15 GB/s".
std::string row_result_text(const Row& row) {
    if (!row.error.empty()) return "error: " + row.error;
    std::string text = num(row.kernel_ms_median) + " ms";
    if (row.gflops) text += ", " + num(*row.gflops) + " GFLOP/s";
    else if (row.gbps) text += ", " + num(*row.gbps) + " GB/s";
    if (!row.passed()) text += format(" (nmse %.1e above its limit %.0e)", row.nmse, row.threshold);
    return text;
}

}  // namespace

void show_progress(std::size_t done, std::size_t total, double seconds_left, const std::string& what) {
    std::fprintf(stderr, "\r\033[K[%zu/%zu] %s%s", done, total, what.c_str(), left_text(seconds_left).c_str());
    if (done == total) std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
}

double seconds_left_at_mean(std::size_t done, std::size_t total, Clock::time_point t0) {
    return done ? ms_since(t0) / 1000 / double(done) * double(total - done) : -1;
}

std::vector<Op> benchmarkable_ops() {
    std::vector<Op> ops;
    for (const accel::OpInfo* info : accel::op_table())
        if (is_elementwise(info->op) || info->op == Op::matmul || info->op == Op::dense || info->op == Op::column_sum)
            ops.push_back(info->op);
    return ops;
}

Op parse_op(const std::string& name) {
    auto find = [&name]() -> std::optional<Op> {
        for (Op op : benchmarkable_ops())
            if (name == accel::op_name(op)) return op;
        return std::nullopt;
    };
    if (const auto op = find()) return *op;
    (void)accel::backend_statuses();  // an op a backend plugin defines exists once its plugin is loaded
    if (const auto op = find()) return *op;
    std::string valid;
    for (Op op : benchmarkable_ops()) valid += (valid.empty() ? "" : ", ") + std::string(accel::op_name(op));
    throw accel::InvalidArgument("unknown op '" + name + "'; valid ops: " + valid);
}

std::string Problem::shape() const {
    std::string s;
    for (std::size_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
    return s;
}

double Problem::size() const {
    if (op == Op::matmul) return double(dims[1]);
    double v = 1;
    for (std::size_t d : dims) v *= double(d);
    return v;
}

const char* Problem::size_unit() const {
    return op == Op::matmul ? "N" : op == Op::dense ? "MACs" : "elements";
}

std::string Problem::activation_text() const {
    return op == Op::dense ? accel::activation_name(activation) : "";
}

std::string Problem::op_text() const {
    const std::string a = activation_text();
    return std::string(accel::op_name(op)) + (a.empty() ? "" : "+" + a);
}

std::vector<Problem> Settings::problems(Op op) const {
    std::vector<Problem> out;
    if (is_elementwise(op))
        for (std::size_t n : elementwise_sizes) out.push_back({op, {n}});
    else if (op == Op::matmul) {
        for (std::size_t n : matmul_sizes) out.push_back({op, {n, n, n}});
        for (const auto& shape : matmul_shapes) out.push_back({op, shape});
    }
    else if (op == Op::dense)
        for (const auto& d : dense_shapes)
            for (accel::Activation a : dense_activations) out.push_back({op, d, accel::DType::f32, a});
    else if (op == Op::column_sum)
        for (const auto& d : column_sum_shapes) out.push_back({op, d});
    std::vector<Problem> typed;
    for (const Problem& p : out)
        for (accel::DType t : dtypes) typed.push_back({p.op, p.dims, t, p.activation});
    return typed;
}

namespace {
// A row before it runs: its device, problem, path and launch geometry (the
// device's default where the item names none; an untuned item's with the
// device's default parameters in place).
Row describe_row(const DeviceReport& dev, const Item& it, const Problem& p, accel::Device& d) {
    Row row;
    row.backend = dev.info.backend;
    row.device = dev.info.name;
    row.selector = dev.selector;
    row.stable_selector = dev.shown_selector();
    row.runtime = dev.info.runtime_version;
    row.timer = dev.device_timer_ok ? dev.info.timer : "host clock between synchronizations (device timer rejected)";
    row.problem = p;
    row.path = it.untuned ? "untuned" : path_name(it.path);
    row.dtype = accel::dtype_name(p.dtype);
    row.threshold = accel::nmse_threshold(p.op, p.dtype);
    row.default_geometry = !it.geometry;
    const auto extent = output_extent(p);
    const accel::LaunchGeometry g =
        it.geometry ? *it.geometry : d.default_geometry(p.op, p.dtype, extent.first, extent.second);
    row.block = block_text(g.block);
    row.geometry = g.to_string();
    return row;
}

// The run's rows finished so far and an estimate of the time the others
// take (RowTimes over the rows of each kind); one line per finished (or
// skipped) row on stderr when s.progress_lines. Not thread-safe.
class Progress {
public:
    Progress(const Settings& s, const std::vector<Item>& items, const std::vector<Problem>& problems,
             const std::vector<DeviceReport>& devices)
        : s_(s), items_(items), problems_(problems), devices_(devices), done_(items.size(), false),
          t0_(Clock::now()) {}
    std::size_t finished_rows() const { return finished_; }
    // Seconds the rows not finished yet take, estimated; -1 before any row was measured.
    double seconds_left() const {
        double left = 0;
        for (std::size_t j = 0; j < items_.size(); ++j) {
            if (done_[j]) continue;
            const double t = times_.estimate(kind(items_[j]), work_of(problems_[items_[j].problem]));
            if (t < 0) return -1.0;
            left += t;
        }
        return left;
    }
    void finished(std::size_t i, const std::string& what, const std::string& result, double seconds) {
        done_[i] = true;
        ++finished_;
        times_.add(kind(items_[i]), work_of(problems_[items_[i].problem]), seconds);
        if (s_.progress_lines) {
            std::fprintf(stderr, "[%zu/%zu] %s: %s; %.1f s so far%s\n", finished_, items_.size(), what.c_str(),
                         result.c_str(), ms_since(t0_) / 1000,
                         finished_ < items_.size() ? left_text(seconds_left()).c_str() : "");
            std::fflush(stderr);
        }
        if (s_.on_progress) s_.on_progress();
    }

private:
    std::string kind(const Item& it) const {
        const Problem& p = problems_[it.problem];
        return p.op_text() + " " + accel::dtype_name(p.dtype) + " " + path_name(it.path) + " " +
               devices_[it.device].selector;
    }
    const Settings& s_;
    const std::vector<Item>& items_;
    const std::vector<Problem>& problems_;
    const std::vector<DeviceReport>& devices_;
    std::vector<bool> done_;
    std::size_t finished_ = 0;
    RowTimes times_;
    Clock::time_point t0_;
};

// "add 1000 f32 native on host:0": a row for progress lines.
std::string what_of(const Row& row) {
    return row.problem.op_text() + " " + row.problem.shape() + " " + row.dtype + " " + row.path + " on " +
           row.stable_selector;
}

// The devices of s.selectors, each once (two selectors may open one device).
std::vector<std::shared_ptr<accel::Device>> open_devices(const Settings& s) {
    std::vector<std::shared_ptr<accel::Device>> devices;
    for (const auto& sel : s.selectors) {
        auto d = accel::open_device(sel);
        if (std::any_of(devices.begin(), devices.end(), [&](const auto& x) { return x == d; })) continue;
        devices.push_back(d);
    }
    return devices;
}
}  // namespace

Results run(const Settings& s) {
    Results res;
    const std::vector<std::shared_ptr<accel::Device>> devices = open_devices(s);
    for (const auto& st : accel::backend_statuses())
        if (!st.availability.available) res.unavailable.push_back(st.summary());

    for (const auto& d : devices) {
        res.devices.push_back(device_report(d, s));
        if (s.on_progress) s.on_progress();
    }
    use_machine_ceilings(res.devices, s);

    std::vector<Problem> problems;
    for (Op op : s.ops)
        for (const auto& p : s.problems(op)) problems.push_back(p);
    const std::vector<Item> items = plan(s, problems, devices, res.notes);

    std::mt19937_64 rng(std::random_device{}());
    std::optional<Workload> w;
    std::vector<std::optional<Row>> rows(items.size());  // plan order, filled as rows finish
    Progress progress(s, items, problems, res.devices);
    auto seconds_left = [&] { return progress.seconds_left(); };
    auto finished = [&](std::size_t i, const std::string& what, const std::string& result, double seconds) {
        progress.finished(i, what, result, seconds);
    };
    // Rows being sampled: a round takes one sample of each in plan order
    // (devices and rows interleaved), until each has enough (stop_reason).
    std::vector<std::unique_ptr<Sampling>> resident;
    double resident_bytes = 0;
    auto end_row = [&](Sampling& r, const std::string& result) {
        const std::string what = what_of(r.row);
        const double seconds = r.setup_s + r.host_ms / 1000;
        rows[r.item] = std::move(r.row);
        finished(r.item, what, result, seconds);
    };
    auto sample_rounds = [&] {
        while (!resident.empty()) {
            for (auto& r : resident) {
                try {
                    take_sample(*r);
                    const std::string why = stop_reason(*r, s);
                    if (why.empty()) continue;
                    r->row.stopped_by = why;
                    summarize(r->row);
                    fill_rates(r->row, r->cost, res.devices[items[r->item].device], r->gemm);
                    end_row(*r, row_result_text(r->row));
                } catch (const accel::Error& e) {
                    r->row.error = e.what();
                    end_row(*r, row_result_text(r->row));
                }
                resident_bytes -= r->bytes;
                r.reset();  // frees its tensors
            }
            resident.erase(std::remove(resident.begin(), resident.end(), nullptr), resident.end());
            if (s.progress && !resident.empty())
                show_progress(progress.finished_rows(), items.size(), seconds_left(),
                              format("sampling %zu rows in rounds", resident.size()));
        }
    };
    for (std::size_t i = 0; i < items.size(); ++i) {
        const Item& it = items[i];
        const Problem& p = problems[it.problem];
        accel::Device& d = *devices[it.device];
        const DeviceReport& dev = res.devices[it.device];
        const auto row_t0 = Clock::now();
        auto r = std::make_unique<Sampling>();
        r->item = i;
        r->device = devices[it.device];
        std::optional<DefaultParameters> defaults;
        if (it.untuned) defaults.emplace(d);
        r->row = describe_row(dev, it, p, d);
        Row& row = r->row;
        const std::string what = what_of(row);
        if (s.progress) show_progress(progress.finished_rows(), items.size(), seconds_left(), what);
        try {
            if (!w || w->problem.op != p.op || w->problem.dims != p.dims || w->problem.dtype != p.dtype ||
                w->problem.activation != p.activation) {
                w.reset();  // free the previous inputs before drawing new ones
                w = make_workload(p, rng);
            }
            r->bound = allocate(*w, devices[it.device]);
            for (const auto& t : r->bound.in) r->bytes += double(t.bytes());
            r->bytes += double(r->bound.out.bytes());
            // Past the budget: the rows held so far get their samples first.
            if (!resident.empty() && resident_bytes + r->bytes > kResidentBytes) sample_rounds();
            row.oracle = w->oracle_text();
            r->gemm = accel::diagnostics::gemm_compute(d, p.dtype, it.path);
            set_up(*r, *w, it, s, dev.device_timer_ok);
        } catch (const accel::Unsupported& e) {
            // A size beyond what this device can hold or run (e.g. one
            // binding's range): a fact of the device, listed as a note like
            // a dtype it lacks, not a failed row.
            res.notes.push_back(p.op_text() + " " + p.shape() + " " + row.dtype + " " + row.path + " on " +
                                row.stable_selector + ": " + e.what() + "; skipped");
            finished(i, what, std::string("skipped: ") + e.what(), ms_since(row_t0) / 1000);
            continue;
        } catch (const accel::Error& e) {
            row.error = e.what();
            r->setup_s = ms_since(row_t0) / 1000;
            end_row(*r, row_result_text(r->row));
            continue;
        }
        r->setup_s = ms_since(row_t0) / 1000;
        resident_bytes += r->bytes;
        resident.push_back(std::move(r));
    }
    w.reset();
    sample_rounds();
    for (auto& row : rows)
        if (row) res.rows.push_back(std::move(*row));
    if (s.progress) show_progress(items.size(), items.size(), 0, "");
    for (std::size_t i = 0; i < devices.size(); ++i) res.devices[i].memory = devices[i]->memory_info();
    return res;
}

}  // namespace bench
