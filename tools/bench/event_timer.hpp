// EventTimer: a kernel's time in ms by events on the device's default
// stream (or host time between synchronizations where the device's timer
// failed the check), for the ceilings' probes and the rows' samples.
#pragma once

#include "runner.hpp"

#include <accel/accel.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace bench {

// Cap on kernel-only runs added to reach Settings::min_time_ms (probes).
constexpr int kMaxRuns = 10000;

// Kernel time of `fn` in ms: between two events on the device's default
// stream, or, for a device whose timer failed check_timer(), host time
// between two synchronizations.
/// Not thread-safe: one per device and thread.
class EventTimer {
public:
    EventTimer(accel::Device& d, bool device_timer = true)
        : d_(d), device_timer_(device_timer), start_(d.create_event()), end_(d.create_event()) {}
    double time(const std::function<void()>& fn) {
        if (!device_timer_) {
            d_.synchronize();
            const auto t0 = Clock::now();
            fn();
            d_.synchronize();
            return ms_since(t0);
        }
        start_->record(d_.default_stream());
        fn();
        end_->record(d_.default_stream());
        end_->synchronize();
        return d_.elapsed_ms(*start_, *end_);
    }
    // Appends timings of `fn` until there are at least `min_runs` samples
    // summing to at least `min_ms` (at most kMaxRuns).
    void fill(std::vector<double>& samples, const std::function<void()>& fn, int min_runs, double min_ms) {
        double total = 0;
        for (double t : samples) total += t;
        while ((int(samples.size()) < min_runs || total < min_ms) && int(samples.size()) < kMaxRuns) {
            samples.push_back(time(fn));
            total += samples.back();
        }
    }

private:
    accel::Device& d_;
    bool device_timer_;
    std::unique_ptr<accel::Event> start_, end_;
};

}  // namespace bench
