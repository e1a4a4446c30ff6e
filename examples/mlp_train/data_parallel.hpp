// data_parallel.hpp — mlp_train under mpirun/srun: one model trained
// data-parallel over the MPI ranks (compiled into mlp_train when accel is
// built with MPI).
//
// Every rank loads the same data, split and initial weights, and sees the
// same batch order. Each global batch of B rows is cut into one contiguous
// shard per rank (mlp::shard_of); every rank computes its shard's share of
// the batch-mean gradient (dz scaled by 1/B), the four gradient tensors are
// summed over the ranks with MPI_Allreduce, and every rank takes the same
// Adam step. Gradients travel through host memory (download, one allreduce
// of all four, upload), except on the CUDA backend when MPI reports at run
// time that it is CUDA-aware (MPIX_Query_cuda_support): then the device
// buffers are passed to MPI_Allreduce directly.
//
// Ranks may run different backends (--backends host,opencl gives rank 0
// host and rank 1 OpenCL). The loss curve equals one process's with the same
// global batch up to float32 summation order; each rank's own Adam step may
// round differently on different backends, so rank 0's weights are the
// result, and the largest difference of any rank's final weights from rank
// 0's is reported ("weights spread").
#pragma once

#include "mlp.hpp"

#include <accel/mpi.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <utility>

namespace mlp {

/// Collective over MPI_COMM_WORLD for Model::train_epoch (see mlp::Collective).
/// Not thread-safe: one training loop per process, on MPI's main thread.
class MpiCollective final : public Collective {
public:
    /// `device` is this rank's device; device buffers go to MPI directly when
    /// it is a CUDA device and accel::mpi::cuda_aware() is true.
    explicit MpiCollective(const accel::Device& device)
        : direct_(device.info().backend == "cuda" && accel::mpi::cuda_aware()) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
    }
    int rank() const override { return rank_; }
    int ranks() const override { return ranks_; }
    /// True when gradients are exchanged as device buffers (CUDA-aware MPI).
    bool direct() const noexcept { return direct_; }

    void sum_gradients(accel::Tensor* const* grads, std::size_t count) override {
        if (count == 0) return;
        if (direct_) {
            grads[0]->device().synchronize();  // the gradients are complete before MPI reads them
            for (std::size_t i = 0; i < count; ++i)
                accel::mpi::sum_floats(static_cast<float*>(grads[i]->handle()), grads[i]->elements());
            return;
        }
        std::size_t total = 0;
        for (std::size_t i = 0; i < count; ++i) total += grads[i]->elements();
        staging_.resize(total);
        std::size_t at = 0;
        for (std::size_t i = 0; i < count; ++i) {
            grads[i]->buffer().download(staging_.data() + at, grads[i]->bytes());
            at += grads[i]->elements();
        }
        accel::mpi::sum_floats(staging_.data(), total);
        at = 0;
        for (std::size_t i = 0; i < count; ++i) {
            grads[i]->upload(staging_.data() + at, grads[i]->elements());
            at += grads[i]->elements();
        }
    }
    double sum(double value) override { return accel::mpi::sum(value); }

private:
    int rank_ = 0, ranks_ = 1;
    bool direct_ = false;
    std::vector<float> staging_;
};

/// Largest |a[i] − b[i]| over the parameters of two models of one shape.
inline double max_difference(const Params& a, const Params& b) {
    double d = 0;
    auto scan = [&d](const std::vector<float>& x, const std::vector<float>& y) {
        for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
            d = std::max(d, std::fabs(static_cast<double>(x[i]) - static_cast<double>(y[i])));
    };
    scan(a.w1, b.w1), scan(a.b1, b.b1), scan(a.w2, b.w2), scan(a.b2, b.b2);
    return d;
}

/// Runs data-parallel training under MPI and prints the result on rank 0
/// (table, or JSON with `json`). `selectors`: one selector or a comma list
/// dealt by rank (accel::mpi::resolve; `all` is refused). `prepare(rank)`
/// returns the split data and initial weights. Returns the exit status, the
/// same on every rank: 0, 1 when any rank failed (each failure printed by
/// rank 0 with rank, host and selector), 2 for a bad --backends.
inline int run_data_parallel(int argc, char** argv, const std::string& selectors, TrainConfig cfg, bool json,
                             const std::function<std::pair<Split, Params>(int)>& prepare) {
    accel::mpi::Session session(&argc, &argv);
    const int rank = session.rank();
    if (selectors == "all") {
        if (rank == 0)
            std::cerr << "mlp_train: --backends all is not accepted under MPI: give one selector or a list dealt to "
                         "ranks, e.g. --backends cuda:local or --backends host,opencl\n";
        return 2;
    }
    // Open this rank's device; every rank learns whether all could.
    std::shared_ptr<accel::Device> device;
    accel::mpi::Placement where;
    std::string error;
    std::pair<Split, Params> prep;
    try {
        device = accel::mpi::open_local_device(selectors, &where);
        prep = prepare(rank);
    } catch (const std::exception& e) {
        error = e.what();
    }
    auto report_failures = [&](const std::string& what) {
        const auto errors = accel::mpi::gather(error.empty() ? "" : "rank " + std::to_string(rank) + " (" +
                                                                       accel::host_name() + ", " + where.requested +
                                                                       "): " + error);
        if (rank == 0) {
            std::cerr << "mlp_train: " << what << "\n";
            for (const auto& e : errors)
                if (!e.empty()) std::cerr << "  " << e << "\n";
        }
        return 1;
    };
    if (!accel::mpi::all(error.empty())) return report_failures("a rank could not start");

    MpiCollective coll(*device);
    cfg.collective = &coll;
    const auto& split = prep.first;
    if (rank == 0 && !json)
        std::printf("data-parallel over %d ranks: %zu train / %zu test samples, network %zu-%zu-1, %zu epochs, "
                    "global batch %zu, lr %g, seed %llu; gradients %s\n",
                    session.size(), split.train.samples, split.test.samples, prep.second.in, prep.second.hidden,
                    cfg.epochs, cfg.batch, static_cast<double>(cfg.lr), static_cast<unsigned long long>(cfg.seed),
                    coll.direct() ? "as device buffers (CUDA-aware MPI)" : "through host memory");
    TrainResult r;
    try {
        r = train(device, prep.second, split.train, split.test, cfg, [&](std::size_t e, double loss) {
            if (rank == 0 && !json && ((e + 1) % 50 == 0 || e + 1 == cfg.epochs))
                std::printf("  epoch %4zu  loss %.6f\n", e + 1, loss);
        });
    } catch (const std::exception& e) {
        // A failure inside a collective step cannot be recovered from: the
        // other ranks wait in it. Say who failed, then end the job.
        std::cerr << "mlp_train: rank " << rank << " (" << accel::host_name() << ", " << where.selector
                  << ") failed while training: " << e.what() << "\n";
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    // Rank 0's weights are the model; how far every rank's are from them.
    std::vector<float> flat;
    for (const auto* v : {&r.final_params.w1, &r.final_params.b1, &r.final_params.w2, &r.final_params.b2})
        flat.insert(flat.end(), v->begin(), v->end());
    std::vector<float> root = flat;
    MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
    double spread = 0, worst_spread = 0;
    for (std::size_t i = 0; i < flat.size(); ++i)
        spread = std::max(spread, std::fabs(static_cast<double>(flat[i]) - static_cast<double>(root[i])));
    MPI_Reduce(&spread, &worst_spread, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    const nlohmann::json me = {{"rank", rank},
                               {"host", accel::host_name()},
                               {"selector", device->selector()},
                               {"device", device->info().name},
                               {"uuid", device->info().uuid},
                               {"ms_per_epoch", r.ms_per_epoch},
                               {"final_loss", r.epoch_loss.empty() ? 0.0 : r.epoch_loss.back()}};
    const auto all = accel::mpi::gather(me.dump());
    if (rank != 0) return 0;
    nlohmann::json ranks = nlohmann::json::array();
    std::string backends;
    double slowest = 0;
    for (const auto& text : all) {
        ranks.push_back(nlohmann::json::parse(text));
        backends += (backends.empty() ? "" : ",") + ranks.back()["selector"].get<std::string>();
        slowest = std::max(slowest, ranks.back()["ms_per_epoch"].get<double>());
    }
    if (json) {
        nlohmann::json j;
        j["config"] = {{"train_samples", split.train.samples}, {"test_samples", split.test.samples},
                       {"hidden", prep.second.hidden},       {"epochs", cfg.epochs},
                       {"batch", cfg.batch},                 {"lr", cfg.lr},
                       {"seed", cfg.seed}};
        j["mpi"] = {{"ranks", session.size()},
                    {"gradient_exchange", coll.direct() ? "device buffers" : "host staging"},
                    {"cuda_aware", accel::mpi::cuda_aware_reason()}};
        j["results"] = nlohmann::json::array({{{"backend", backends},
                                               {"device", "data-parallel over " + std::to_string(session.size()) +
                                                              " ranks"},
                                               {"loss", r.epoch_loss},
                                               {"train_accuracy", r.train_accuracy},
                                               {"test_accuracy", r.test_accuracy},
                                               {"ms_per_epoch", slowest}}});
        j["ranks"] = ranks;
        j["max_weights_spread"] = worst_spread;
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::printf("\n%-5s %-20s %-10s %-34s %10s\n", "rank", "host", "device", "name", "ms/epoch");
    for (const auto& k : ranks)
        std::printf("%-5d %-20.20s %-10s %-34.34s %10.3f\n", k["rank"].get<int>(),
                    k["host"].get<std::string>().c_str(), k["selector"].get<std::string>().c_str(),
                    k["device"].get<std::string>().c_str(), k["ms_per_epoch"].get<double>());
    std::printf("final loss %.6f, train accuracy %.2f %%, test accuracy %.2f %%, %.3f ms/epoch (slowest rank)\n",
                r.epoch_loss.back(), 100.0 * r.train_accuracy, 100.0 * r.test_accuracy, slowest);
    std::printf("largest difference of a rank's final weights from rank 0's: %.3g\n", worst_spread);
    return 0;
}

}  // namespace mlp
