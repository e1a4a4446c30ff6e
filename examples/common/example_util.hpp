// Helpers shared by the examples: devices to run on, timing, random data,
// command-line parsing (tool_cli.hpp: CLI11, --help, one-line usage errors).
// Header-only.
#pragma once

#include <accel/accel.hpp>
#include <backend_list.hpp>
#include <tool_cli.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace example {

/// Adds the examples' common `--backends` option to `app`, writing into
/// `backends`: "all", or a comma list of selectors (host, opencl:pocl:0,
/// vulkan, cuda:1, ...); empty (not given) means $ACCEL_BACKEND, else all.
/// mlp_train has the same option with its own default (auto).
inline void add_backends_option(CLI::App& app, std::string& backends) {
    app.add_option("--backends", backends,
                   "all (every device of every available backend), or a comma-separated list of selectors (host, "
                   "opencl[:N], vulkan[:N], kokkos, cuda[:N], ...); the host backend always runs first as the "
                   "baseline; default: $ACCEL_BACKEND, else all")
        ->type_name("all|LIST");
}

/// The devices a --backends value names (tool_cli::resolve_backends), the
/// host backend first, added when the list lacks it: it is the baseline the
/// others are compared with. For "all" (or no value and no ACCEL_BACKEND),
/// unavailable backends are listed on stderr with the reason and left out; a
/// device the user named explicitly that cannot be opened throws (the
/// backend's reason), never silently dropped. Throws accel::InvalidArgument
/// for an unknown backend name, tool_cli::UsageError for an empty list.
inline std::vector<std::shared_ptr<accel::Device>> devices(const std::string& backends) {
    const bool every = (backends.empty() && !accel::env::value("ACCEL_BACKEND")) || backends == "all";
    if (every)
        for (const auto& st : accel::backend_statuses())
            if (!st.availability.available)
                std::fputs(tool_cli::wrap_lines("(not run) " + st.summary() + "\n", tool_cli::output_width(), 2).c_str(),
                           stderr);
    std::vector<std::shared_ptr<accel::Device>> out{accel::open_device("host")};
    for (const auto& sel : tool_cli::resolve_backends(backends)) {
        auto d = accel::open_device(sel);
        if (d->info().backend != "host") out.push_back(std::move(d));
    }
    return out;
}

/// n floats uniform in [lo, hi) from a fixed-seed generator.
inline std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = d(g);
    return v;
}

/// Median of `v` (0 when empty).
inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

/// Kernel time of `fn` in ms: one untimed warm-up run, then the median of
/// device-event timings on the default stream over at least `runs` runs
/// (fewer when one run alone takes over half a second, at least one).
inline double kernel_ms(accel::Device& d, const std::function<void()>& fn, int runs = 5) {
    auto start = d.create_event(), end = d.create_event();
    fn();
    d.synchronize();
    std::vector<double> t;
    double total = 0;
    while (int(t.size()) < runs && (t.empty() || total < 500)) {
        start->record(d.default_stream());
        fn();
        end->record(d.default_stream());
        end->synchronize();
        t.push_back(d.elapsed_ms(*start, *end));
        total += t.back();
    }
    return median(t);
}

/// Wall-clock time of `fn` in ms (host clock), median of `runs` runs.
inline double wall_ms(const std::function<void()>& fn, int runs = 3) {
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return median(t);
}

}  // namespace example
