// accel-mlp-parity ONE.json MANY.json RANKS BACKENDS: checks that the
// data-parallel run (MANY, `mpirun -n RANKS mlp_train --backends BACKENDS
// --format json`) trained on the ranks and backends asked, and that its loss
// equals the single process's (ONE) at every epoch within
//     |loss_P − loss_1| ≤ 1e-5 · loss_1.
// Why that tolerance: the shards' gradients are summed in another order than
// one process sums the batch, which changes gradient elements by a few
// float32 ulps (relative ~1e-7); Adam carries that into the weights, and the
// curves drift apart by ~1e-7 relative over 30 epochs (observed 6e-8).
// Training on the wrong rows, or gradients not summed over the ranks, moves
// the loss by 1e-3 relative or more. Prints the largest difference and the
// time per epoch of both. Exit 0 when it holds, 1 otherwise.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using nlohmann::json;

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: accel-mlp-parity ONE.json MANY.json RANKS BACKENDS\n");
        return 2;
    }
    json one, many;
    try {
        std::ifstream(argv[1]) >> one;
        std::ifstream(argv[2]) >> many;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cannot read the runs: %s\n", e.what());
        return 1;
    }
    constexpr double kTolerance = 1e-5;
    int failures = 0;
    const int ranks = std::stoi(argv[3]);
    std::vector<std::string> want;
    std::stringstream list(argv[4]);
    for (std::string b; std::getline(list, b, ',');) want.push_back(b);
    // The first device of a backend: BACKEND:0, or BACKEND:PLATFORM:0 where it names devices by platform (OpenCL).
    auto first_of = [](const std::string& got, const std::string& backend) {
        const std::string head = backend + ":";
        if (got == head + "0") return true;
        return got.rfind(head, 0) == 0 && got.size() > head.size() + 2 && got.compare(got.size() - 2, 2, ":0") == 0 &&
               got.find(':', head.size()) == got.size() - 2;
    };
    if (many["mpi"]["ranks"] != ranks || many["ranks"].size() != static_cast<std::size_t>(ranks)) {
        std::fprintf(stderr, "the run reports %s ranks, expected %d\n", many["mpi"]["ranks"].dump().c_str(), ranks);
        return 1;
    }
    for (int r = 0; r < ranks; ++r) {
        const std::string got = many["ranks"][r]["selector"];
        if (!first_of(got, want[static_cast<std::size_t>(r) % want.size()])) {
            std::fprintf(stderr, "rank %d trained on %s, expected the first device of %s\n", r, got.c_str(),
                         want[r % want.size()].c_str());
            ++failures;
        }
    }
    const auto& a = one["results"][0]["loss"];
    const auto& b = many["results"][0]["loss"];
    if (a.size() != b.size() || a.empty()) {
        std::fprintf(stderr, "%zu epochs against %zu\n", a.size(), b.size());
        return 1;
    }
    double worst = 0, worst_rel = 0;
    for (std::size_t e = 0; e < a.size(); ++e) {
        const double x = a[e], y = b[e], d = std::fabs(x - y);
        worst = std::max(worst, d);
        worst_rel = std::max(worst_rel, d / x);
        if (!(d <= kTolerance * x)) {
            std::fprintf(stderr, "epoch %zu: loss %.9g with %d ranks, %.9g in one process (|diff| %.3g > %.0e x loss)\n",
                         e + 1, y, ranks, x, d, kTolerance);
            ++failures;
        }
    }
    std::printf("%d ranks (%s) vs 1 process (host), %zu epochs: final loss %.9g vs %.9g, largest |diff| %.3g "
                "(%.3g relative, tolerance %.0e); %.3f ms/epoch vs %.3f; weights spread across ranks %.3g\n",
                ranks, argv[4], a.size(), b.back().get<double>(), a.back().get<double>(), worst, worst_rel,
                kTolerance, many["results"][0]["ms_per_epoch"].get<double>(),
                one["results"][0]["ms_per_epoch"].get<double>(), many["max_weights_spread"].get<double>());
    return failures ? 1 : 0;
}
