// mlp_train — trains a 30 → H → 1 MLP on the breast-cancer data set on one or
// more backends from identical initial weights and batch order, and compares
// loss curves, accuracies and time per epoch. Under mpirun/srun (when built
// with MPI) it trains one model data-parallel over the ranks instead: see
// data_parallel.hpp and README.md beside this file.
#include "data.hpp"
#include "mlp.hpp"
#ifdef ACCEL_HAVE_MPI
#include "data_parallel.hpp"
#endif

#include <accel/accel.hpp>
#include <nlohmann/json.hpp>
#include <backend_list.hpp>
#include <tool_cli.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#ifndef MLP_INSTALLED_DATA
#define MLP_INSTALLED_DATA "../../../share/accel/breast_cancer.csv"
#endif

namespace {

constexpr std::size_t kQuickEpochs = 20;
constexpr std::size_t kLogEvery = 50;

struct Options {
    std::string backends = accel::selector_from_env();
    mlp::TrainConfig train;
    std::size_t hidden = 10;
    bool hidden_given = false;
    bool epochs_given = false;
    bool quick = false;
    std::string data;  ///< empty: mlp::default_data_path
    std::string init_file, save_init_file, save_final_file;
    bool json = false;
    std::vector<accel::DType> dtypes{accel::DType::f32};
};

const char* kDescription =
    "mlp_train: trains a 30 -> H -> 1 MLP on the breast-cancer data set on one or more backends from identical "
    "initial\nweights and batch order, and compares loss curves, accuracies and time per epoch.";

const char* kFooter =
    "under mpirun/srun (built with MPI): one model trained data-parallel over the ranks; --backends\n"
    "  is one selector or a comma list dealt to ranks by rank (rank r takes item r mod count),\n"
    "  e.g. host,opencl or cuda:local (one GPU per rank); --batch is the global batch\n"
    "exit status: 0 trained; 1 an error; 2 a usage error; 3 a device cannot train in a dtype asked for.";

// Parses the command line into `o`. Returns nothing to go on, or the exit
// status after --help (0) or a usage error (2, printed).
std::optional<int> parse(int argc, char** argv, Options& o) {
    o.train.seed = 1;
    CLI::App app{kDescription, "mlp_train"};
    app.footer(kFooter);
    std::vector<std::string> dtypes{"f32"};
    std::string format = "table";
    app.add_option("--backends", o.backends,
                   "all (every device of every available backend), or a comma-separated list of selectors (host, opencl[:N], "
                   "kokkos[:N], cuda[:N], auto); default: $ACCEL_BACKEND, else auto")
        ->type_name("all|LIST");
    CLI::Option* epochs = app.add_option("--epochs", o.train.epochs, "epochs (default 500)")
                              ->check(CLI::Range(std::size_t{1}, std::size_t{10000000}));
    app.add_flag("--quick", o.quick, "20 epochs unless --epochs is given (for CI)");
    CLI::Option* hidden = app.add_option("--hidden", o.hidden, "hidden units (default 10)")
                              ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
    app.add_flag("--graph", o.train.graph,
                 "record each batch size's training step once as a graph and replay it per batch (accel/graph.hpp): "
                 "the same loss curve, bit for bit, without the op front-end's work per op");
    app.add_option("--lr", o.train.lr, "Adam learning rate (default 0.001)")->check(CLI::Range(1e-9f, 10.0f));
    app.add_option("--batch", o.train.batch, "batch size (default 40; the last batch of an epoch may be smaller)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1000000000}));
    app.add_option("--seed", o.train.seed, "seed of the split, the initial weights and the batch order (default 1)");
    app.add_option("--data", o.data, "CSV data set (default: share/accel/breast_cancer.csv of this installation, else the source tree's "
                   "data/breast_cancer.csv)")->type_name("PATH");
    app.add_option("--init", o.init_file, "load initial weights (JSON, see README.md) instead of drawing them")
        ->type_name("FILE");
    app.add_option("--save-init", o.save_init_file, "write the initial weights as JSON")->type_name("FILE");
    app.add_option("--save-final", o.save_final_file,
                   "write the trained weights as JSON (--init's format; needs one backend and one dtype)")
        ->type_name("FILE");
    app.add_option("--format", format, "output format: table (default) or json")
        ->check(tool_cli::one_of("format", {"table", "json"}));
    app.add_option("--dtype", dtypes,
                   "dtypes to train in, e.g. f32,bf16 (default f32): f64, or f16/bf16 as mixed precision with f32 "
                   "master weights; with f32 in the list, each other dtype's test accuracy is compared with f32's "
                   "on the same backend")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->check(tool_cli::throws_if_bad(accel::parse_dtype, ""))
        ->type_name("LIST");
    if (const auto rc = tool_cli::parse(app, argc, argv)) return rc;
    if (dtypes.empty()) return tool_cli::usage_error("mlp_train", "--dtype got an empty list");
    o.dtypes.clear();
    for (const auto& t : dtypes) o.dtypes.push_back(accel::parse_dtype(t));
    o.json = format == "json";
    o.epochs_given = epochs->count() > 0;
    o.hidden_given = hidden->count() > 0;
    if (o.quick && !o.epochs_given) o.train.epochs = kQuickEpochs;
    return std::nullopt;
}

double max_final_loss_diff(const std::vector<mlp::TrainResult>& rs) {
    double d = 0.0;
    for (const auto& a : rs)
        for (const auto& b : rs) d = std::max(d, std::fabs(a.epoch_loss.back() - b.epoch_loss.back()));
    return d;
}

// The f32 run of r's backend, or null.
const mlp::TrainResult* f32_run(const std::vector<mlp::TrainResult>& rs, const mlp::TrainResult& r) {
    for (const auto& x : rs)
        if (x.backend == r.backend && x.dtype == "f32") return &x;
    return nullptr;
}

// Whether r's test accuracy is within one test sample of the f32 run's on its backend.
std::string reaches_f32(const std::vector<mlp::TrainResult>& rs, const mlp::TrainResult& r, std::size_t test_samples) {
    const mlp::TrainResult* base = f32_run(rs, r);
    if (!base || r.dtype == "f32" || test_samples == 0) return "";
    return r.test_accuracy + 1.0 / double(test_samples) >= base->test_accuracy ? "yes" : "no";
}

// "0.123..0.456": the steady epochs' range, "-" when only the first epoch ran.
std::string steady_range(const mlp::EpochTimes& t) {
    if (!t.steady_epochs) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f..%.3f", t.steady_min_ms, t.steady_max_ms);
    return buf;
}

// Within 100 columns: each device by selector (its name heads its run above).
void print_table(const std::vector<mlp::TrainResult>& rs, std::size_t test_samples) {
    std::printf("\n%-18s %-5s %10s %7s %7s %9s %9s %15s  %s\n", "device", "dtype", "final loss", "train %", "test %",
                "1st ms", "ms/epoch", "min..max", "as f32");
    for (const auto& r : rs) {
        const mlp::EpochTimes t = r.times();
        std::printf("%-18s %-5s %10.6f %7.2f %7.2f %9.3f %9.3f %15s  %s\n", r.backend.c_str(), r.dtype.c_str(),
                    r.epoch_loss.back(), 100.0 * r.train_accuracy, 100.0 * r.test_accuracy, t.first_ms,
                    t.steady_median_ms, steady_range(t).c_str(), reaches_f32(rs, r, test_samples).c_str());
    }
    std::printf("1st ms: the first epoch (kernel builds, the automatic path's measurements); ms/epoch: median of\n"
                "the epochs after it, min..max their range; as f32: the test accuracy within one test sample of\n"
                "the f32 run's on that backend\n");
    std::vector<mlp::TrainResult> f32;
    for (const auto& r : rs)
        if (r.dtype == "f32") f32.push_back(r);
    if (f32.size() > 1)
        std::printf("max |final loss difference| between backends (f32): %.3g\n", max_final_loss_diff(f32));
}

void print_json(const Options& o, const mlp::Split& s, const std::vector<mlp::TrainResult>& rs) {
    nlohmann::json j;
    j["config"] = {{"data", o.data},           {"train_samples", s.train.samples}, {"test_samples", s.test.samples},
                   {"hidden", o.hidden},       {"epochs", o.train.epochs},         {"batch", o.train.batch},
                   {"lr", o.train.lr},         {"seed", o.train.seed},             {"graph", o.train.graph}};
    j["results"] = nlohmann::json::array();
    for (const auto& r : rs) {
        const mlp::EpochTimes t = r.times();
        j["results"].push_back({{"backend", r.backend},
                                {"dtype", r.dtype},
                                {"reaches_f32_test_accuracy", reaches_f32(rs, r, s.test.samples)},
                                {"device", r.device_name},
                                {"loss", r.epoch_loss},
                                {"train_accuracy", r.train_accuracy},
                                {"test_accuracy", r.test_accuracy},
                                {"ms_per_epoch", r.ms_per_epoch},  // the mean, first epoch included
                                {"first_epoch_ms", t.first_ms},
                                {"epoch_ms",  // the steady epochs: every one after the first
                                 {{"median", t.steady_median_ms},
                                  {"min", t.steady_min_ms},
                                  {"max", t.steady_max_ms},
                                  {"epochs", t.steady_epochs}}}});
    }
    if (!rs.empty()) j["max_final_loss_diff"] = max_final_loss_diff(rs);
    std::cout << j.dump(2) << "\n";
}

struct Prepared {
    mlp::Split split;
    mlp::Params init;
    std::size_t features = 0;
};

// The data split, standardized, and the initial weights (the same on every rank).
Prepared prepare(const Options& o) {
    auto sp = mlp::load_standardized_split(o.data, o.train.seed);
    const std::size_t features = sp.train.features;

    mlp::Params init;
    if (!o.init_file.empty()) {
        init = mlp::load_params(o.init_file);
        if (init.in != features)
            throw accel::InvalidArgument("weights file \"" + o.init_file + "\" has " + std::to_string(init.in) +
                                         " inputs; the data set has " + std::to_string(features) + " features");
        if (o.hidden_given && init.hidden != o.hidden)
            throw accel::InvalidArgument("--hidden " + std::to_string(o.hidden) + " contradicts the weights file (" +
                                         std::to_string(init.hidden) + " hidden units)");
    } else {
        init = mlp::init_params(features, o.hidden, o.train.seed);
    }
    return Prepared{std::move(sp), std::move(init), features};
}

int run(const Options& o) {
    Prepared prep = prepare(o);
    const auto& sp = prep.split;
    const auto& init = prep.init;
    const std::size_t features = prep.features;
    if (!o.save_init_file.empty()) mlp::save_params(init, o.save_init_file);

    const auto sels = tool_cli::resolve_backends(o.backends);
    if (sels.empty()) throw accel::BackendUnavailable("no backend is available (run accel-info to see why)");
    if (!o.save_final_file.empty() && sels.size() * o.dtypes.size() != 1)
        throw tool_cli::UsageError("--save-final writes one model: name one backend and one dtype (got " +
                                   std::to_string(sels.size()) + " backend(s), " + std::to_string(o.dtypes.size()) +
                                   " dtype(s))");
    if (!o.json)
        std::printf("data %s: %zu train / %zu test samples, %zu features\nnetwork %zu-%zu-1, %zu epochs, batch %zu, "
                    "lr %g, seed %llu\n",
                    o.data.c_str(), sp.train.samples, sp.test.samples, features, init.in, init.hidden,
                    o.train.epochs, o.train.batch, static_cast<double>(o.train.lr),
                    static_cast<unsigned long long>(o.train.seed));

    std::vector<mlp::TrainResult> results;
    int unsupported = 0;
    for (const auto& sel : sels) {
        const auto device = accel::open_device(sel);
        for (accel::DType dtype : o.dtypes) {
            if (!o.json)
                std::printf("\n== %s (%s), %s\n", device->selector().c_str(), device->info().name.c_str(),
                            accel::dtype_name(dtype));
            auto log = [&](std::size_t e, double loss) {
                if (!o.json && ((e + 1) % kLogEvery == 0 || e + 1 == o.train.epochs))
                    std::printf("  epoch %4zu  loss %.6f\n", e + 1, loss);
            };
            mlp::TrainConfig cfg = o.train;
            cfg.dtype = dtype;
            try {
                results.push_back(mlp::train(device, init, sp.train, sp.test, cfg, log));
            } catch (const accel::Unsupported& e) {
                ++unsupported;  // this device lacks an op in this dtype: said, not trained
                std::fprintf(stderr, "mlp_train: %s cannot train in %s: %s\n", device->selector().c_str(),
                             accel::dtype_name(dtype), e.what());
                continue;
            }
            const auto& r = results.back();
            const mlp::EpochTimes t = r.times();
            if (!o.json && t.steady_epochs)
                std::printf("  train accuracy %.2f %%, test accuracy %.2f %%\n  first epoch %.3f ms, then %.3f "
                            "ms/epoch (median of epochs 2..%zu, %.3f..%.3f)\n",
                            100.0 * r.train_accuracy, 100.0 * r.test_accuracy, t.first_ms, t.steady_median_ms,
                            r.epoch_ms.size(), t.steady_min_ms, t.steady_max_ms);
            else if (!o.json)
                std::printf("  train accuracy %.2f %%, test accuracy %.2f %%\n  first epoch %.3f ms (no later epoch)\n",
                            100.0 * r.train_accuracy, 100.0 * r.test_accuracy, t.first_ms);
        }
    }
    if (!o.save_final_file.empty() && !results.empty()) mlp::save_params(results.front().final_params, o.save_final_file);
    if (o.json)
        print_json(o, sp, results);
    else
        print_table(results, sp.test.samples);
    return unsupported ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (const auto rc = parse(argc, argv, o)) return *rc;
    if (o.data.empty()) {
        try {
            o.data = mlp::default_data_path(MLP_INSTALLED_DATA);
        } catch (const std::exception& e) {
            std::cerr << "mlp_train: " << e.what() << "\n";
            return 1;
        }
    }
#ifdef ACCEL_HAVE_MPI
    bool data_parallel = false;
    try {
        data_parallel = accel::mpi::launched_by_mpi();
    } catch (const std::exception& e) {
        std::cerr << "mlp_train: " << e.what() << "\n";
        return 1;
    }
    if (data_parallel) return mlp::run_data_parallel(argc, argv, o.backends, o.train, o.json,
                                                                     [&](int rank) {
                                                                         auto p = prepare(o);
                                                                         if (rank == 0 && !o.save_init_file.empty())
                                                                             mlp::save_params(p.init, o.save_init_file);
                                                                         return std::make_pair(p.split, p.init);
                                                                     });
#else
    if (const int size = accel::launcher_rank_count(); size > 1) {
        std::cerr << "mlp_train: started as one of " << size << " MPI ranks, but this mlp_train was built without "
                  << "MPI: each rank would train alone. Rebuild with MPI (libopenmpi-dev) for data-parallel "
                  << "training\n";
        return 2;
    }
#endif
    try {
        return run(o);
    } catch (const tool_cli::UsageError& e) {
        return tool_cli::usage_error("mlp_train", e.what());
    } catch (const std::exception& e) {
        std::cerr << "mlp_train: " << e.what() << "\n";
        return 1;
    }
}
