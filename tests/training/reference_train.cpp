#include "reference_train.hpp"

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include <algorithm>
#include <cmath>

namespace mlp_reference {
namespace {

std::vector<double> widen(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// Adam state of one tensor.
struct Moments {
    std::vector<double> m, v;
    explicit Moments(std::size_t n) : m(n, 0.0), v(n, 0.0) {}
};

// torch.optim.Adam (single-tensor form), hyper-parameters widened from the
// float values the device receives.
void adam(std::vector<double>& p, const std::vector<double>& g, Moments& s, std::size_t t, double lr) {
    const accel::ops::AdamParams hp;
    const double b1 = hp.beta1, b2 = hp.beta2, eps = hp.eps;
    const double step_size = lr / (1.0 - std::pow(b1, static_cast<double>(t)));
    const double bc2_sqrt = std::sqrt(1.0 - std::pow(b2, static_cast<double>(t)));
    for (std::size_t i = 0; i < p.size(); ++i) {
        s.m[i] = b1 * s.m[i] + (1.0 - b1) * g[i];
        s.v[i] = b2 * s.v[i] + (1.0 - b2) * g[i] * g[i];
        p[i] -= step_size * s.m[i] / (std::sqrt(s.v[i]) / bc2_sqrt + eps);
    }
}

}  // namespace

Result64 train(const mlp::Params& init, const mlp::Dataset& data, const mlp::TrainConfig& cfg) {
    init.validate();
    if (data.features != init.in) throw accel::InvalidArgument("reference train: features differ from the network's inputs");
    if (cfg.batch == 0) throw accel::InvalidArgument("reference train: batch size 0");
    const std::size_t in = init.in, H = init.hidden, n = data.samples;
    Params64 p{in, H, widen(init.w1), widen(init.b1), widen(init.w2), widen(init.b2)};
    const std::vector<double> x = widen(data.x);
    Moments sw1(H * in), sb1(H), sw2(H), sb2(1);
    std::vector<double> gw1(H * in), gb1(H), gw2(H), gb2(1), h, z, dz, sw1_size, sb1_size, sw2_size;
    std::size_t step = 0;
    Result64 r;
    for (std::size_t e = 0; e < cfg.epochs; ++e) {
        const auto order = mlp::epoch_order(n, cfg.seed, e);
        double loss_sum = 0.0;
        for (std::size_t start = 0; start < n; start += cfg.batch) {
            const std::size_t B = std::min(cfg.batch, n - start);
            h.assign(B * H, 0.0);
            z.assign(B, 0.0);
            dz.assign(B, 0.0);
            // Forward and loss.
            for (std::size_t i = 0; i < B; ++i) {
                const double* xi = &x[order[start + i] * in];
                for (std::size_t j = 0; j < H; ++j) {
                    double a = p.b1[j];
                    double size = std::fabs(a);
                    for (std::size_t k = 0; k < in; ++k) {
                        a += xi[k] * p.w1[j * in + k];
                        size += std::fabs(xi[k] * p.w1[j * in + k]);
                    }
                    if (size > 0.0) r.min_relu_margin = std::min(r.min_relu_margin, std::fabs(a) / size);
                    h[i * H + j] = std::max(a, 0.0);
                }
                double zi = p.b2[0];
                for (std::size_t j = 0; j < H; ++j) zi += h[i * H + j] * p.w2[j];
                z[i] = zi;
                const double t = data.y[order[start + i]];
                loss_sum += std::max(zi, 0.0) - zi * t + std::log1p(std::exp(-std::fabs(zi)));
                dz[i] = (1.0 / (1.0 + std::exp(-zi)) - t) / static_cast<double>(B);
            }
            // Backward, with each gradient's size: the sum of its terms' magnitudes.
            std::fill(gw1.begin(), gw1.end(), 0.0);
            std::fill(gb1.begin(), gb1.end(), 0.0);
            std::fill(gw2.begin(), gw2.end(), 0.0);
            gb2[0] = 0.0;
            sw1_size.assign(H * in, 0.0);
            sb1_size.assign(H, 0.0);
            sw2_size.assign(H, 0.0);
            double sb2_size = 0.0;
            for (std::size_t i = 0; i < B; ++i) {
                const double* xi = &x[order[start + i] * in];
                gb2[0] += dz[i];
                sb2_size += std::fabs(dz[i]);
                for (std::size_t j = 0; j < H; ++j) {
                    gw2[j] += dz[i] * h[i * H + j];
                    sw2_size[j] += std::fabs(dz[i] * h[i * H + j]);
                    const double dpre = h[i * H + j] > 0.0 ? dz[i] * p.w2[j] : 0.0;
                    gb1[j] += dpre;
                    sb1_size[j] += std::fabs(dpre);
                    for (std::size_t k = 0; k < in; ++k) {
                        gw1[j * in + k] += dpre * xi[k];
                        sw1_size[j * in + k] += std::fabs(dpre * xi[k]);
                    }
                }
            }
            const double eps = accel::ops::AdamParams{}.eps;
            auto margin = [&](const std::vector<double>& g, const std::vector<double>& size) {
                for (std::size_t i = 0; i < g.size(); ++i)
                    if (size[i] > 0.0) r.min_gradient_margin = std::min(r.min_gradient_margin, (std::fabs(g[i]) + eps) / size[i]);
            };
            margin(gw1, sw1_size);
            margin(gb1, sb1_size);
            margin(gw2, sw2_size);
            margin(gb2, {sb2_size});
            ++step;
            const double lr = cfg.lr;
            adam(p.w1, gw1, sw1, step, lr);
            adam(p.b1, gb1, sb1, step, lr);
            adam(p.w2, gw2, sw2, step, lr);
            adam(p.b2, gb2, sb2, step, lr);
        }
        r.epoch_loss.push_back(loss_sum / static_cast<double>(n));
    }
    r.final_params = std::move(p);
    return r;
}

}  // namespace mlp_reference
