// accel-bench mlp: times training of the MLP of examples/mlp_train (in →
// hidden, ReLU → 1 logit; BCE-with-logits; Adam) on each device, every device
// from the same initial weights and batch order, and checks that their
// losses agree.
#pragma once

#include "report.hpp"

#include <accel/accel.hpp>
#include <data.hpp>
#include <mlp.hpp>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace bench {

/// What to train and how (the `mlp` subcommand's options).
struct MlpSettings {
    std::vector<std::string> selectors;             ///< devices, e.g. {"host", "opencl:pocl:0"}
    std::vector<std::size_t> hidden{1024, 4096};    ///< hidden units; one configuration each (× dtypes)
    std::size_t batch = 256;                        ///< samples per batch; an epoch's last batch may be smaller
    std::size_t warmup = 1;                         ///< untimed epochs at the start of every round
    std::size_t epochs = 20;                        ///< timed epochs per round (≥ 1)
    std::size_t rounds = 3;                         ///< rounds (≥ 1); round r runs on every device before r + 1
    std::vector<accel::DType> dtypes{accel::DType::f32};  ///< each configuration in each (mlp::TrainConfig::dtype)
    std::string data;                               ///< the CSV (mlp::load_csv's format)
    std::uint64_t seed = 1;                         ///< of the split, the initial weights and the batch orders
    float lr = 1e-3f;                               ///< Adam learning rate
    bool quick = false;                             ///< the --quick sizes (recorded in the JSON)
    bool wide = false;                              ///< the table with device name and backend in every row
    bool progress = false;                          ///< rounds done / time left on stderr
    /// Each device also trains with mlp::TrainConfig::graph, a row of its own
    /// after its eager row, the two interleaved within every round.
    bool graph = false;
};

/// The training set as every device sees it: the data set split as
/// mlp_train splits it (mlp::load_standardized_split) and standardized with the
/// training part's mean and standard deviation.
struct MlpProblem {
    mlp::Dataset train;            ///< [samples, in] standardized features, labels 0/1
    std::size_t test_samples = 0;  ///< held out (counted, not used)
};

/// Loads and prepares s.data. Throws accel::InvalidArgument naming the file
/// when it cannot be read or parsed (mlp::load_csv), or when the split
/// leaves either part empty.
MlpProblem prepare_mlp_problem(const MlpSettings& s);

/// The batch order of every epoch a round trains (warm-up epochs first):
/// element e is mlp::epoch_order(samples, seed, e), e = 0 .. warmup + epochs − 1.
std::vector<std::vector<std::size_t>> mlp_epoch_orders(std::size_t samples, const MlpSettings& s);

/// The relative tolerance of a row's final loss against the first device's
/// in the same configuration: f64 1e-9, f32 1e-4, f16/bf16 2e-2.
double mlp_loss_tolerance(accel::DType dtype);

/// One configuration (hidden size, dtype) on one device.
struct MlpRow {
    std::string backend, device, selector;  ///< device: DeviceInfo::name; selector as given, e.g. "opencl:0"
    std::string stable_selector;            ///< survives device reordering, e.g. "opencl:pocl:0" (or = selector)
    std::string runtime;                    ///< DeviceInfo::runtime_version
    std::size_t in = 0, hidden = 0, batch = 0;
    std::string dtype;                      ///< "f32", "f64", "f16" or "bf16"
    /// How each training step reached the device: "eager" (op by op) or
    /// "graph" (captured once per batch size, replayed: MlpSettings::graph).
    std::string step = "eager";
    std::size_t train_samples = 0;          ///< samples per epoch
    std::size_t warmup = 0, epochs = 0;     ///< untimed and timed epochs per round
    /// The first epoch on this device (round 1's first, a warm-up epoch
    /// unless --warmup 0), ms: it pays the kernel builds and the automatic
    /// path's measurements, which later epochs do not.
    double first_epoch_ms = 0;
    /// The steady epochs: every timed epoch of every round except the
    /// device's first epoch (mlp::epoch_times: the first epoch's time when
    /// it is the only one); their median, fastest and slowest, ms per epoch.
    double ms_median = 0, ms_min = 0, ms_max = 0;
    std::size_t steady_epochs = 0;          ///< epochs ms_median covers
    std::vector<double> round_ms;           ///< each round's median of its steady epochs, ms
    double samples_per_s = 0;               ///< train_samples / (ms_median / 1000)
    double final_loss = 0;                  ///< mean per-sample loss of the last timed epoch (last round)
    std::size_t steps = 0;                  ///< Adam steps of one round's timed epochs
    std::size_t steps_per_epoch = 0;        ///< ⌈train_samples / batch⌉
    std::string reference;                  ///< stable selector of the row whose loss this one is compared with
    double loss_rel_diff = 0;               ///< |final_loss − reference's| / |reference's|
    double loss_tolerance = 0;              ///< mlp_loss_tolerance(dtype)
    bool agrees = false;                    ///< ran, finite loss, loss_rel_diff ≤ loss_tolerance
    std::string error;                      ///< non-empty when the row could not run
    /// True when the row ran and its loss agrees with the reference's.
    bool passed() const { return error.empty() && agrees; }
};

/// A device of the run.
struct MlpDevice {
    std::string selector;    ///< as given
    accel::DeviceInfo info;
    /// info.stable_selector, else selector.
    const std::string& shown_selector() const { return info.stable_selector.empty() ? selector : info.stable_selector; }
};

/// Everything an `mlp` run produced.
struct MlpResults {
    MlpProblem problem;
    std::vector<MlpDevice> devices;
    std::vector<MlpRow> rows;                ///< configuration by configuration, devices in order
    std::vector<std::string> notes;          ///< skipped combinations and why
    std::vector<std::string> unavailable;    ///< status lines of backends not available
};

/// Opens every selector (accel::open_device: BackendUnavailable and
/// InvalidArgument propagate; a device named twice runs once), then for each
/// configuration (hidden × dtype) trains s.rounds rounds, round r on every
/// device before round r + 1. A round builds a fresh mlp::Model from
/// mlp::init_params(in, hidden, seed), trains s.warmup warm-up epochs, then
/// s.epochs timed ones; each epoch is timed alone (host clock, the device
/// synchronized at its end), the first on each device kept apart. A device
/// that cannot train in a dtype (accel::Unsupported) gets a note instead of
/// a row; other accel errors become MlpRow::error. Throws
/// what prepare_mlp_problem throws.
MlpResults run_mlp(const MlpSettings& s);

/// The run as JSON: {"accel_version", "machine", "command": "mlp",
/// "settings", "problem" {data, train_samples, test_samples, in},
/// "devices", "rows", "max_loss_rel_diff" (by dtype), "notes",
/// "unavailable"}. Row keys as MlpRow's fields: first_epoch_ms, epoch_ms
/// {median, min, max, epochs} (the steady epochs), ms_per_epoch {median,
/// min, max, rounds} (the same figures under their older name, with each
/// round's median), pass.
nlohmann::json mlp_to_json(const MlpSettings& s, const MlpResults& r, const Machine& m);

/// The table for people: what was timed and how, one line per row (the
/// device by stable selector, named once in a legend; s.wide: its name and
/// backend in every row instead), the largest loss difference per dtype,
/// notes and errors; within `width` columns (optional columns left out,
/// prose wrapped: TextTable::write, fit_text) unless s.wide.
void write_mlp_table(std::ostream& out, const MlpSettings& s, const MlpResults& r, const Machine& m,
                     std::size_t width);

/// CSV with a header line, one line per row (the JSON row keys, flattened).
void write_mlp_csv(std::ostream& out, const MlpResults& r);

/// What another framework needs to train the very same model on the very
/// same batches (--save-problem): {"format": "accel-bench mlp problem",
/// "version": 1, seed, lr, batch, warmup_epochs, epochs, rounds, in,
/// "train": {"x": [[in floats] × samples], "y": [samples]} (standardized),
/// "epoch_orders": mlp_epoch_orders(...) (epoch e's batch k is samples
/// order[k·batch .. k·batch + batch − 1]), "init": [{"hidden", "w1"
/// [[in] × hidden], "b1" [hidden], "w2" [[hidden]], "b2" [1]} per hidden
/// size] (nn.Linear's layout)}. Floats are written round-trip exact.
nlohmann::json mlp_problem_json(const MlpSettings& s, const MlpProblem& p);

}  // namespace bench
