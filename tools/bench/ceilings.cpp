#include "ceilings.hpp"

#include "event_timer.hpp"
#include "report.hpp"
#include "stats.hpp"
#include <accel/diagnostics.hpp>
#include <accel/page_locked.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace bench {
namespace {

using accel::Op;
using accel::OpPath;
using stats::median;

// Host time a probe may take before it stops growing (calibration loops are
// bounded by this, whatever the device's timer says).
constexpr double kProbeBudgetMs = 2000;
// A device timer is trusted when, around kernels that keep the device busy
// for at least kTimerCheckMs of host time, it reads between kTimerLow and
// kTimerHigh of the host time (launch and synchronization make host time a
// little longer; a timer in the wrong unit, or one that does not advance, is
// off by orders of magnitude).
constexpr double kTimerCheckMs = 20, kTimerLow = 0.5, kTimerHigh = 1.1;

// The device's timer against the host clock (see kTimerLow/kTimerHigh).
void check_timer(DeviceReport& r, const std::shared_ptr<accel::Device>& dp) {
    accel::Device& d = *dp;
    const std::size_t n = std::size_t{1} << 20;
    accel::Tensor a(dp, accel::Shape{n}), c(dp, accel::Shape{n});
    a.upload(std::vector<float>(n, 1.0f));
    EventTimer timer(d);
    int launches = 1;
    for (;;) {
        d.synchronize();
        const auto t0 = Clock::now();
        const double device_ms = timer.time([&] {
            for (int i = 0; i < launches; ++i) accel::ops::add(a, a, c);
        });
        const double host_ms = ms_since(t0);
        if (host_ms < kTimerCheckMs && host_ms < kProbeBudgetMs / 8 && launches < 4096) {
            launches *= 2;
            continue;
        }
        if (!(device_ms >= kTimerLow * host_ms && device_ms <= kTimerHigh * host_ms)) {
            r.device_timer_ok = false;
            r.timer_note = format("device timer read %.4g ms where the host clock read %.4g ms (%d launches of add "
                                  "on %zu elements; trusted between %.2g and %.2g of host time); host time "
                                  "between synchronizations used instead",
                                  device_ms, host_ms, launches, n, kTimerLow, kTimerHigh);
        }
        return;
    }
}

// Last-level cache of the host processor (largest cache of cpu0 in sysfs), bytes; 0 when unknown.
std::size_t host_last_level_cache() {
    std::size_t best = 0;
    for (int i = 0; i < 8; ++i) {
        std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
        std::size_t v = 0;
        std::string unit;
        if (!(f >> v)) continue;
        f >> unit;
        if (!unit.empty() && (unit[0] == 'K' || unit[0] == 'k')) v <<= 10;
        if (!unit.empty() && unit[0] == 'M') v <<= 20;
        best = std::max(best, v);
    }
    return best;
}

// Bandwidth (add, bytes as the add rows count them), peak FMA and launch
// costs with accel's own kernels; every loop bounded by kProbeBudgetMs.
double best_of(const std::vector<double>& t) { return *std::min_element(t.begin(), t.end()); }

// Device-to-device copy bandwidth (read + write), GB/s: r.copy_bytes, at
// most an eighth of the device's memory.
void measure_copy(DeviceReport& r, const std::shared_ptr<accel::Device>& dp, EventTimer& timer, const Settings& s,
                  int runs) {
    accel::Device& d = *dp;
    const std::size_t mem = d.info().global_memory_bytes;
    r.copy_bytes = mem ? std::min(s.copy_bytes, std::size_t(mem / 8)) : s.copy_bytes;
    accel::Buffer src(dp, r.copy_bytes), dst(dp, r.copy_bytes);
    auto copy = [&] { d.copy_device_to_device(dst, 0, src, 0, r.copy_bytes); };
    copy();  // first touch / warm-up
    std::vector<double> t;
    timer.fill(t, copy, runs, s.min_time_ms);
    r.copy_gbps = 2.0 * double(r.copy_bytes) / (median(t) * 1e6);
}

// Host↔device transfers (Transfer): for each size, rounds of the four
// kinds interleaved (to device and to host, pageable and page-locked), at
// least `runs` rounds and more while the size's share of the probe budget
// lasts; the bytes are checked to come back as sent once per size.
void measure_transfers(DeviceReport& r, const std::shared_ptr<accel::Device>& dp, const Settings& s, int runs) {
    accel::Device& d = *dp;
    const bool has_locked = accel::PageLockedBuffer::available(d);
    if (!has_locked)
        r.page_locked_note = "the " + d.info().backend +
                             " backend has no page-locked host memory: its copies of any host memory take one path";
    const std::size_t mem = d.info().global_memory_bytes;
    const double budget_ms = kProbeBudgetMs / double(std::max<std::size_t>(1, s.transfer_sizes.size()));
    for (const std::size_t bytes : s.transfer_sizes) {
        if (bytes == 0 || (mem && bytes > mem / 8)) continue;
        accel::Buffer device_buffer(dp, bytes);
        std::vector<unsigned char> pageable(bytes), back(bytes);
        for (std::size_t i = 0; i < bytes; ++i) pageable[i] = static_cast<unsigned char>(i * 2654435761u >> 13);
        std::optional<accel::PageLockedBuffer> locked;
        if (has_locked) locked.emplace(dp, bytes);
        std::vector<Transfer> kinds;
        for (const bool to_device : {true, false})
            for (const bool page_locked : {false, true})
                if (!page_locked || locked) kinds.push_back({to_device, page_locked, bytes, {}, 0, false});
        auto copy = [&](const Transfer& k) {
            void* host = k.page_locked ? locked->data() : (k.to_device ? pageable.data() : back.data());
            if (k.to_device)
                d.copy_host_to_device(device_buffer, 0, host, bytes);
            else
                d.copy_device_to_host(host, device_buffer, 0, bytes);
        };
        // The check: pageable → device → each host memory, byte for byte.
        d.copy_host_to_device(device_buffer, 0, pageable.data(), bytes);
        d.copy_device_to_host(back.data(), device_buffer, 0, bytes);
        bool ok = back == pageable;
        if (locked) {
            d.copy_device_to_host(locked->data(), device_buffer, 0, bytes);
            ok = ok && std::memcmp(locked->data(), pageable.data(), bytes) == 0;
        }
        for (const auto& k : kinds) copy(k);  // warm-up
        const auto start = Clock::now();
        for (int round = 0; round < runs || (round < 64 && ms_since(start) < budget_ms / 2); ++round) {
            for (auto& k : kinds) {
                const auto t0 = Clock::now();
                copy(k);
                k.samples.push_back(ms_since(t0));
            }
            if (ms_since(start) > budget_ms && round + 1 >= 3) break;
        }
        for (auto& k : kinds) {
            k.gbps = double(bytes) / (median(k.samples) * 1e6);
            k.ok = ok;
            r.transfers.push_back(std::move(k));
        }
    }
}

// add c = a + b with a working set (12 bytes per element) of 4× the
// last-level cache, at least 1 GiB, at most an eighth of the device's
// memory; smaller on a device too slow to run it within the budget. GB/s.
void measure_add(DeviceReport& r, const std::shared_ptr<accel::Device>& dp, EventTimer& timer, const Settings& s,
                 int runs) {
    accel::Device& d = *dp;
    const std::size_t mem = d.info().global_memory_bytes;
    const double target =
        s.quick ? double(std::size_t{12} << 20) : std::max(4.0 * double(r.cache_bytes), double(std::size_t{1} << 30));
    std::size_t n = std::size_t(std::min(target, mem ? double(mem) / 8 : target) / 12);
    const std::size_t trial = std::min<std::size_t>(n, std::size_t{1} << 20);
    double trial_ms = 0;
    {
        accel::Tensor a(dp, accel::Shape{trial}), c(dp, accel::Shape{trial});
        accel::ops::add(a, a, c);
        d.synchronize();
        const auto t0 = Clock::now();
        accel::ops::add(a, a, c);
        d.synchronize();
        trial_ms = std::max(ms_since(t0), 1e-3);
    }
    const double fit = kProbeBudgetMs / (2.0 * runs) / trial_ms * double(trial);
    n = std::max(trial, std::min(n, std::size_t(fit)));
    accel::Tensor a(dp, accel::Shape{n}), b(dp, accel::Shape{n}), c(dp, accel::Shape{n});
    auto add = [&] { accel::ops::add(a, b, c); };
    add();  // first touch
    std::vector<double> t;
    timer.fill(t, add, runs, 0);
    r.add_elements = n;
    r.add_gbps = 12.0 * double(n) / (best_of(t) * 1e6);
}

// The best rate of a probe, GFLOP/s: `call(iterations)` enqueues it and
// returns its FLOPs; the iteration count grows until one run takes
// fma_target_ms (host time bounds the growth too, whatever the device timer
// reads).
double measure_probe(EventTimer& timer, const Settings& s, int runs, const std::function<double(std::size_t)>& call) {
    std::size_t iterations = 64;
    double flops = 0, ms = 0;
    for (;;) {
        const auto t0 = Clock::now();
        ms = timer.time([&] { flops = call(iterations); });
        const double host_ms = ms_since(t0);
        if (ms >= s.fma_target_ms || host_ms >= s.fma_target_ms || host_ms * 16 > kProbeBudgetMs ||
            iterations >= (std::size_t{1} << 24))
            break;
        const double basis = std::max(ms, host_ms);
        const double grow = basis > 0 ? std::min(16.0, std::max(2.0, s.fma_target_ms / basis)) : 16.0;
        iterations = std::size_t(double(iterations) * grow);
    }
    std::vector<double> t_ms{ms};
    timer.fill(t_ms, [&] { flops = call(iterations); }, runs, 0);
    return flops / (best_of(t_ms) * 1e6);
}

// Peak FMA in compute type t (f32, f64, f16), GFLOP/s: enough work-items to
// fill every compute unit many times over. Throws Unsupported where the
// device lacks t.
double measure_fma(const std::shared_ptr<accel::Device>& dp, EventTimer& timer, const Settings& s, int runs,
                   accel::DType t) {
    const std::size_t n = std::size_t(std::max(1, dp->info().compute_units)) * 16384;
    accel::Tensor y(dp, accel::Shape{n}, t);
    return measure_probe(timer, s, runs, [&](std::size_t it) { return accel::diagnostics::fma_throughput(y, it); });
}

// Peak of the matrix engine on `operands` (f16, bf16), GFLOP/s: 16 groups of
// 32 lanes (warps) per compute unit, 8 independent chains each. Throws
// Unsupported where the device has no matrix engine or no probe of it.
double measure_matrix(const std::shared_ptr<accel::Device>& dp, EventTimer& timer, const Settings& s, int runs,
                      accel::DType operands) {
    const std::size_t n = std::size_t(std::max(1, dp->info().compute_units)) * 16 * 32;
    accel::Tensor y(dp, accel::Shape{n});
    return measure_probe(timer, s, runs,
                         [&](std::size_t it) { return accel::diagnostics::matrix_throughput(y, operands, it); });
}

// Launch cost: back-to-back submissions, one synchronize, host clock: the
// runtime's bare launch, ops::add on 1 element, and the backend's add kernel
// on that element called directly (the KernelArgs ops::add gives it, built
// once): add(1) less the direct call is the front-end's time per op
// (validation, path, geometry, the trace and check hooks), add(1) less the
// bare launch what the front-end and a 1-element kernel body add to the
// runtime's launch. The count (5000, 200 with --quick) shrinks to fit the
// probe budget.
void measure_launch_cost(DeviceReport& r, const std::shared_ptr<accel::Device>& dp, const Settings& s) {
    accel::Device& d = *dp;
    accel::Stream& stream = d.default_stream();
    accel::Tensor a(dp, accel::Shape{1}), c(dp, accel::Shape{1});
    a.upload(std::vector<float>{1.0f});
    auto per_launch_us = [&](const auto& submit) {
        auto batch_us = [&](int count) {
            d.synchronize();
            const auto t0 = Clock::now();
            for (int i = 0; i < count; ++i) submit();
            d.synchronize();
            return ms_since(t0) * 1e3 / count;
        };
        const double first = batch_us(10);
        const int fit = int(std::min(5000.0, kProbeBudgetMs * 1e3 / 4 / std::max(first, 1e-3)));
        const int launches = std::max(10, std::min(s.quick ? 200 : 5000, fit));
        return batch_us(launches);
    };
    r.bare_launch_us = per_launch_us([&] { accel::diagnostics::launch_empty(d, stream); });
    r.add1_launch_us = per_launch_us([&] { accel::ops::add(a, a, c); });
    if (const auto kernel = d.kernel_table().find(Op::add, accel::DType::f32, OpPath::native)) {
        accel::KernelArgs args;
        args.in[0] = args.in[1] = a.handle();
        args.out[0] = c.handle();
        args.n = 1;
        args.geometry = d.default_geometry(Op::add, accel::DType::f32, 1, 1);
        args.stream = &stream;
        r.kernel1_launch_us = per_launch_us([&] { (*kernel)(args); });
    }
}

void measure_ceilings(DeviceReport& r, const std::shared_ptr<accel::Device>& dp, const Settings& s) {
    check_timer(r, dp);
    EventTimer timer(*dp, r.device_timer_ok);
    const int runs = std::max(3, s.repeats);
    measure_copy(r, dp, timer, s, runs);
    measure_transfers(r, dp, s, runs);
    measure_add(r, dp, timer, s, runs);
    r.probe_gflops = measure_fma(dp, timer, s, runs, accel::DType::f32);
    const auto wanted = [&](accel::DType t) { return std::find(s.dtypes.begin(), s.dtypes.end(), t) != s.dtypes.end(); };
    // A ceiling the device lacks is absent (0) with its reason, not an error.
    const auto optional_ceiling = [&](Ceiling c, double& to, const std::function<double()>& measure) {
        try {
            to = measure();
        } catch (const accel::Unsupported& e) {
            to = 0;
            r.unmeasured.emplace_back(c, e.what());
        }
    };
    using accel::DType;
    if (wanted(DType::f64))
        optional_ceiling(Ceiling::fma_f64, r.probe_gflops_f64, [&] { return measure_fma(dp, timer, s, runs, DType::f64); });
    if (wanted(DType::f16)) {
        optional_ceiling(Ceiling::fma_f16, r.peak_gflops_f16, [&] { return measure_fma(dp, timer, s, runs, DType::f16); });
        optional_ceiling(Ceiling::matrix_f16, r.matrix_gflops_f16,
                         [&] { return measure_matrix(dp, timer, s, runs, DType::f16); });
    }
    if (wanted(DType::bf16))
        optional_ceiling(Ceiling::matrix_bf16, r.matrix_gflops_bf16,
                         [&] { return measure_matrix(dp, timer, s, runs, DType::bf16); });
    r.bandwidth_gbps = r.add_gbps;
    r.peak_gflops = r.probe_gflops;
    r.peak_gflops_f64 = r.probe_gflops_f64;
    r.ceiling_source = "own probes";
    measure_launch_cost(r, dp, s);
}

}  // namespace

void use_machine_ceilings(std::vector<DeviceReport>& devices, const Settings& s) {
    auto is_other_cpu = [](const DeviceReport& d) { return d.info.type == "cpu" && d.info.backend != "host"; };
    if (std::none_of(devices.begin(), devices.end(), is_other_cpu)) return;
    DeviceReport host;
    auto it = std::find_if(devices.begin(), devices.end(), [](const DeviceReport& d) { return d.info.backend == "host"; });
    if (it != devices.end()) {
        host = *it;
    } else {
        try {
            auto hd = accel::open_device("host");
            host.info = hd->info();
            host.cache_bytes = host_last_level_cache();
            measure_ceilings(host, hd, s);
        } catch (const accel::Error&) {
            return;  // no machine figures: each device keeps its own probes
        }
    }
    if (!host.error.empty()) return;
    for (auto& d : devices) {
        if (!is_other_cpu(d) || !d.error.empty()) continue;
        const bool bw = host.add_gbps > d.bandwidth_gbps, fma = host.probe_gflops > d.peak_gflops;
        d.bandwidth_gbps = std::max(d.bandwidth_gbps, host.add_gbps);
        d.peak_gflops = std::max(d.peak_gflops, host.probe_gflops);
        d.peak_gflops_f64 = std::max(d.peak_gflops_f64, host.probe_gflops_f64);
        d.ceiling_source = bw && fma ? "machine (host probes)"
                           : bw      ? "bandwidth: machine (host add); FMA: own probe"
                           : fma     ? "bandwidth: own add; FMA: machine (host probe)"
                                     : "own probes";
    }
}

DeviceReport device_report(const std::shared_ptr<accel::Device>& d, const Settings& s) {
    DeviceReport r;
    r.selector = d->selector();
    r.info = d->info();
    if (r.info.type == "cpu") r.cache_bytes = host_last_level_cache();
    r.vendor_matmul = d->kernel_table().supports(Op::matmul, OpPath::vendor);
    r.vendor_dense = d->kernel_table().supports(Op::dense, OpPath::vendor);
    if (s.progress) std::fprintf(stderr, "\r\033[Kmeasuring ceilings of %s ...", r.shown_selector().c_str());
    const auto probe_t0 = Clock::now();
    try {
        measure_ceilings(r, d, s);
    } catch (const accel::Error& e) {
        r.error = e.what();
    }
    if (s.progress_lines)
        std::fprintf(stderr, "ceilings of %s measured in %.1f s\n", r.shown_selector().c_str(),
                     ms_since(probe_t0) / 1000);
    return r;
}

}  // namespace bench
