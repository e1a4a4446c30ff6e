#include "report.hpp"

#include <accel/version.hpp>
#include <text_width.hpp>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace bench {
namespace {

using nlohmann::json;

std::string opt(const std::optional<double>& x, double scale = 1) { return x ? num(*x * scale) : ""; }

std::string status(const Row& r) { return !r.error.empty() ? "error" : r.passed() ? "pass" : "FAIL"; }

json settings_json(const Settings& s, const Results& r) {
    json j;
    std::vector<std::string> selectors;  // of the devices as they ran: stable ones, not the indices "all" gave
    for (const auto& d : r.devices) selectors.push_back(d.shown_selector());
    j["selectors"] = selectors;
    std::vector<std::string> ops, paths;
    for (auto op : s.ops) ops.push_back(accel::op_name(op));
    for (auto p : s.paths) paths.push_back(accel::path_name(p));
    j["ops"] = ops;
    j["paths"] = paths;
    j["elementwise_sizes"] = s.elementwise_sizes;
    j["matmul_sizes"] = s.matmul_sizes;
    j["dense_shapes"] = s.dense_shapes;
    std::vector<std::string> activations;
    for (auto a : s.dense_activations) activations.push_back(accel::activation_name(a));
    j["dense_activations"] = activations;
    j["column_sum_shapes"] = s.column_sum_shapes;
    j["block_sizes"] = s.block_sizes;
    j["warmup"] = s.warmup;
    j["repeats"] = s.repeats;
    j["min_time_ms"] = s.min_time_ms;
    j["runs"] = s.runs > 0 ? json(s.runs) : json(nullptr);
    j["target_ci"] = s.target_ci;
    j["max_row_ms"] = s.max_row_ms;
    j["quick"] = s.quick;
    j["oracle"] = "float64 reference; matmul/dense with M*N*K >= 1024^3 on 8 random output rows";
    return j;
}

// What accel's front-end and a 1-element kernel add to the runtime's bare
// launch, µs: add(1) - bare, clamped at 0 where add(1) is the cheaper (then
// launch_overhead_note says why).
double launch_overhead_us(const DeviceReport& d) { return std::max(0.0, d.add1_launch_us - d.bare_launch_us); }

// accel's front-end per op, µs: add(1) less the backend's add kernel called
// directly on the same element; 0 where that kernel was not found, or where
// the direct call measured the slower (timing noise: the two differ by the
// front-end alone).
double front_end_us(const DeviceReport& d) {
    return d.kernel1_launch_us > 0 ? std::max(0.0, d.add1_launch_us - d.kernel1_launch_us) : 0.0;
}

std::string launch_overhead_note(const DeviceReport& d) {
    return format("add(1) took %.3g us, less than the bare launch's %.3g us, so the overhead is shown as 0: a "
                  "1-element op takes a cheaper path than the bare launch here (the host backend runs an op of one "
                  "chunk on the calling thread, where its bare launch wakes every thread of its team)",
                  d.add1_launch_us, d.bare_launch_us);
}

// A measured figure, or null where it was not measured (0: the probe did not
// run, failed, or the device has no such unit).
json measured(double x) { return x > 0 ? json(x) : json(nullptr); }

json device_json(const DeviceReport& d) {
    const auto& i = d.info;
    const bool ok = d.error.empty();  // the ceilings were measured
    auto figure = [&](double x) { return ok ? measured(x) : json(nullptr); };
    json j{{"selector", d.selector},
           {"index", i.index},
           {"backend", i.backend},
           {"name", i.name},
           {"vendor", i.vendor},
           {"type", i.type},
           {"driver_version", i.driver_version},
           {"runtime_version", i.runtime_version},
           {"compute_units", i.compute_units},
           {"global_memory_bytes", measured(double(i.global_memory_bytes))},
           {"memory_peak_in_use_bytes", d.memory.peak_in_use},
           {"memory_cached_bytes", d.memory.cached},
           {"max_block_size", i.limits.max_block_size},
           {"timer", i.timer},
           {"vendor_path", {{"matmul", d.vendor_matmul}, {"dense", d.vendor_dense}}},
           {"stable_selector", d.shown_selector()},
           {"copy_gbps", figure(d.copy_gbps)},
           {"copy_bytes", figure(double(d.copy_bytes))},
           {"add_probe_gbps", figure(d.add_gbps)},
           {"add_probe_elements", figure(double(d.add_elements))},
           {"fma_probe_gflops", figure(d.probe_gflops)},
           {"fma_probe_gflops_f64", figure(d.probe_gflops_f64)},
           {"bandwidth_ceiling_gbps", figure(d.bandwidth_gbps)},
           {"peak_fma_gflops", figure(d.peak_gflops)},
           {"peak_fma_gflops_f64", figure(d.peak_gflops_f64)},
           {"peak_fma_gflops_f16", figure(d.peak_gflops_f16)},
           {"peak_matrix_gflops_f16", figure(d.matrix_gflops_f16)},
           {"peak_matrix_gflops_bf16", figure(d.matrix_gflops_bf16)},
           {"ceiling_source", d.ceiling_source},
           {"last_level_cache_bytes", measured(double(d.cache_bytes))},
           {"device_timer_ok", d.device_timer_ok},
           {"bare_launch_us", figure(d.bare_launch_us)},
           {"add1_launch_us", figure(d.add1_launch_us)},
           {"launch_overhead_us", ok ? json(launch_overhead_us(d)) : json(nullptr)},
           {"kernel1_launch_us", figure(d.kernel1_launch_us)},
           {"front_end_us", ok && d.kernel1_launch_us > 0 ? json(front_end_us(d)) : json(nullptr)}};
    if (ok && d.add1_launch_us < d.bare_launch_us) j["launch_overhead_note"] = launch_overhead_note(d);
    for (const auto& kv : i.extra) j["extra"][kv.first] = kv.second;
    if (!d.timer_note.empty()) j["timer_note"] = d.timer_note;
    j["host"] = i.host;
    j["uuid"] = i.uuid;
    j["pci_bus_id"] = i.pci_bus_id;
    if (!d.error.empty()) j["ceiling_error"] = d.error;
    for (const auto& [c, why] : d.unmeasured) j["unmeasured_ceilings"][ceiling_name(c)] = why;
    j["transfers"] = json::array();
    for (const auto& t : d.transfers)
        j["transfers"].push_back({{"direction", t.to_device ? "host_to_device" : "device_to_host"},
                                  {"memory", t.page_locked ? "page_locked" : "pageable"},
                                  {"bytes", t.bytes},
                                  {"gbps", measured(t.gbps)},
                                  {"samples_ms", t.samples},
                                  {"ok", t.ok}});
    if (!d.page_locked_note.empty()) j["page_locked_unavailable"] = d.page_locked_note;
    return j;
}

json row_json(const Row& r) {
    json j{{"backend", r.backend},
           {"device", r.device},
           {"selector", r.selector},
           {"stable_selector", r.stable_selector},
           {"runtime", r.runtime},
           {"timer", r.timer},
           {"op", accel::op_name(r.problem.op)},
           {"shape", r.problem.shape()},
           {"dtype", r.dtype},
           {"size", r.problem.size()},
           {"size_unit", r.problem.size_unit()},
           {"path", r.path},
           {"block", r.block},
           {"geometry", r.geometry},
           {"default_geometry", r.default_geometry},
           {"nmse_threshold", r.threshold},
           {"pass", r.passed()}};
    if (!r.problem.activation_text().empty()) j["activation"] = r.problem.activation_text();
    if (!r.error.empty()) {
        j["error"] = r.error;
        return j;
    }
    j["runs"] = r.runs;
    j["kernel_ms"] = {{"median", r.kernel_ms_median},
                      {"min", r.kernel_ms_min},
                      {"max", r.kernel_ms_max},
                      {"cold_median", r.kernel_ms_cold},
                      {"median_ci95", r.median_ci.ok ? json::array({r.median_ci.lo, r.median_ci.hi}) : json(nullptr)},
                      {"samples", r.samples},
                      {"launches_per_sample", r.launches_per_sample}};
    j["stopped_by"] = r.stopped_by;
    j["stalled"] = r.stalled;
    j["cold_faster"] = r.cold_faster;
    j["flops"] = r.flops;
    j["bytes"] = r.bytes;
    j["end_to_end_ms"] = measured(r.end_to_end_ms);
    if (r.gbps) j["gbps"] = *r.gbps;
    if (r.gflops) j["gflops"] = *r.gflops;
    if (r.ceiling) j["ceiling"] = ceiling_name(*r.ceiling);
    if (r.fraction) j["fraction_of_ceiling"] = *r.fraction;
    if (r.gbps) j["cache_resident"] = r.cache_resident;
    j["nmse"] = r.nmse;
    j["oracle"] = r.oracle;
    return j;
}

}  // namespace

std::string num(double x) { return x >= 1e4 ? format("%.0f", x) : format("%.4g", x); }

json to_json(const Settings& s, const Results& r, const Machine& m) {
    json j;
    j["accel_version"] = ACCEL_VERSION;
    j["machine"] = {{"cpu", m.cpu}, {"os", m.os}, {"hostname", m.hostname}};
    j["settings"] = settings_json(s, r);
    j["devices"] = json::array();
    for (const auto& d : r.devices) j["devices"].push_back(device_json(d));
    j["rows"] = json::array();
    for (const auto& row : r.rows) j["rows"].push_back(row_json(row));
    j["notes"] = r.notes;
    j["unavailable"] = r.unavailable;
    return j;
}

void TextTable::write(std::ostream& out, std::size_t max_width) const {
    std::vector<std::size_t> width;
    for (const auto& row : rows_) {
        width.resize(std::max(width.size(), row.size()));
        for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], tool_cli::text_columns(row[c]));
    }
    std::vector<bool> kept(width.size(), true);
    auto total = [&] {
        std::size_t t = 0;
        for (std::size_t c = 0; c < width.size(); ++c) t += kept[c] ? width[c] + 2 : 0;
        return t > 2 ? t - 2 : 0;
    };
    std::vector<std::string> left_out;
    for (const auto& name : optional_) {
        if (max_width == 0 || total() <= max_width) break;
        const auto it = std::find(rows_[0].begin(), rows_[0].end(), name);
        if (it == rows_[0].end()) continue;
        kept[std::size_t(it - rows_[0].begin())] = false;
        left_out.push_back(name);
    }
    auto line = [&](const std::vector<std::string>& row) {
        std::string s;
        bool first = true;
        for (std::size_t c = 0; c < row.size(); ++c) {
            if (!kept[c]) continue;
            const std::string pad(width[c] - tool_cli::text_columns(row[c]), ' ');
            s += (first ? "" : "  ") + (c < left_ ? row[c] + pad : pad + row[c]);
            first = false;
        }
        while (!s.empty() && s.back() == ' ') s.pop_back();
        out << s << "\n";
    };
    line(rows_[0]);
    out << std::string(total(), '-') << "\n";
    for (std::size_t i = 1; i < rows_.size(); ++i) line(rows_[i]);
    if (left_out.empty()) return;
    std::string names;
    for (const auto& n : left_out) names += (names.empty() ? "" : ", ") + n;
    out << "(left out to fit " << max_width << " columns: " << names << "; --wide shows every column)\n";
}

std::string fit_text(const std::string& text, std::size_t width) {
    return width == 0 ? text : tool_cli::wrap_lines(text, width, 2);
}

// matmul/dense rows run on both paths: native GFLOP/s as a fraction of
// vendor's, and what deterministic mode costs there: it runs the native
// kernel, so its time over the faster path's (1.00 where native is faster).
void write_native_vs_vendor(std::ostream& out, const Results& r, std::size_t width) {
    TextTable t({"device", "op", "shape", "dtype", "native GFLOP/s", "vendor GFLOP/s", "native/vendor",
                 "deterministic cost"},
                4);
    t.set_optional({"deterministic cost", "vendor GFLOP/s"});
    for (const auto& nat : r.rows) {
        if (nat.path != "native" || !nat.gflops || !nat.error.empty()) continue;
        for (const auto& ven : r.rows)
            if (ven.path == "vendor" && ven.gflops && ven.error.empty() && ven.selector == nat.selector &&
                ven.problem.op_text() == nat.problem.op_text() && ven.problem.shape() == nat.problem.shape() &&
                ven.dtype == nat.dtype && ven.block == nat.block)
                t.add({nat.stable_selector, nat.problem.op_text(), nat.problem.shape(), nat.dtype,
                       num(*nat.gflops),
                       num(*ven.gflops), format("%.2f", *nat.gflops / *ven.gflops),
                       format("%.2fx", std::max(1.0, *ven.gflops / *nat.gflops))});
    }
    if (t.empty()) return;
    out << "\nnative kernels against the vendor library, same run (deterministic cost: the native row's time over "
           "the faster path's, what ACCEL_DETERMINISTIC=1 costs where `auto` takes the faster; ops without a vendor "
           "path run the same kernel in the mode, at no cost):\n";
    t.write(out, width);
}

// Several devices in one run: one line per (op, shape, path, block), one
// rate column per device and each device's ratio to the first.
void write_side_by_side(std::ostream& out, const Results& r, std::size_t width) {
    if (r.devices.size() < 2) return;
    std::vector<std::string> header{"op", "shape", "dtype", "path", "block", "unit"};
    for (const auto& d : r.devices) header.push_back(d.shown_selector());
    for (std::size_t i = 1; i < r.devices.size(); ++i)
        header.push_back(r.devices[i].shown_selector() + " / " + r.devices[0].shown_selector());
    TextTable t(header, 6);
    std::vector<std::string> done;
    for (const auto& row : r.rows) {
        const std::string key = row.problem.op_text() + "|" + row.problem.shape() + "|" +
                                row.dtype + "|" + row.path + "|" + (row.default_geometry ? "" : row.block);
        if (std::find(done.begin(), done.end(), key) != done.end()) continue;
        done.push_back(key);
        std::vector<std::string> line{row.problem.op_text(), row.problem.shape(), row.dtype, row.path,
                                      row.default_geometry ? "default" : row.block, row.gflops ? "GFLOP/s" : "GB/s"};
        std::vector<double> rate;
        for (const auto& d : r.devices) {
            double v = 0;
            for (const auto& x : r.rows)
                if (x.selector == d.selector && x.error.empty() && x.problem.op_text() == row.problem.op_text() &&
                    x.problem.shape() == row.problem.shape() && x.dtype == row.dtype && x.path == row.path &&
                    x.default_geometry == row.default_geometry && (row.default_geometry || x.block == row.block))
                    v = x.gflops ? *x.gflops : x.gbps ? *x.gbps : 0;
            rate.push_back(v);
            line.push_back(v > 0 ? num(v) : "–");
        }
        for (std::size_t i = 1; i < rate.size(); ++i)
            line.push_back(rate[i] > 0 && rate[0] > 0 ? format("%.2f", rate[i] / rate[0]) : "–");
        t.add(std::move(line));
    }
    out << "\nside by side (rates of the same rows on each device, and each device's ratio to the first):\n";
    t.set_optional({"block", "unit", "path"});
    t.write(out, width);
}

void write_device_legend(std::ostream& out, const std::vector<LegendEntry>& devices) {
    out << "devices:\n";
    std::size_t width = 0;
    for (const auto& d : devices) width = std::max(width, d.id.size());
    for (const auto& d : devices) {
        out << "  " << d.id << std::string(width - d.id.size() + 2, ' ') << d.name;
        if (!d.runtime.empty()) out << "; runtime " << d.runtime;
        if (!d.driver.empty() && d.driver != "-" && d.runtime.find(d.driver) == std::string::npos)
            out << "; driver " << d.driver;
        if (!d.timer.empty()) out << "; timer " << d.timer;
        out << "\n";
    }
}

// 65536 → "64 KiB", 16777216 → "16 MiB"; other sizes in bytes.
std::string bytes_text(std::size_t bytes) {
    if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " B";
}

// The host↔device transfer figures, a line per device and size: GB/s of
// each direction from pageable and from page-locked memory.
void write_transfers(std::ostream& out, const Results& r, std::size_t width) {
    TextTable t({"device", "bytes", "to device GB/s", "page-locked", "to host GB/s", "page-locked", "ok"}, 1);
    for (const auto& d : r.devices) {
        std::vector<std::size_t> sizes;
        for (const auto& x : d.transfers)
            if (std::find(sizes.begin(), sizes.end(), x.bytes) == sizes.end()) sizes.push_back(x.bytes);
        for (const std::size_t bytes : sizes) {
            auto rate = [&](bool to_device, bool page_locked) {
                for (const auto& x : d.transfers)
                    if (x.bytes == bytes && x.to_device == to_device && x.page_locked == page_locked && x.gbps > 0)
                        return num(x.gbps);
                return std::string("–");
            };
            const bool ok = std::all_of(d.transfers.begin(), d.transfers.end(),
                                        [&](const Transfer& x) { return x.bytes != bytes || x.ok; });
            t.add({d.shown_selector(), bytes_text(bytes), rate(true, false), rate(true, true), rate(false, false),
                   rate(false, true), ok ? "yes" : "NO"});
        }
    }
    if (t.empty()) return;
    out << "host-device transfers (blocking copies; bytes / median host time of the call):\n";
    t.write(out, width);
    for (const auto& d : r.devices)
        if (!d.page_locked_note.empty() && !d.transfers.empty())
            out << "no page-locked transfers on " << d.shown_selector() << ": " << d.page_locked_note << "\n";
}

void write_table(std::ostream& report, const Results& r, const Machine& m, std::size_t width) {
    const bool wide = width == 0;
    std::ostringstream out;
    out << "accel-bench " << ACCEL_VERSION << " on " << m.hostname << " (" << m.cpu << ", " << m.os << ")\n";
    out << "warm ms: device events around back-to-back runs of the op (median/min/max; rates use the median; ! marks "
           "a spread that shows contention: max >= " << kStallRatio << "x min and " << kStallMs << " ms more); samples: "
           "how many, each the median of a batch of launches, taken in rounds through the run until the median's 95 % "
           "interval is within the target (~ marks a row ended by its time cap instead); cold ms: the median run "
           "right after its inputs were uploaded (^ marks one faster than the warm median by more than " << kColdRatio
        << "x: the warm runs were slowed); e2e ms: host clock, upload inputs + op + download output (median)\n";
    out << "launch us: host time per bare empty launch of the runtime (host backend: dispatching an empty task to "
           "its OpenMP team, its cost of a parallel op); add(1) us: per 1-element ops::add (both back to back, one "
           "sync); front-end us: add(1) less the backend's add kernel called directly on the same element, "
           "accel's own work per op\n";
    out << "% ceil: GB/s of the bandwidth ceiling (memory-bound ops), or GFLOP/s of the peak of the unit the row's "
           "kernel computes with in its dtype and path (matmul, dense: FMA in f32 or f64, f16/bf16 accumulated in "
           "f32 against f32's; the matrix engine's f16 or bf16 peak where the device runs them there); – where that "
           "ceiling was not measured; * marks operands within twice the last-level cache (may pass the DRAM "
           "ceiling); nmse vs the float64 oracle\n\n";
    // Compact: the long texts once, in a legend; wide: in every line.
    std::vector<std::string> dev_header{"device"};
    if (wide) dev_header.insert(dev_header.end(), {"name", "runtime", "timer"});
    dev_header.insert(dev_header.end(), {"ceiling GB/s", "own add GB/s", "ceiling GFLOP/s", "own FMA GFLOP/s",
                                         "f16 FMA GFLOP/s", "matrix f16 / bf16", "launch us", "add(1) us",
                                         "front-end us", "vendor path"});
    TextTable dev(dev_header, wide ? 4 : 1);
    std::vector<LegendEntry> legend;
    for (const auto& d : r.devices) {
        const bool ok = d.error.empty();
        auto v = [&](double x) { return ok ? num(x) : std::string("error"); };
        // f32 figure, and f64's beside it where measured.
        auto fma = [&](double f32, double f64) { return f64 > 0 && ok ? v(f32) + " (f64 " + num(f64) + ")" : v(f32); };
        const std::string timer = d.device_timer_ok ? d.info.timer : "host clock (device timer rejected)";
        std::vector<std::string> line{d.shown_selector()};
        if (wide) line.insert(line.end(), {d.info.name, d.info.runtime_version, timer});
        // Absent ceilings (not measured, or the device has none) as "–".
        auto peak = [&](double x) { return !ok ? std::string("error") : x > 0 ? num(x) : std::string("–"); };
        line.insert(line.end(), {v(d.bandwidth_gbps), v(d.add_gbps), fma(d.peak_gflops, d.peak_gflops_f64),
                                 fma(d.probe_gflops, d.probe_gflops_f64), peak(d.peak_gflops_f16),
                                 peak(d.matrix_gflops_f16) + " / " + peak(d.matrix_gflops_bf16), v(d.bare_launch_us),
                                 v(d.add1_launch_us), d.kernel1_launch_us > 0 ? v(front_end_us(d)) : std::string("–"),
                                 d.vendor_matmul ? "yes" : "no"});
        dev.add(std::move(line));
        legend.push_back({d.shown_selector(), d.info.name, d.info.runtime_version, d.info.driver_version, timer});
    }
    if (!wide) write_device_legend(out, legend);
    dev.set_optional({"add(1) us", "own add GB/s", "own FMA GFLOP/s", "f16 FMA GFLOP/s", "vendor path", "launch us"});
    dev.write(out, width);
    for (const auto& d : r.devices) {
        if (!d.error.empty()) out << "ceilings of " << d.selector << " failed: " << d.error << "\n";
        if (!d.timer_note.empty()) out << "timer of " << d.shown_selector() << ": " << d.timer_note << "\n";
        for (const auto& [c, why] : d.unmeasured)
            out << "no " << ceiling_name(c) << " ceiling on " << d.shown_selector() << ": " << why << "\n";
        if (d.error.empty())
            out << "ceilings of " << d.shown_selector() << ": " << d.ceiling_source << "; add probe on "
                << d.add_elements << " elements (" << num(12.0 * double(d.add_elements) / (1 << 20)) << " MiB)"
                << (d.cache_bytes ? ", last-level cache " + num(double(d.cache_bytes) / (1 << 20)) + " MiB" : "")
                << "; device-to-device copy " << num(d.copy_gbps) << " GB/s; memory: peak "
                << num(double(d.memory.peak_in_use) / (1 << 20)) << " MiB in use, "
                << num(double(d.memory.cached) / (1 << 20)) << " MiB cached at the end\n";
    }
    write_transfers(out, r, width);
    for (const auto& u : r.unavailable) out << "not run: " << u << "\n";
    out << "\n";

    std::vector<std::string> header{"device", "name", "op", "shape", "dtype", "path", "block", "warm ms", "min",
                                    "max", "samples", "cold ms", "e2e ms", "GB/s", "GFLOP/s", "% ceil", "nmse", "limit", "ok"};
    if (!wide) header.erase(header.begin() + 1);  // the legend names the devices
    TextTable t(header, wide ? 6 : 5);
    for (const auto& row : r.rows) {
        std::vector<std::string> c{row.stable_selector, row.device, row.problem.op_text(),
                                   row.problem.shape(), row.dtype, row.path, row.block};
        if (!wide) c.erase(c.begin() + 1);
        if (row.error.empty()) {
            for (double v : {row.kernel_ms_median, row.kernel_ms_min, row.kernel_ms_max})
                c.push_back(num(v));
            c.back() += row.stalled ? "!" : "";
            c.push_back(std::to_string(row.runs) + (row.stopped_by == "time cap" ? "~" : ""));
            c.push_back(num(row.kernel_ms_cold) + (row.cold_faster ? "^" : ""));
            c.push_back(num(row.end_to_end_ms));
            const std::string ceil = row.fraction ? opt(row.fraction, 100) : row.ceiling ? "–" : "";
            c.insert(c.end(), {opt(row.gbps), opt(row.gflops), ceil + (row.cache_resident ? "*" : ""),
                               format("%.1e", row.nmse)});
        } else {
            c.insert(c.end(), 10, "–");
        }
        c.insert(c.end(), {format("%.0e", row.threshold), status(row)});
        t.add(std::move(c));
    }
    t.set_optional({"limit", "block", "e2e ms", "cold ms", "min", "max", "samples", "nmse"});
    t.write(out, width);
    for (const auto& row : r.rows)
        if (!row.error.empty())
            out << "error: " << row.problem.op_text() << " " << row.problem.shape() << " " << row.dtype
                << " on " << row.selector
                << ": " << row.error << "\n";
    write_native_vs_vendor(out, r, width);
    write_side_by_side(out, r, width);
    for (const auto& n : r.notes) out << "note: " << n << "\n";
    report << fit_text(out.str(), width);
}

std::string csv_field(const std::string& s) {
    std::string o = "\"";
    for (char ch : s) o += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return o + "\"";
}

void write_csv(std::ostream& out, const Results& r) {
    // Device names and errors may hold commas: quote every text field.
    const auto q = csv_field;
    out << "backend,device,selector,stable_selector,runtime,timer,op,activation,shape,dtype,size,size_unit,path,block,geometry,runs,"
           "kernel_ms_median,kernel_ms_min,kernel_ms_max,kernel_ms_cold,stalled,end_to_end_ms,gbps,gflops,fraction_of_ceiling,cache_resident,"
           "nmse,nmse_threshold,pass,error,ceiling\n";
    for (const auto& row : r.rows) {
        const bool ok = row.error.empty();
        auto val = [&](double v) { return ok ? format("%.6g", v) : std::string(); };
        auto ov = [&](const std::optional<double>& v) { return ok && v ? format("%.6g", *v) : std::string(); };
        out << q(row.backend) << "," << q(row.device) << "," << q(row.selector) << "," << q(row.stable_selector) << ","
            << q(row.runtime) << "," << q(row.timer) << ","
            << accel::op_name(row.problem.op) << "," << row.problem.activation_text() << "," << row.problem.shape() << ","
            << row.dtype << ","
            << format("%.6g", row.problem.size())
            << "," << row.problem.size_unit() << "," << row.path << "," << row.block << "," << q(row.geometry) << ","
            << (ok ? std::to_string(row.runs) : "") << "," << val(row.kernel_ms_median) << "," << val(row.kernel_ms_min)
            << "," << val(row.kernel_ms_max) << "," << val(row.kernel_ms_cold) << ","
            << (ok ? (row.stalled ? "true" : "false") : "") << "," << val(row.end_to_end_ms) << "," << ov(row.gbps) << ","
            << ov(row.gflops) << "," << ov(row.fraction) << "," << (ok && row.gbps ? (row.cache_resident ? "true" : "false") : "")
            << "," << (ok ? format("%.3e", row.nmse) : "") << ","
            << format("%.0e", row.threshold) << "," << (row.passed() ? "true" : "false") << "," << q(row.error)
            << "," << (row.ceiling ? ceiling_name(*row.ceiling) : "") << "\n";
    }
}

double figure_or_zero(const json& obj, const char* key) noexcept {
    const auto it = obj.is_object() ? obj.find(key) : obj.end();
    return it != obj.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string op_text(const json& row) {
    auto text = [&](const char* key) {
        return row.contains(key) && row[key].is_string() ? row[key].get<std::string>() : std::string();
    };
    std::string op = text("op"), activation = text("activation");
    if (op == accel::op_name(accel::Op::dense) && activation.empty()) activation = "sigmoid";
    return activation.empty() ? op : op + "+" + activation;
}

json read_results(const std::string& path) {
    const std::string what = ", not an accel-bench JSON report (expected the output of `accel-bench run --format "
                             "json` or --json)";
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error(path + ": cannot open for reading: " + std::strerror(errno));
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (f.bad()) throw std::runtime_error(path + ": read error: " + std::strerror(errno));
    if (text.empty()) throw std::runtime_error(path + ": empty file (0 bytes)" + what);
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        if (e.byte >= text.size())
            throw std::runtime_error(path + ": truncated JSON: the document ends unfinished after " +
                                     std::to_string(text.size()) + " bytes (an interrupted write?)" + what);
        throw std::runtime_error(path + ": not JSON: syntax error at byte " + std::to_string(e.byte) + " of " +
                                 std::to_string(text.size()) + what);
    }
    if (j.is_object() && j.value("command", "") == "mlp")
        throw std::runtime_error(path + ": an `accel-bench mlp` report (training times), not one of ops" + what);
    if (!j.is_object() || !j.contains("rows") || !j["rows"].is_array())
        throw std::runtime_error(path + ": JSON without a \"rows\" array" + what);
    for (std::size_t i = 0; i < j["rows"].size(); ++i) {
        const json& row = j["rows"][i];
        if (!row.is_object())
            throw std::runtime_error(path + ": row " + std::to_string(i) + " is not a JSON object" + what);
        // compare tests these: a sample that is not a time would skew it unseen.
        const auto ms = row.find("kernel_ms");
        if (ms == row.end() || !ms->is_object() || !ms->contains("samples")) continue;
        const json& samples = (*ms)["samples"];
        const bool ok = samples.is_array() && std::all_of(samples.begin(), samples.end(), [](const json& x) {
                            return x.is_number() && std::isfinite(x.get<double>()) && x.get<double>() > 0;
                        });
        if (!ok)
            throw std::runtime_error(path + ": row " + std::to_string(i) +
                                     ": kernel_ms.samples is not an array of positive times (ms)" + what);
    }
    return j;
}

}  // namespace bench
