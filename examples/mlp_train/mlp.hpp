// mlp.hpp — a 2-layer MLP (in → hidden, ReLU → 1 logit) trained with
// BCE-with-logits and Adam on any accel device.
//
// Training step for a batch X[B,in] with targets t[B,1] (PyTorch semantics):
//   h = relu(X·W1ᵀ + b1)                      ops::dense (Activation::relu)
//   z = h·W2ᵀ + b2                            ops::dense (Activation::none)
//   loss = mean_i bce_with_logits(z_i, t_i)   ops::bce_with_logits_loss
//   dz = (sigmoid(z) − t) / B                 ops::bce_with_logits_backward
//   dh, dW2, db2 from dz                      ops::dense_backward (none)
//   dW1, db1 from dh, through ReLU (h > 0)    ops::dense_backward (relu)
//   Adam (torch.optim.Adam defaults) on W1, b1, W2, b2, each with its own m, v.
// The Adam step count t is global (1-based over all batches of all epochs).
#pragma once

#include "data.hpp"

#include <accel/accel.hpp>

#include <array>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlp {

/// The network's parameters on the host, in nn.Linear layout:
/// w1 [hidden, in], b1 [hidden], w2 [1, hidden], b2 [1], row-major.
struct Params {
    std::size_t in = 0;
    std::size_t hidden = 0;
    std::vector<float> w1, b1, w2, b2;

    /// Throws accel::InvalidArgument when a vector's size does not match
    /// in/hidden (naming the tensor, the size found and the size expected).
    void validate() const;
};

/// nn.Linear's default initialization (kaiming-uniform with a = √5, which
/// reduces to U(−1/√fan_in, 1/√fan_in) for weights and biases alike), drawn
/// from make_rng(seed, Stream::init) with uniform_symmetric in the order
/// w1 (row-major), b1, w2, b2. Throws accel::InvalidArgument for in or hidden 0.
Params init_params(std::size_t in, std::size_t hidden, std::uint64_t seed);

/// Weights file: JSON {"w1": [[..in..] × hidden], "b1": [..hidden..],
/// "w2": [[..hidden..]], "b2": [b]} — nested lists as nn.Linear's
/// state_dict tensors (weight [out][in], bias [out]), so PyTorch can load it
/// with torch.tensor(json["w1"]). Throws accel::InvalidArgument when the file
/// cannot be opened/written, is not valid JSON, lacks a key, or has ragged
/// or inconsistent shapes.
Params load_params(const std::string& path);
/// Writes `p` as described at load_params (floats printed round-trip exact).
void save_params(const Params& p, const std::string& path);

/// The ranks of a data-parallel run, as train_epoch needs them: each global
/// batch is split into contiguous shards, one per rank; every rank computes
/// the gradient of its shard's share of the batch-mean loss, sum_gradients
/// adds them up over all ranks, and every rank then takes the same Adam
/// step. Implemented over MPI by mlp_train when it is built with MPI; this
/// library has no MPI dependency. Methods are called from one thread, by
/// every rank in the same order (they are collective).
class Collective {
public:
    virtual ~Collective() = default;
    /// This rank, 0-based, < ranks().
    virtual int rank() const = 0;
    /// Ranks taking part (≥ 1).
    virtual int ranks() const = 0;
    /// Replaces each of the `count` gradient tensors by its elementwise sum
    /// over all ranks. Every rank passes tensors of the same shapes in the
    /// same order (float32, on this rank's device). Throws on failure.
    virtual void sum_gradients(accel::Tensor* const* grads, std::size_t count) = 0;
    /// The sum over all ranks of `value`.
    virtual double sum(double value) = 0;
};

/// Rows [first, first + count) of a global batch of `batch` rows that
/// `rank` of `ranks` computes: contiguous shards whose sizes differ by at
/// most 1 (the first batch % ranks ranks get one more); count may be 0 when
/// batch < ranks. Throws accel::InvalidArgument for ranks < 1 or rank
/// outside [0, ranks).
struct Shard {
    std::size_t first = 0, count = 0;
};
Shard shard_of(std::size_t batch, int rank, int ranks);

/// Training settings.
struct TrainConfig {
    std::size_t epochs = 500;
    std::size_t batch = 40;   ///< samples per batch; the last batch of an epoch may be smaller
    float lr = 1e-3f;         ///< Adam learning rate (betas 0.9/0.999, eps 1e-8)
    std::uint64_t seed = 0;   ///< seeds each epoch's batch order (see epoch_order)
    /// Data-parallel ranks (not owned); null: this process trains alone.
    /// `batch` stays the global batch: every rank sees the same batch order
    /// and computes its shard_of() each batch.
    Collective* collective = nullptr;
    /// The dtype training computes in. f32 and f64: every tensor in it
    /// (f64 as the float64 check of the f32 run). f16 and bf16: mixed
    /// precision as PyTorch's autocast with float32 master weights does it —
    /// forward and backward in the 16-bit dtype, gradients converted to f32,
    /// Adam on f32 master weights and moments, the 16-bit weights converted
    /// from the masters after each step; no loss scaling. Data-parallel runs
    /// (collective) take f32 only.
    accel::DType dtype = accel::DType::f32;
    /// Record each batch size's training step once as a graph
    /// (accel/graph.hpp) — forward, the loss's gradient, backward, Adam (and
    /// the mixed-precision converts) — and replay it per batch: the same
    /// kernel calls without the op front-end's work, so the same loss curve
    /// bit for bit. The loss itself is read after each replay (it returns to
    /// the host). Not with a collective (its gradient sum runs between
    /// backward and Adam).
    bool graph = false;
};

/// The sample order of `epoch` (0-based): permutation(n, make_rng(seed,
/// Stream::epoch, epoch)). Computed on the host, so every backend (and the
/// float64 reference) sees the same batches: samples order[k·B .. k·B+B−1]
/// form batch k, the last one holding the n mod B remainder when nonzero.
std::vector<std::size_t> epoch_order(std::size_t n, std::uint64_t seed, std::size_t epoch);

/// Fraction (0..1) of samples whose logit classifies them right: predicted
/// label 1 when z > 0, else 0. logits.size() must equal labels.size()
/// (accel::InvalidArgument otherwise); empty input gives 0.
double accuracy(const std::vector<float>& logits, const std::vector<float>& labels);

/// The MLP's parameters, Adam moments and reused batch tensors on one device.
class Model {
public:
    /// Uploads `p` (validated) and zeroed Adam moments to `device`, for
    /// training in `dtype` (see TrainConfig::dtype). Throws
    /// accel::Unsupported when the device lacks an op in that dtype.
    Model(std::shared_ptr<accel::Device> device, const Params& p, accel::DType dtype = accel::DType::f32);

    /// One pass over `train` in the order epoch_order(train.samples,
    /// cfg.seed, epoch), one Adam step per batch. Returns the epoch loss:
    /// Σ_batches (batch mean loss × batch size) / train.samples, i.e. the
    /// mean per-sample loss seen during the epoch (with the weights of the
    /// moment each batch was processed). Batches are gathered on the host
    /// into reused vectors and uploaded (B × in floats per batch).
    /// With cfg.collective, this rank computes its shard of each batch only
    /// (dz = (sigmoid(z) − t) / B with B the global batch size, so that the
    /// summed gradients are the global batch's mean-loss gradient), the
    /// gradients are summed over the ranks before each Adam step, and the
    /// returned loss is the global epoch loss (the same on every rank).
    /// Mathematically the same steps as one process with batch B; in float32
    /// they differ by summation order only.
    /// Throws accel::InvalidArgument when train.features != in, cfg.batch == 0,
    /// cfg.dtype is not the model's, or a collective is given for a dtype
    /// other than f32.
    double train_epoch(const Dataset& train, const TrainConfig& cfg, std::size_t epoch);

    /// Logits z [samples] of the current weights for every sample of `d`
    /// (one forward over the whole set).
    std::vector<float> logits(const Dataset& d);

    /// The current parameters, downloaded.
    Params params() const;
    /// Adam steps taken so far.
    std::size_t steps() const noexcept { return step_; }
    const std::shared_ptr<accel::Device>& device() const noexcept { return device_; }

private:
    /// Activations and gradients of one batch size, created on first use.
    struct Batch {
        accel::Tensor x, t, h, z, dz, dh;
        accel::Graph step;  ///< TrainConfig::graph: this batch size's step, captured at its first batch
        float step_lr = 0;  ///< the learning rate `step` was captured with (a new one captures again)
    };
    Batch& batch_tensors(std::size_t b);
    void forward(const accel::Tensor& x, Batch& bt);
    /// One batch's loss gradient and backward pass (none for a null batch:
    /// this rank has no rows of it, its gradients are zero), the gradient sum
    /// over the ranks, then the Adam step (++step_; the count is read when
    /// each update is enqueued, at every replay of a captured step too).
    void backward_and_step(Batch* batch, std::size_t global_b, Collective* coll, const accel::ops::AdamParams& adam);
    /// The weights the forward and backward passes use: the masters, or
    /// their 16-bit copies under mixed precision. i: w1, b1, w2, b2.
    const accel::Tensor& weight(int i) const { return mixed() ? copy_[i] : *masters()[i]; }
    bool mixed() const noexcept { return dtype_ != master_dtype_; }
    std::array<const accel::Tensor*, 4> masters() const { return {&w1_, &b1_, &w2_, &b2_}; }

    std::shared_ptr<accel::Device> device_;
    std::size_t in_, hidden_;
    accel::DType dtype_, master_dtype_;     // compute dtype; weights, moments and Adam's dtype
    accel::Tensor w1_, b1_, w2_, b2_;      // parameters (master_dtype_)
    accel::Tensor copy_[4];                // mixed precision: the parameters in dtype_
    accel::Tensor gw1_, gb1_, gw2_, gb2_;  // gradients (dtype_)
    accel::Tensor master_grad_[4];         // mixed precision: the gradients in master_dtype_
    accel::Tensor m_[4], v_[4];            // Adam moments, in the order w1, b1, w2, b2
    std::map<std::size_t, Batch> batches_;
    std::vector<float> xb_, tb_;  // host gather buffers
    std::size_t step_ = 0;
};

/// Epoch times of a training run, the first apart from the steady ones: the
/// first epoch pays one-time costs (kernel builds, the automatic path's
/// measurements, first touches of memory) that later epochs do not.
struct EpochTimes {
    double first_ms = 0.0;   ///< the first epoch, ms
    /// Median, fastest and slowest of the steady epochs (every epoch after the
    /// first), ms; the first epoch's time when there is no other.
    double steady_median_ms = 0.0, steady_min_ms = 0.0, steady_max_ms = 0.0;
    std::size_t steady_epochs = 0;  ///< epochs the steady figures cover (0: only the first ran)
};

/// The EpochTimes of per-epoch times `ms` (ms[0] the first epoch, in ms);
/// all zero when `ms` is empty. Pure function, thread-safe.
EpochTimes epoch_times(const std::vector<double>& ms);

/// What one training run produced.
struct TrainResult {
    std::string backend;             ///< device selector, e.g. "opencl:0"
    std::string dtype;               ///< the dtype trained in (TrainConfig::dtype), e.g. "bf16"
    std::string device_name;         ///< DeviceInfo::name
    std::vector<double> epoch_loss;  ///< per epoch, as Model::train_epoch
    double train_accuracy = 0.0;     ///< after the last epoch, 0..1
    double test_accuracy = 0.0;
    /// Wall-clock ms of each epoch (host gather, uploads, kernels, loss
    /// sync, the device synchronized at its end), in order.
    std::vector<double> epoch_ms;
    double ms_per_epoch = 0.0;       ///< mean of epoch_ms, the first epoch included
    /// epoch_times(epoch_ms): the first epoch apart from the steady ones.
    EpochTimes times() const { return epoch_times(epoch_ms); }
    Params final_params;
};

/// Trains from `init` on `device` for cfg.epochs epochs, then measures
/// accuracies. `on_epoch(epoch, loss)` (optional) is called after each epoch.
TrainResult train(const std::shared_ptr<accel::Device>& device, const Params& init, const Dataset& train,
                  const Dataset& test, const TrainConfig& cfg,
                  const std::function<void(std::size_t, double)>& on_epoch = {});

}  // namespace mlp
