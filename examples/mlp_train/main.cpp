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

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#ifndef MLP_DEFAULT_DATA
#define MLP_DEFAULT_DATA "data/breast_cancer.csv"
#endif

namespace {

constexpr double kTestFraction = 0.2;
constexpr std::size_t kQuickEpochs = 20;
constexpr std::size_t kLogEvery = 50;

struct Options {
    std::string backends = accel::selector_from_env();
    mlp::TrainConfig train;
    std::size_t hidden = 10;
    bool hidden_given = false;
    bool epochs_given = false;
    bool quick = false;
    std::string data = MLP_DEFAULT_DATA;
    std::string init_file, save_init_file;
    bool json = false;
    std::vector<accel::DType> dtypes{accel::DType::f32};
};

const char* kUsage =
    "usage: mlp_train [options]\n"
    "  --backends all|LIST  backends to train on: all available ones, or a comma-separated list of\n"
    "                       selectors (host, opencl[:N], kokkos[:N], cuda[:N], auto);\n"
    "                       default: $ACCEL_BACKEND, else auto\n"
    "  --epochs N           epochs (default 500)\n"
    "  --quick              20 epochs unless --epochs is given (for CI)\n"
    "  --hidden H           hidden units (default 10)\n"
    "  --lr X               Adam learning rate (default 0.001)\n"
    "  --batch B            batch size (default 40; the last batch of an epoch may be smaller)\n"
    "  --seed S             seed of the split, the initial weights and the batch order (default 1)\n"
    "  --data PATH          CSV data set (default " MLP_DEFAULT_DATA ")\n"
    "  --init FILE          load initial weights (JSON, see README.md) instead of drawing them\n"
    "  --save-init FILE     write the initial weights as JSON\n"
    "  --format table|json  output format (default table)\n"
    "  --dtype LIST         dtypes to train in, e.g. f32,bf16 (default f32): f64, or f16/bf16 as mixed\n"
    "                       precision with f32 master weights; with f32 in the list, each other dtype's\n"
    "                       test accuracy is compared with f32's on the same backend\n"
    "under mpirun/srun (built with MPI): one model trained data-parallel over the ranks; --backends\n"
    "  is one selector or a comma list dealt to ranks by rank (rank r takes item r mod count),\n"
    "  e.g. host,opencl or cuda:local (one GPU per rank); --batch is the global batch\n";

[[noreturn]] void usage_error(const std::string& msg) {
    std::cerr << "mlp_train: " << msg << "\n" << kUsage;
    std::exit(2);
}

template <typename T>
T number(const std::string& opt, const std::string& text) {
    std::istringstream s(text);
    T v{};
    if (!(s >> v) || !s.eof()) usage_error(opt + " expects a number, got \"" + text + "\"");
    return v;
}

Options parse(int argc, char** argv) {
    Options o;
    o.train.seed = 1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::cout << kUsage;
            std::exit(0);
        }
        if (a == "--quick") {
            o.quick = true;
            continue;
        }
        if (i + 1 >= argc) usage_error("unknown option or missing value: " + a);
        const std::string v = argv[++i];
        if (a == "--backends") o.backends = v;
        else if (a == "--epochs") o.train.epochs = number<std::size_t>(a, v), o.epochs_given = true;
        else if (a == "--hidden") o.hidden = number<std::size_t>(a, v), o.hidden_given = true;
        else if (a == "--lr") o.train.lr = number<float>(a, v);
        else if (a == "--batch") o.train.batch = number<std::size_t>(a, v);
        else if (a == "--seed") o.train.seed = number<std::uint64_t>(a, v);
        else if (a == "--data") o.data = v;
        else if (a == "--init") o.init_file = v;
        else if (a == "--save-init") o.save_init_file = v;
        else if (a == "--format" && (v == "table" || v == "json")) o.json = v == "json";
        else if (a == "--dtype") {
            o.dtypes.clear();
            std::stringstream list(v);
            std::string item;
            while (std::getline(list, item, ',')) {
                try {
                    o.dtypes.push_back(accel::parse_dtype(item));
                } catch (const accel::InvalidArgument& e) {
                    usage_error(std::string("--dtype: ") + e.what());
                }
            }
            if (o.dtypes.empty()) usage_error("--dtype got an empty list");
        }
        else usage_error("unknown option or bad value: " + a + " " + v);
    }
    if (o.quick && !o.epochs_given) o.train.epochs = kQuickEpochs;
    if (o.train.epochs == 0 || o.train.batch == 0 || o.hidden == 0 || !(o.train.lr > 0.0f))
        usage_error("--epochs, --batch, --hidden and --lr must be positive");
    return o;
}

// "all" → every available backend's device 0; otherwise the comma-separated selectors.
std::vector<std::string> selectors(const std::string& spec) {
    std::vector<std::string> out;
    if (spec == "all") {
        for (const auto& s : accel::backend_statuses())
            if (s.availability.available) out.push_back(s.name);
        return out;
    }
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    if (out.empty()) usage_error("--backends got an empty list");
    return out;
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

void print_table(const std::vector<mlp::TrainResult>& rs, std::size_t test_samples) {
    std::printf("\n%-10s %-6s %-34s %12s %9s %9s %10s  %s\n", "backend", "dtype", "device", "final loss", "train %",
                "test %", "ms/epoch", "test % reaches f32's");
    for (const auto& r : rs)
        std::printf("%-10s %-6s %-34.34s %12.6f %9.2f %9.2f %10.3f  %s\n", r.backend.c_str(), r.dtype.c_str(),
                    r.device_name.c_str(), r.epoch_loss.back(), 100.0 * r.train_accuracy, 100.0 * r.test_accuracy,
                    r.ms_per_epoch, reaches_f32(rs, r, test_samples).c_str());
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
                   {"lr", o.train.lr},         {"seed", o.train.seed}};
    j["results"] = nlohmann::json::array();
    for (const auto& r : rs)
        j["results"].push_back({{"backend", r.backend},
                                {"dtype", r.dtype},
                                {"reaches_f32_test_accuracy", reaches_f32(rs, r, s.test.samples)},
                                {"device", r.device_name},
                                {"loss", r.epoch_loss},
                                {"train_accuracy", r.train_accuracy},
                                {"test_accuracy", r.test_accuracy},
                                {"ms_per_epoch", r.ms_per_epoch}});
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
    auto data = mlp::load_csv(o.data);
    auto sp = mlp::split(data, kTestFraction, o.train.seed);
    const auto standardizer = mlp::Standardizer::fit(sp.train);
    standardizer.apply(sp.train);
    standardizer.apply(sp.test);

    mlp::Params init;
    if (!o.init_file.empty()) {
        init = mlp::load_params(o.init_file);
        if (init.in != data.features)
            throw accel::InvalidArgument("weights file \"" + o.init_file + "\" has " + std::to_string(init.in) +
                                         " inputs; the data set has " + std::to_string(data.features) + " features");
        if (o.hidden_given && init.hidden != o.hidden)
            throw accel::InvalidArgument("--hidden " + std::to_string(o.hidden) + " contradicts the weights file (" +
                                         std::to_string(init.hidden) + " hidden units)");
    } else {
        init = mlp::init_params(data.features, o.hidden, o.train.seed);
    }
    return Prepared{std::move(sp), std::move(init), data.features};
}

int run(const Options& o) {
    Prepared prep = prepare(o);
    const auto& sp = prep.split;
    const auto& init = prep.init;
    const std::size_t features = prep.features;
    if (!o.save_init_file.empty()) mlp::save_params(init, o.save_init_file);

    const auto sels = selectors(o.backends);
    if (sels.empty()) throw accel::BackendUnavailable("no backend is available (run accel-info to see why)");
    if (!o.json)
        std::printf("data %s: %zu train / %zu test samples, %zu features; network %zu-%zu-1, %zu epochs, batch %zu, "
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
            if (!o.json)
                std::printf("  train accuracy %.2f %%, test accuracy %.2f %%, %.3f ms/epoch\n",
                            100.0 * r.train_accuracy, 100.0 * r.test_accuracy, r.ms_per_epoch);
        }
    }
    if (o.json)
        print_json(o, sp, results);
    else
        print_table(results, sp.test.samples);
    return unsupported ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
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
    } catch (const std::exception& e) {
        std::cerr << "mlp_train: " << e.what() << "\n";
        return 1;
    }
}
