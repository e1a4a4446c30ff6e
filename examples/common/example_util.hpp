// Helpers shared by the examples: devices to run on, timing, random data,
// command-line parsing (tool_cli.hpp: CLI11, --help, one-line usage errors).
// Header-only.
#pragma once

#include <accel/accel.hpp>
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

/// Every device of every available backend, the host backend first (the
/// baseline the others are compared with). Unavailable backends are listed
/// on stderr with the reason.
inline std::vector<std::shared_ptr<accel::Device>> all_devices() {
    std::vector<std::shared_ptr<accel::Device>> out{accel::open_device("host")};
    for (const auto& st : accel::backend_statuses()) {
        if (st.name == "host") continue;
        if (!st.availability.available) {
            std::fprintf(stderr, "(not run) %s\n", st.summary().c_str());
            continue;
        }
        for (int i = 0; i < st.availability.device_count; ++i)
            out.push_back(accel::open_device(st.name + ":" + std::to_string(i)));
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
