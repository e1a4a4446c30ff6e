// reference_train.hpp — the MLP example's training steps recomputed in
// float64 with plain loops (no accel ops), the oracle of test_training.cpp.
// Same math as mlp::Model (see examples/mlp_train/mlp.hpp): forward
// h = relu(x·W1ᵀ + b1), z = h·W2ᵀ + b2; mean BCE-with-logits in its stable
// form; its gradient (sigmoid(z) − t)/B back through both layers (ReLU
// gradient where h > 0); torch.optim.Adam per tensor with a global step count.
#pragma once

#include "data.hpp"
#include "mlp.hpp"

#include <cstddef>
#include <limits>
#include <vector>

namespace mlp_reference {

/// Parameters in double, nn.Linear layout as mlp::Params.
struct Params64 {
    std::size_t in = 0, hidden = 0;
    std::vector<double> w1, b1, w2, b2;
};

/// What a reference run produced.
struct Result64 {
    std::vector<double> epoch_loss;  ///< per epoch, defined as mlp::Model::train_epoch
    Params64 final_params;
    /// Smallest |pre-activation| / (|b1[j]| + Σₖ|x[k]·W1[j,k]|) over every
    /// hidden unit and sample of the run: how near a ReLU came to its kink,
    /// relative to the size of the terms its sum rounds. Below ~1e-5 a float32
    /// device may take the other side of the kink and legitimately diverge.
    double min_relu_margin = std::numeric_limits<double>::infinity();
    /// Smallest (|g| + eps) / Σ|terms of g| over every gradient element of
    /// every step (eps Adam's 1e-8): how much of a gradient survives its
    /// sum's cancellation. Adam normalizes each step by |g| + eps, so where
    /// this is below ~1e-3 a float32 sum's rounding (~1e-6 of the terms)
    /// moves that step by a visible fraction of the learning rate.
    double min_gradient_margin = std::numeric_limits<double>::infinity();
};

/// Trains from `init` (float values widened to double) on `train` (its float
/// features widened) for cfg.epochs epochs with batches from
/// mlp::epoch_order(train.samples, cfg.seed, epoch) and Adam at lr =
/// (double)cfg.lr, betas 0.9/0.999, eps 1e-8. Throws accel::InvalidArgument
/// on a shape mismatch between init and train or a zero batch size.
Result64 train(const mlp::Params& init, const mlp::Dataset& train, const mlp::TrainConfig& cfg);

}  // namespace mlp_reference
