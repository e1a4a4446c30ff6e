// dense_layer: one fully connected layer y = σ(x·Wᵀ + b) — the articles'
// y = σ(Wx + b) for a batch of row vectors x — on every available device and
// path, checked against the host backend's result and the float64 oracle.
#include <example_util.hpp>

#include <accel/reference.hpp>

#include <cmath>
#include <cstdio>

namespace {

// The op table's pass threshold for f32 dense (the conformance suite's).
const double kNmseLimit = accel::nmse_threshold(accel::Op::dense, accel::DType::f32);

struct Layer {
    std::size_t batch, in, out;
};

}  // namespace

int main(int argc, char** argv) try {
    CLI::App app{"dense_layer: y = sigmoid(x·Wᵀ + b) on every available device and path, checked against the "
                 "host backend\nand the float64 oracle.",
                 "dense_layer"};
    bool quick = false;
    app.add_flag("--quick", quick, "small layers only");
    std::string backends;
    example::add_backends_option(app, backends);
    if (const auto rc = tool_cli::parse(app, argc, argv)) return *rc;
    std::vector<Layer> layers{{8, 32, 16}, {64, 784, 128}};
    if (!quick) layers.insert(layers.end(), {{256, 1024, 1024}, {1024, 1024, 1024}});
    const auto devices = example::devices(backends);

    std::printf("dense_layer: y[batch,out] = sigmoid(x[batch,in]·W[out,in]^T + b[out]), float32, W as nn.Linear.\n"
                "max|y-host| = largest difference from the host backend's native result; nmse and max err vs the "
                "float64 oracle (limit %.0e).\n\n",
                kNmseLimit);
    std::printf("%-10s %-7s %-16s %10s %9s %11s %9s %9s %s\n", "device", "path", "batch x in x out", "kernel ms",
                "GFLOP/s", "max|y-host|", "nmse", "max err", "ok");
    bool all_ok = true;
    for (const Layer& l : layers) {
        // nn.Linear's initialization range keeps the sigmoid out of saturation.
        const float bound = 1.0f / std::sqrt(float(l.in));
        const auto x = example::random_floats(l.batch * l.in, 7);
        const auto w = example::random_floats(l.out * l.in, 8, -bound, bound);
        const auto b = example::random_floats(l.out, 9, -bound, bound);
        const auto ref = accel::reference::dense(x, w, b, l.batch, l.in, l.out, accel::Activation::sigmoid);
        const std::string shape = std::to_string(l.batch) + "x" + std::to_string(l.in) + "x" + std::to_string(l.out);
        std::vector<float> host_y;
        for (const auto& d : devices) {
            auto X = accel::Tensor::from_host(d, {l.batch, l.in}, x);
            auto W = accel::Tensor::from_host(d, {l.out, l.in}, w);
            auto B = accel::Tensor::from_host(d, {l.out}, b);
            accel::Tensor Y(d, {l.batch, l.out});
            for (accel::OpPath p : {accel::OpPath::native, accel::OpPath::vendor}) {
                if (!d->kernel_table().supports(accel::Op::dense, p)) continue;
                accel::ops::Options o;
                o.path = p == accel::OpPath::vendor ? accel::ops::PathChoice::vendor : accel::ops::PathChoice::native;
                auto run = [&] { accel::ops::dense(X, W, B, Y, accel::Activation::sigmoid, o); };
                run();
                const std::vector<float> y = Y.download();
                if (host_y.empty()) host_y = y;  // the host backend's native path comes first
                double diff = 0;
                for (std::size_t i = 0; i < y.size(); ++i) diff = std::max(diff, double(std::fabs(y[i] - host_y[i])));
                const double err = accel::reference::nmse(y, ref), max_err = accel::reference::max_abs_error(y, ref);
                const bool ok = err <= kNmseLimit;
                all_ok &= ok;
                const double ms = example::kernel_ms(*d, run, 3);
                std::printf("%-10s %-7s %-16s %10.4f %9.2f %11.1e %9.1e %9.1e %s\n", d->selector().c_str(),
                            accel::path_name(p), shape.c_str(), ms, 2.0 * l.batch * l.in * l.out / (ms * 1e6), diff,
                            err, max_err, ok ? "pass" : "FAIL");
                std::fflush(stdout);
            }
        }
    }
    return all_ok ? 0 : 1;
} catch (const accel::Error& e) {
    std::fprintf(stderr, "dense_layer: %s\n", e.what());
    return 1;
}
