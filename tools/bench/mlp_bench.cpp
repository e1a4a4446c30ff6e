// `accel-bench mlp`: training of examples/mlp_train's MLP timed on each
// device (see mlp_bench.hpp), its report, and the command line.
#include "mlp_bench.hpp"

#include "commands.hpp"
#include "fleet.hpp"

#include <accel/version.hpp>
#include <text_width.hpp>


#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <ostream>
#include <sstream>

#ifndef ACCEL_BENCH_INSTALLED_DATA
#define ACCEL_BENCH_INSTALLED_DATA "../share/accel/breast_cancer.csv"
#endif

namespace bench {
namespace {

using nlohmann::json;

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// A float setting as the decimal it was given as (0.001, not 0.0010000000474974513).
double decimal(float x) { return std::stod(format("%.7g", double(x))); }

// A configuration: one hidden size in one dtype.
struct Config {
    std::size_t hidden;
    accel::DType dtype;
};

// What one round on one device measured.
struct Round {
    std::vector<double> epoch_ms;  // every epoch, warm-up ones first
    double final_loss;
    std::size_t steps;  // Adam steps of the timed epochs
};

// A fresh model from `init`, s.warmup warm-up epochs, then s.epochs timed
// ones, each timed alone (the device drained before and after, so queued
// work counts where it ran); `graph`: the steps replayed as graphs.
Round train_round(const std::shared_ptr<accel::Device>& device, const mlp::Params& init, const mlp::Dataset& train,
                  const MlpSettings& s, accel::DType dtype, bool graph) {
    mlp::Model model(device, init, dtype);
    mlp::TrainConfig cfg;
    cfg.epochs = s.warmup + s.epochs;
    cfg.batch = s.batch;
    cfg.lr = s.lr;
    cfg.seed = s.seed;
    cfg.dtype = dtype;
    cfg.graph = graph;
    Round r{{}, 0, 0};
    device->synchronize();
    std::size_t steps0 = 0;
    for (std::size_t e = 0; e < s.warmup + s.epochs; ++e) {
        if (e == s.warmup) steps0 = model.steps();
        const auto t0 = Clock::now();
        r.final_loss = model.train_epoch(train, cfg, e);
        device->synchronize();
        r.epoch_ms.push_back(ms_since(t0));
    }
    r.steps = model.steps() - steps0;
    return r;
}

// A [rows, cols] row-major matrix as nested JSON lists.
json rows_of(const std::vector<float>& v, std::size_t rows, std::size_t cols) {
    json out = json::array();
    for (std::size_t r = 0; r < rows; ++r)
        out.push_back(std::vector<float>(v.begin() + std::ptrdiff_t(r * cols), v.begin() + std::ptrdiff_t((r + 1) * cols)));
    return out;
}

// "graph step on host:0 (hidden 64, f32): 0.21 ms/epoch against 0.40 eager,
// 1.90x; the same final loss": each graph row beside its eager row.
void write_graph_speedups(std::ostream& out, const MlpResults& r) {
    for (const auto& g : r.rows) {
        if (g.step != "graph" || !g.error.empty()) continue;
        const auto e = std::find_if(r.rows.begin(), r.rows.end(), [&](const MlpRow& x) {
            return x.step == "eager" && x.error.empty() && x.selector == g.selector && x.hidden == g.hidden &&
                   x.dtype == g.dtype;
        });
        if (e == r.rows.end() || g.ms_median <= 0) continue;
        out << "graph step on " << g.stable_selector << " (hidden " << g.hidden << ", " << g.dtype
            << "): " << format("%.4g", g.ms_median) << " ms/epoch against " << format("%.4g", e->ms_median)
            << " eager, " << format("%.2f", e->ms_median / g.ms_median) << "x; "
            << (g.final_loss == e->final_loss ? "the same final loss, bit for bit"
                                              : "final loss " + format("%.9g", g.final_loss) + " against " +
                                                    format("%.9g", e->final_loss) + " eager")
            << "\n";
    }
}

std::string status(const MlpRow& r) { return !r.error.empty() ? "error" : r.agrees ? "ok" : "DIFF"; }

// Largest loss_rel_diff of the rows that ran, by dtype (in first-seen order).
std::vector<std::pair<std::string, double>> max_rel_diff(const MlpResults& r) {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& row : r.rows) {
        if (!row.error.empty()) continue;
        auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == row.dtype; });
        const double d = std::isfinite(row.loss_rel_diff) ? row.loss_rel_diff : std::numeric_limits<double>::infinity();
        if (it == out.end()) out.emplace_back(row.dtype, d);
        else it->second = std::max(it->second, d);
    }
    return out;
}

}  // namespace

MlpProblem prepare_mlp_problem(const MlpSettings& s) {
    mlp::Split sp = mlp::load_standardized_split(s.data, s.seed);
    return {std::move(sp.train), sp.test.samples};
}

std::vector<std::vector<std::size_t>> mlp_epoch_orders(std::size_t samples, const MlpSettings& s) {
    std::vector<std::vector<std::size_t>> out;
    for (std::size_t e = 0; e < s.warmup + s.epochs; ++e) out.push_back(mlp::epoch_order(samples, s.seed, e));
    return out;
}

double mlp_loss_tolerance(accel::DType dtype) {
    // Devices sum in different orders (GEMM blocking, reductions). Measured
    // on host, Kokkos, PoCL and Intel's OpenCL (hidden 64 to 4096, batch 16 to
    // 256, 20 epochs): f32 within 1e-7, f64 equal, f16 1e-4, bf16 1e-3. A
    // wrong gradient, or a skipped or reordered batch, moves the loss by
    // 1e-3 or more (the training tests' figure).
    switch (dtype) {
    case accel::DType::f64: return 1e-9;
    case accel::DType::f32: return 1e-4;
    default: return 2e-2;  // f16, bf16: mixed precision, 8 to 11 significant bits
    }
}

MlpResults run_mlp(const MlpSettings& s) {
    MlpResults res;
    res.problem = prepare_mlp_problem(s);
    const mlp::Dataset& train = res.problem.train;

    std::vector<std::shared_ptr<accel::Device>> devices;
    for (const auto& sel : s.selectors) {
        auto d = accel::open_device(sel);
        if (std::any_of(devices.begin(), devices.end(), [&](const auto& x) { return x == d; })) continue;
        devices.push_back(d);
        res.devices.push_back({d->selector(), d->info()});
    }
    for (const auto& st : accel::backend_statuses())
        if (!st.availability.available) res.unavailable.push_back(st.summary());
    if (s.batch > train.samples)
        res.notes.push_back("batch " + std::to_string(s.batch) + " exceeds the " + std::to_string(train.samples) +
                            " training samples: one batch of " + std::to_string(train.samples) + " per epoch");

    std::vector<Config> configs;
    for (std::size_t h : s.hidden)
        for (accel::DType t : s.dtypes) configs.push_back({h, t});
    // A unit: one device in one step mode (eager, then graph with --graph).
    const std::size_t modes = s.graph ? 2 : 1, units = devices.size() * modes;
    const auto graph_unit = [&](std::size_t u) { return u % modes == 1; };
    const std::size_t total = configs.size() * s.rounds * units;
    std::size_t done = 0;
    const auto t0 = Clock::now();

    for (const Config& c : configs) {
        const mlp::Params init = mlp::init_params(train.features, c.hidden, s.seed);
        const std::size_t first = res.rows.size();
        std::vector<MlpRow> rows(units);
        std::vector<bool> skipped(units, false);
        // Per unit: its first epoch, then every steady epoch (mlp::epoch_times' order).
        std::vector<std::vector<double>> epochs_ms(units);
        for (std::size_t u = 0; u < units; ++u) {
            const MlpDevice& dev = res.devices[u / modes];
            MlpRow& row = rows[u];
            row.step = graph_unit(u) ? "graph" : "eager";
            row.backend = dev.info.backend;
            row.device = dev.info.name;
            row.selector = dev.selector;
            row.stable_selector = dev.shown_selector();
            row.runtime = dev.info.runtime_version;
            row.in = train.features;
            row.hidden = c.hidden;
            row.batch = s.batch;
            row.dtype = accel::dtype_name(c.dtype);
            row.train_samples = train.samples;
            row.warmup = s.warmup;
            row.epochs = s.epochs;
            row.steps_per_epoch = (train.samples + s.batch - 1) / s.batch;
            row.loss_tolerance = mlp_loss_tolerance(c.dtype);
        }
        // Rounds interleave the devices (and the step modes), so that a slow
        // spell of the machine hits every one alike.
        for (std::size_t round = 0; round < s.rounds; ++round) {
            for (std::size_t u = 0; u < units; ++u) {
                MlpRow& row = rows[u];
                if (s.progress)
                    show_progress(done, total, seconds_left_at_mean(done, total, t0),
                                  "hidden " + std::to_string(c.hidden) + " " + row.dtype + " round " +
                                      std::to_string(round + 1) + " on " + row.stable_selector +
                                      (s.graph ? " (" + row.step + ")" : ""));
                ++done;
                if (skipped[u] || !row.error.empty()) continue;
                try {
                    const Round r = train_round(devices[u / modes], init, train, s, c.dtype, graph_unit(u));
                    // The device's first epoch, then this round's steady ones: its timed
                    // epochs but that first (timed when --warmup 0).
                    const bool first = epochs_ms[u].empty();
                    std::vector<double> steady(r.epoch_ms.begin() + std::ptrdiff_t(s.warmup), r.epoch_ms.end());
                    if (first && s.warmup == 0) steady.erase(steady.begin());
                    if (first) epochs_ms[u].push_back(r.epoch_ms.front());
                    epochs_ms[u].insert(epochs_ms[u].end(), steady.begin(), steady.end());
                    row.round_ms.push_back(steady.empty() ? r.epoch_ms.front() : median(steady));
                    row.final_loss = r.final_loss;
                    row.steps = r.steps;
                } catch (const accel::Unsupported& e) {
                    skipped[u] = true;
                    if (!graph_unit(u))  // the graph run of the device is refused alike
                        res.notes.push_back(row.stable_selector + " cannot train in " + row.dtype + ": " + e.what() +
                                            "; skipped");
                } catch (const accel::Error& e) {
                    row.error = e.what();
                }
            }
        }
        for (std::size_t u = 0; u < units; ++u) {
            if (skipped[u]) continue;
            const mlp::EpochTimes t = mlp::epoch_times(epochs_ms[u]);
            rows[u].first_epoch_ms = t.first_ms;
            rows[u].ms_median = t.steady_median_ms;
            rows[u].ms_min = t.steady_min_ms;
            rows[u].ms_max = t.steady_max_ms;
            rows[u].steady_epochs = t.steady_epochs;
            res.rows.push_back(std::move(rows[u]));
        }

        // Losses against the configuration's first device that ran.
        const MlpRow* ref = nullptr;
        for (std::size_t i = first; i < res.rows.size(); ++i) {
            MlpRow& row = res.rows[i];
            if (!row.error.empty()) continue;
            row.samples_per_s = row.ms_median > 0 ? double(row.train_samples) / (row.ms_median / 1000) : 0;
            if (!ref && std::isfinite(row.final_loss)) ref = &row;
            if (!ref) {
                row.loss_rel_diff = std::numeric_limits<double>::quiet_NaN();
                row.agrees = false;
                continue;
            }
            row.reference = ref->stable_selector;
            row.loss_rel_diff = std::fabs(row.final_loss - ref->final_loss) / std::fabs(ref->final_loss);
            row.agrees = std::isfinite(row.final_loss) && row.loss_rel_diff <= row.loss_tolerance;
        }
    }
    if (s.progress) show_progress(total, total, 0, "");
    return res;
}

json mlp_to_json(const MlpSettings& s, const MlpResults& r, const Machine& m) {
    json j;
    j["accel_version"] = ACCEL_VERSION;
    j["machine"] = {{"cpu", m.cpu}, {"os", m.os}, {"hostname", m.hostname}};
    j["command"] = "mlp";
    std::vector<std::string> dtypes;
    for (accel::DType t : s.dtypes) dtypes.push_back(accel::dtype_name(t));
    std::vector<std::string> selectors;  // of the devices as they ran: stable ones, not the indices "all" gave
    for (const auto& d : r.devices) selectors.push_back(d.shown_selector());
    j["settings"] = {{"selectors", selectors}, {"hidden", s.hidden},  {"batch", s.batch},
                     {"warmup_epochs", s.warmup}, {"epochs", s.epochs}, {"rounds", s.rounds},
                     {"dtypes", dtypes},          {"seed", s.seed},     {"lr", decimal(s.lr)},
                     {"quick", s.quick},          {"graph", s.graph},
                     {"timing", "host clock around each epoch (device synchronized at its end); first_epoch_ms: "
                                "the device's first epoch (round 1's first); epoch_ms: median, min and max of the "
                                "steady epochs, every timed epoch but that first"}};
    j["problem"] = {{"data", s.data},
                    {"in", r.problem.train.features},
                    {"train_samples", r.problem.train.samples},
                    {"test_samples", r.problem.test_samples},
                    {"test_fraction", mlp::kTestFraction}};
    j["devices"] = json::array();
    for (const auto& d : r.devices)
        j["devices"].push_back({{"selector", d.selector},
                                {"stable_selector", d.info.stable_selector},
                                {"backend", d.info.backend},
                                {"name", d.info.name},
                                {"vendor", d.info.vendor},
                                {"type", d.info.type},
                                {"runtime_version", d.info.runtime_version},
                                {"compute_units", d.info.compute_units}});
    j["rows"] = json::array();
    for (const auto& row : r.rows) {
        json x{{"backend", row.backend},
               {"device", row.device},
               {"selector", row.selector},
               {"stable_selector", row.stable_selector},
               {"runtime", row.runtime},
               {"in", row.in},
               {"hidden", row.hidden},
               {"batch", row.batch},
               {"dtype", row.dtype},
               {"step", row.step},
               {"train_samples", row.train_samples},
               {"warmup_epochs", row.warmup},
               {"epochs", row.epochs},
               {"steps_per_epoch", row.steps_per_epoch},
               {"loss_tolerance", row.loss_tolerance},
               {"pass", row.passed()}};
        if (!row.error.empty()) {
            x["error"] = row.error;
        } else {
            x["first_epoch_ms"] = row.first_epoch_ms;
            x["epoch_ms"] = {
                {"median", row.ms_median}, {"min", row.ms_min}, {"max", row.ms_max}, {"epochs", row.steady_epochs}};
            // The older name of the same figures, for readers of earlier reports.
            x["ms_per_epoch"] = {
                {"median", row.ms_median}, {"min", row.ms_min}, {"max", row.ms_max}, {"rounds", row.round_ms}};
            x["samples_per_s"] = row.samples_per_s;
            x["steps"] = row.steps;
            // NaN and infinity are not JSON: a loss that diverged is null.
            x["final_loss"] = std::isfinite(row.final_loss) ? json(row.final_loss) : json(nullptr);
            x["reference"] = row.reference;
            x["loss_rel_diff"] = std::isfinite(row.loss_rel_diff) ? json(row.loss_rel_diff) : json(nullptr);
            x["agrees"] = row.agrees;
        }
        j["rows"].push_back(std::move(x));
    }
    j["max_loss_rel_diff"] = json::object();
    for (const auto& [dtype, d] : max_rel_diff(r))
        j["max_loss_rel_diff"][dtype] = std::isfinite(d) ? json(d) : json(nullptr);
    j["notes"] = r.notes;
    j["unavailable"] = r.unavailable;
    return j;
}

void write_mlp_table(std::ostream& report, const MlpSettings& s, const MlpResults& r, const Machine& m,
                     std::size_t width) {
    std::ostringstream out;
    const MlpProblem& p = r.problem;
    const std::size_t steps = (p.train.samples + s.batch - 1) / s.batch;
    out << "accel-bench " << ACCEL_VERSION << " mlp on " << m.hostname << " (" << m.cpu << ", " << m.os << ")\n";
    out << "training: " << p.train.features << " -> hidden, ReLU -> 1 logit; BCE-with-logits; Adam lr "
        << format("%g", double(s.lr)) << "; " << p.train.samples << " training samples of " << s.data << " (seed "
        << s.seed << "), batch " << s.batch << " (" << steps << " Adam steps per epoch)\n";
    out << "each round: a fresh model from the same initial weights, " << s.warmup << " untimed warm-up epoch"
        << (s.warmup == 1 ? "" : "s") << ", then " << s.epochs << " timed, in the same batch order on every device; "
        << s.rounds << " round" << (s.rounds == 1 ? "" : "s") << ", devices interleaved\n";
    out << "first ms: host clock over the device's first epoch (round 1's first: kernel builds, the automatic "
           "path's measurements); ms/epoch: over each steady epoch (every timed epoch but that first: batches "
           "gathered and uploaded, forward, backward, Adam, the loss read back each batch), median, min, max; "
           "samples/s: training samples / median seconds per epoch\n";
    out << "final loss: mean per-sample loss of the last timed epoch; rel diff: against the first device's for the "
           "same hidden size and dtype (DIFF beyond the tolerance)\n\n";
    // Compact: devices by stable selector, named once in a legend; wide: name and backend in every row.
    std::vector<std::string> header{"device", "in", "hidden", "batch", "dtype", "epochs", "first ms", "ms/epoch",
                                    "min", "max", "samples/s", "final loss", "rel diff", "limit", "steps", "ok"};
    if (s.graph) header.insert(header.begin() + 5, "step");
    if (s.wide) header.insert(header.begin() + 1, {"name", "backend"});
    TextTable t(header, s.wide ? 3 : 1);
    if (!s.wide) {
        std::vector<LegendEntry> legend;
        for (const auto& d : r.devices)
            legend.push_back({d.shown_selector(), d.info.name + " (" + d.info.backend + ")", d.info.runtime_version,
                              d.info.driver_version, ""});
        write_device_legend(out, legend);
        out << "\n";
    }
    for (const auto& row : r.rows) {
        std::vector<std::string> c{row.stable_selector, std::to_string(row.in), std::to_string(row.hidden),
                                   std::to_string(row.batch), row.dtype, std::to_string(row.epochs)};
        if (s.graph) c.insert(c.begin() + 5, row.step);
        if (s.wide) c.insert(c.begin() + 1, {row.device, row.backend});
        if (row.error.empty()) {
            c.insert(c.end(), {num(row.first_epoch_ms), num(row.ms_median), num(row.ms_min), num(row.ms_max),
                               num(row.samples_per_s), format("%.7g", row.final_loss),
                               format("%.1e", row.loss_rel_diff)});
        } else {
            c.insert(c.end(), 7, "-");
        }
        c.insert(c.end(), {format("%.0e", row.loss_tolerance), row.error.empty() ? std::to_string(row.steps) : "-",
                           status(row)});
        t.add(std::move(c));
    }
    t.set_optional({"limit", "steps", "min", "max", "in", "batch", "first ms"});
    t.write(out, s.wide ? 0 : width);
    out << "\n";
    if (s.graph) write_graph_speedups(out, r);
    for (const auto& [dtype, d] : max_rel_diff(r))
        out << "largest relative difference of the final loss (" << dtype << "): " << format("%.2e", d)
            << " (tolerance " << format("%.0e", mlp_loss_tolerance(accel::parse_dtype(dtype))) << ")\n";
    for (const auto& row : r.rows)
        if (!row.error.empty())
            out << "error: hidden " << row.hidden << " " << row.dtype << " on " << row.stable_selector << ": "
                << row.error << "\n";
    for (const auto& u : r.unavailable) out << "not run: " << u << "\n";
    for (const auto& n : r.notes) out << "note: " << n << "\n";
    report << fit_text(out.str(), s.wide ? 0 : width);
}

void write_mlp_csv(std::ostream& out, const MlpResults& r) {
    const auto q = csv_field;
    out << "backend,device,selector,stable_selector,runtime,in,hidden,batch,dtype,train_samples,warmup_epochs,epochs,"
           "first_epoch_ms,ms_per_epoch_median,ms_per_epoch_min,ms_per_epoch_max,samples_per_s,final_loss,reference,loss_rel_diff,"
           "loss_tolerance,steps,steps_per_epoch,pass,error,step\n";
    for (const auto& row : r.rows) {
        const bool ok = row.error.empty();
        auto val = [&](double v) { return ok ? format("%.9g", v) : std::string(); };
        out << q(row.backend) << "," << q(row.device) << "," << q(row.selector) << "," << q(row.stable_selector) << ","
            << q(row.runtime) << "," << row.in << "," << row.hidden << "," << row.batch << "," << row.dtype << ","
            << row.train_samples << "," << row.warmup << "," << row.epochs << "," << val(row.first_epoch_ms) << ","
            << val(row.ms_median) << ","
            << val(row.ms_min) << "," << val(row.ms_max) << "," << val(row.samples_per_s) << ","
            << val(row.final_loss) << "," << q(row.reference) << "," << val(row.loss_rel_diff) << ","
            << format("%.0e", row.loss_tolerance) << "," << (ok ? std::to_string(row.steps) : "") << ","
            << row.steps_per_epoch << "," << (row.passed() ? "true" : "false") << "," << q(row.error) << ","
            << row.step << "\n";
    }
}

json mlp_problem_json(const MlpSettings& s, const MlpProblem& p) {
    const mlp::Dataset& d = p.train;
    json j;
    j["format"] = "accel-bench mlp problem";
    j["version"] = 1;
    j["data"] = s.data;
    j["seed"] = s.seed;
    j["lr"] = decimal(s.lr);
    j["batch"] = s.batch;
    j["warmup_epochs"] = s.warmup;
    j["epochs"] = s.epochs;
    j["rounds"] = s.rounds;
    j["in"] = d.features;
    j["train"] = {{"samples", d.samples}, {"x", rows_of(d.x, d.samples, d.features)}, {"y", d.y}};
    j["epoch_orders"] = mlp_epoch_orders(d.samples, s);
    j["init"] = json::array();
    for (std::size_t h : s.hidden) {
        const mlp::Params w = mlp::init_params(d.features, h, s.seed);
        j["init"].push_back({{"hidden", h},
                             {"w1", rows_of(w.w1, h, d.features)},
                             {"b1", w.b1},
                             {"w2", rows_of(w.w2, 1, h)},
                             {"b2", w.b2}});
    }
    return j;
}

int mlp_command(const MlpArgs& a) {
    if (FleetScope::active())
        throw UsageError("mlp runs in one process, on every device it is given; start it without mpirun/srun");
    MlpSettings s;
    s.quick = a.quick;
    if (a.quick) {
        s.hidden = {64};
        s.epochs = 3;
        s.rounds = 1;
    }
    const auto& given = a.given;
    // Repeated items run once, in the order first given.
    auto unique = [](auto values) {
        decltype(values) out;
        for (const auto& v : values)
            if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
        return out;
    };
    if (given("--hidden")) {
        if (a.hidden.empty()) throw UsageError("--hidden: empty list");
        s.hidden = unique(a.hidden);
    }
    if (given("--dtype")) {
        if (a.dtypes.empty()) throw UsageError("--dtype: empty list");
        s.dtypes.clear();
        for (const auto& t : unique(a.dtypes)) s.dtypes.push_back(accel::parse_dtype(t));
    }
    if (given("--batch")) s.batch = a.batch;
    if (given("--epochs")) s.epochs = a.epochs;
    if (given("--rounds")) s.rounds = a.rounds;
    if (given("--warmup")) s.warmup = a.warmup;
    if (given("--seed")) s.seed = a.seed;
    s.data = a.data.empty() ? mlp::default_data_path(ACCEL_BENCH_INSTALLED_DATA) : a.data;
    s.selectors = resolve_backends(a.backends);
    s.progress = isatty(STDERR_FILENO);
    s.wide = a.wide;
    s.graph = a.graph;

    tool_cli::OptionalOutput file(a.output), problem_file(a.save_problem);  // a bad path fails before the run

    const MlpResults r = run_mlp(s);
    const Machine m = this_machine();
    std::ostream& out = file.stream();
    if (a.format == "json") out << mlp_to_json(s, r, m).dump(2) << "\n";
    else if (a.format == "csv") write_mlp_csv(out, r);
    else write_mlp_table(out, s, r, m, tool_cli::output_width());
    if (problem_file) problem_file.stream() << mlp_problem_json(s, r.problem).dump() << "\n";
    problem_file.commit("the training problem");
    file.commit(std::to_string(r.rows.size()) + " rows");

    int failed = 0;
    for (const auto& row : r.rows) {
        if (row.passed()) continue;
        ++failed;
        std::cerr << "FAIL: mlp hidden " << row.hidden << " batch " << row.batch << " " << row.dtype << " on "
                  << row.stable_selector << ": "
                  << (!row.error.empty() ? row.error
                                         : "final loss " + format("%.9g", row.final_loss) + " differs from " +
                                               row.reference + "'s by " + format("%.2e", row.loss_rel_diff) +
                                               " relative (tolerance " + format("%.0e", row.loss_tolerance) + ")")
                  << "\n";
    }
    if (r.rows.empty()) {
        std::cerr << "FAIL: mlp: no device could train (see the notes)\n";
        return 1;
    }
    return failed ? 1 : 0;
}

}  // namespace bench
