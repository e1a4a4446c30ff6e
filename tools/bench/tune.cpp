// `accel-bench tune`: searches the parameters of each device's tunable
// kernels (accel/device.hpp's Tuning) within a time budget and writes the
// device's tuning record (accel/tuning.hpp) into the cache and, with --out,
// into a database folder.
//
// Per key (op, dtype, shape class), on fresh random data of the class's
// shape (tuning_shape): the default runs first; each candidate then counts
// only when its output passes the float64 oracle's threshold for the op and
// dtype (accel::nmse_threshold, the conformance suite's) and is bitwise
// equal to the default's output for the same call (tuning never changes a
// result); its figure is the median of event-timed back-to-back runs. The
// best found is then timed against the default in alternating runs, and
// kept only when that shows it at least 3 % faster.
#include "commands.hpp"
#include "report.hpp"
#include "workload.hpp"

#include <tool_cli.hpp>

#include <accel/accel.hpp>
#include <accel/environment.hpp>
#include <accel/tuning.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>

#include <unistd.h>

namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The problem accel-bench measures for `key` (matmul M×N×K; dense batch×in×out).
Problem problem_for(const accel::TuningKey& key, const accel::TuningShape& s) {
    Problem p{key.op, {}, key.dtype};
    p.dims = key.op == accel::Op::dense ? std::vector<std::size_t>{s.m, s.k, s.n}
                                        : std::vector<std::size_t>{s.m, s.n, s.k};
    p.activation = accel::Activation::none;
    return p;
}

// The device's stable selector ("opencl:pocl:0"), else its index selector.
std::string shown(const accel::Device& d) {
    return d.info().stable_selector.empty() ? d.selector() : d.info().stable_selector;
}

// One candidate's outcome on a workload.
struct Trial {
    bool ok = false;
    std::string why;  ///< why it does not count (ok false)
    double gflops = 0;
};

// The tensors of one workload on one device, uploaded once (matmul and
// dense do not update their inputs).
struct Operands {
    std::vector<accel::Tensor> in;
    accel::Tensor out;
    std::vector<unsigned char> host;
};

Trial run_trial(const Workload& w, Operands& t, accel::Device& d, const std::vector<unsigned char>* reference,
                double budget_ms) {
    Trial r;
    accel::ops::Options o;
    o.path = accel::ops::PathChoice::native;
    o.deterministic = false;
    auto launch = [&] { w.launch(t.in, t.out, o); };
    try {
        std::fill(t.host.begin(), t.host.end(), 0);
        t.out.buffer().upload(t.host.data(), t.host.size());  // no earlier candidate's result can pass for this one's
        launch();  // builds the kernel
        d.synchronize();
        t.out.buffer().download(t.host.data(), t.host.size());
    } catch (const accel::Error& e) {
        r.why = std::string("does not run: ") + e.what();
        return r;
    }
    const double nmse = output_nmse(w, t.host.data());
    const double limit = accel::nmse_threshold(w.problem.op, w.problem.dtype);
    if (!(nmse <= limit)) {
        r.why = bench::format("nmse %.2e above the oracle's threshold %.0e", nmse, limit);
        return r;
    }
    if (reference && *reference != t.host) {
        r.why = "passes the oracle but its bits differ from the default's (a changed summation order)";
        return r;
    }
    std::vector<double> ms;
    auto start = d.create_event(), end = d.create_event();
    double spent = 0;
    while (ms.size() < 3 || (ms.size() < 15 && spent < budget_ms)) {
        start->record(d.default_stream());
        launch();
        end->record(d.default_stream());
        end->synchronize();
        ms.push_back(d.elapsed_ms(start, end));
        spent += ms.back();
    }
    std::sort(ms.begin(), ms.end());
    r.ok = true;
    r.gflops = w.flops / (ms[ms.size() / 2] * 1e-3) / 1e9;
    return r;
}

// Median milliseconds of `pairs` runs of the default and of the best,
// alternating (so that a change in the machine's load hits both), as
// {default, best}: the search's figures come from different moments.
std::pair<double, double> interleaved_ms(const Workload& w, Operands& t, accel::Device& d, accel::Tuning& tuning,
                                         const accel::TuningKey& key, const accel::TuningParams& def,
                                         const accel::TuningParams& best, int pairs) {
    accel::ops::Options o;
    o.path = accel::ops::PathChoice::native;
    o.deterministic = false;
    auto start = d.create_event(), end = d.create_event();
    auto once = [&](const accel::TuningParams& p) {
        tuning.set_params(key, p);
        start->record(d.default_stream());
        w.launch(t.in, t.out, o);
        end->record(d.default_stream());
        end->synchronize();
        return d.elapsed_ms(start, end);
    };
    std::vector<double> a, b;
    for (int i = 0; i < pairs; ++i) {
        a.push_back(once(def));
        b.push_back(once(best));
    }
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return {a[a.size() / 2], b[b.size() / 2]};
}

// Tunes every key of `d` in `dtypes` within `seconds`; returns the record.
accel::TuningRecord tune_device(accel::Device& d, const std::vector<accel::DType>& dtypes, double seconds, bool quick,
                                std::mt19937_64& rng) {
    accel::Tuning& tuning = *d.tuning();
    accel::TuningRecord record = accel::record_for(d.info());
    std::vector<accel::TuningKey> keys;
    for (const accel::TuningKey& k : tuning.tunable())
        if (std::find(dtypes.begin(), dtypes.end(), k.dtype) != dtypes.end()) keys.push_back(k);
    tuning.reset_params();  // the defaults, whatever record the device opened with
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const accel::TuningKey& key = keys[i];
        // What is left, shared by the keys still to tune, large ones twice (the
        // heaviest products, where the kernel's shape matters most).
        const auto weight = [](const accel::TuningKey& k) { return k.shape_class == "large" ? 2.0 : 1.0; };
        double weights = 0;
        for (std::size_t j = i; j < keys.size(); ++j) weights += weight(keys[j]);
        const double key_seconds = (seconds - seconds_since(t0)) * weight(key) / weights;
        const auto k0 = Clock::now();
        const accel::TuningShape shape = accel::tuning_shape(key.shape_class, quick);
        const Workload w = make_workload(problem_for(key, shape), rng);
        Operands t;
        for (std::size_t j = 0; j < w.inputs.size(); ++j) {
            t.in.emplace_back(d.shared_from_this(), w.input_shapes[j], w.problem.dtype);
            t.in.back().buffer().upload(w.stored[j].data(), w.stored[j].size());
        }
        t.out = accel::Tensor(d.shared_from_this(), w.output_shape, w.problem.dtype);
        t.host.assign(t.out.bytes(), 0);

        const std::vector<accel::TuningParams> candidates = tuning.candidates(key, quick);
        const double per_run_ms = std::max(20.0, 1000.0 * key_seconds / 40);
        accel::TuningEntry entry{key, shape, {}, {}};
        std::vector<unsigned char> reference;
        std::size_t tried = 0, refused = 0;
        for (std::size_t c = 0; c < candidates.size(); ++c) {
            if (c > 0 && seconds_since(k0) > key_seconds) break;
            try {
                tuning.set_params(key, candidates[c]);
            } catch (const accel::InvalidArgument& e) {
                ++refused;
                continue;
            }
            ++tried;
            const Trial r = run_trial(w, t, d, c == 0 ? nullptr : &reference, per_run_ms);
            if (c == 0) {
                if (!r.ok)
                    throw std::runtime_error("tune: " + shown(d) + " " + key.to_string() +
                                             ": the default parameters fail: " + r.why);
                reference = t.host;
                entry.default_params = {candidates[0], r.gflops};
                entry.best = entry.default_params;
                continue;
            }
            if (!r.ok) {
                ++refused;
                std::cerr << "  " << key.to_string() << " " << accel::params_text(candidates[c]) << ": " << r.why
                          << "\n";
                continue;
            }
            if (r.gflops > entry.best.gflops) entry.best = {candidates[c], r.gflops};
        }
        // The best against the default once more, interleaved: a best that won by
        // noise alone is worth less than the default, so it must be 3 % faster.
        std::string verdict;
        if (entry.best.params != entry.default_params.params) {
            const double searched = entry.best.gflops / entry.default_params.gflops;
            const auto [def_ms, best_ms] =
                interleaved_ms(w, t, d, tuning, key, entry.default_params.params, entry.best.params, 7);
            entry.default_params.gflops = w.flops / (def_ms * 1e-3) / 1e9;
            entry.best.gflops = w.flops / (best_ms * 1e-3) / 1e9;
            verdict = bench::format(" (%s: %.2fx in the search, %.2fx alternating)", accel::params_text(entry.best.params).c_str(),
                                    searched, entry.best.gflops / entry.default_params.gflops);
        }
        if (entry.best.gflops < 1.03 * entry.default_params.gflops) {
            if (!verdict.empty()) verdict += ", the default kept";
            entry.best = entry.default_params;
        }
        tuning.set_params(key, entry.best.params);
        std::cerr << bench::format("%s %-22s default %8.1f GFLOP/s, best %8.1f (%.2fx) after %zu of %zu candidates "
                                   "in %.1f s%s%s\n",
                                   shown(d).c_str(), key.to_string().c_str(), entry.default_params.gflops,
                                   entry.best.gflops, entry.best.gflops / entry.default_params.gflops, tried,
                                   candidates.size(), seconds_since(k0),
                                   refused ? bench::format(", %zu refused", refused).c_str() : "", verdict.c_str());
        record.entries.push_back(std::move(entry));
    }
    return record;
}

}  // namespace

CLI::App* add_tune(CLI::App& app, TuneArgs& a) {
    CLI::App* c = app.add_subcommand(
        "tune", "Search the parameters of each device's tunable kernels (matmul, dense) within a time budget; "
                "write the device's tuning record into the cache (ACCEL_CACHE_DIR) and with --out into a folder");
    c->add_option("--backends", a.backends, "devices to tune: all, a comma list of selectors (default ACCEL_BACKEND)");
    c->add_option("--minutes", a.minutes, "time budget in minutes, shared by every device and key (default 3)")
        ->check(CLI::Range(0.05, 600.0));
    c->add_option("--out", a.out, "a folder (e.g. data/tuning) that gets each device's record under its database name");
    c->add_option("--dtypes", a.dtypes, "dtypes to tune (default f32)")->delimiter(',');
    c->add_flag("--quick", a.quick, "smaller shapes and at most 8 candidates per key (a rehearsal)");
    return c;
}

int tune_command(const TuneArgs& a) {
    std::vector<accel::DType> dtypes;
    for (const std::string& t : a.dtypes.empty() ? std::vector<std::string>{"f32"} : a.dtypes)
        dtypes.push_back(accel::parse_dtype(t));
    if (!a.out.empty()) {  // a folder that cannot take the records fails now, not after the search
        std::error_code ec;
        std::filesystem::create_directories(a.out, ec);
        if (!std::filesystem::is_directory(a.out) || ::access(a.out.c_str(), W_OK) != 0)
            throw UsageError("--out '" + a.out + "': not a folder this process can write (" +
                             (ec ? ec.message() : std::string("not writable")) + "); give a writable folder");
    }
    const std::vector<std::string> selectors = resolve_backends(a.backends);
    std::vector<std::shared_ptr<accel::Device>> devices;
    for (const std::string& s : selectors) {
        auto d = accel::open_device(s);
        if (!d->tuning()) {
            std::cout << s << " (" << d->name() << "): nothing to tune\n";
            continue;
        }
        devices.push_back(d);
    }
    if (devices.empty()) {
        std::cerr << "tune: none of these devices has tunable kernels (accel-info says \"tuning record: none: nothing to tune\" for them)\n";
        return 1;
    }
    const std::string cache = accel::env::cache_dir();
    std::mt19937_64 rng(std::random_device{}());
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < devices.size(); ++i) {
        accel::Device& d = *devices[i];
        const double seconds = (a.minutes * 60 - seconds_since(t0)) / double(devices.size() - i);
        accel::TuningRecord r = tune_device(d, dtypes, seconds, a.quick, rng);
        r.written_by = "accel-bench tune --minutes " + bench::format("%g", a.minutes) + (a.quick ? " --quick" : "");
        const std::string name = accel::record_file_name(d.info());
        std::vector<std::string> written;
        if (!cache.empty()) {
            written.push_back((std::filesystem::path(cache) / "tuning" / name).string());
            accel::write_record(r, written.back());
        } else {
            std::cerr << "tune: no cache folder (ACCEL_CACHE_DIR, XDG_CACHE_HOME and HOME are unset): the record "
                         "goes to --out only\n";
        }
        if (!a.out.empty()) {
            written.push_back((std::filesystem::path(a.out) / name).string());
            accel::write_record(r, written.back());
        }
        for (const accel::TuningEntry& e : r.entries)
            std::cout << shown(d) << " " << e.key.to_string() << ": default "
                      << bench::format("%.1f", e.default_params.gflops) << " GFLOP/s, tuned "
                      << bench::format("%.1f", e.best.gflops) << " (" << accel::params_text(e.best.params) << ")\n";
        for (const std::string& f : written) std::cout << shown(d) << ": wrote " << f << "\n";
        d.load_tuning_record();
    }
    return 0;
}

}  // namespace bench
