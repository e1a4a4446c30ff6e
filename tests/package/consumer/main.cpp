// Runs y = σ(x·Wᵀ + b) on the host backend of an installed accel and checks
// it against the float64 reference. Exit 0 on agreement.
#include <accel/accel.hpp>
#include <accel/reference.hpp>

#include <iostream>

int main() {
    auto dev = accel::open_device("host");
    std::vector<float> x{0.5f, -1.0f, 2.0f, 0.25f, 1.5f, -0.75f}, w{0.1f, 0.2f, -0.3f, 0.4f, -0.5f, 0.6f},
        b{0.05f, -0.05f};
    auto X = accel::Tensor::from_host(dev, {2, 3}, x);
    auto W = accel::Tensor::from_host(dev, {2, 3}, w);
    auto B = accel::Tensor::from_host(dev, {2}, b);
    accel::Tensor Y(dev, {2, 2});
    accel::ops::dense(X, W, B, Y, accel::Activation::sigmoid);
    const double e = accel::reference::nmse(Y.download(), accel::reference::dense(x, w, b, 2, 3, 2, accel::Activation::sigmoid));
    std::cout << "installed accel " << ACCEL_VERSION << ": dense nmse " << e << "\n";
    return e < 1e-10 ? 0 : 1;
}
