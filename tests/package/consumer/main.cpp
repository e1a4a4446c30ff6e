// Runs y = σ(x·Wᵀ + b) on the host backend of an installed accel and checks
// it against the float64 reference. Exit 0 on agreement. With the argument
// toy-kernel: builds a program kernel in the outside toy backend's own
// language ("toy-scale") on toy:0 and checks what it computed.
#include <accel/accel.hpp>
#include <accel/reference.hpp>
#include <accel/user_kernel.hpp>

#include <cstring>
#include <iostream>
#include <random>

namespace {

int toy_kernel() {
    auto dev = accel::open_device("toy");
    accel::KernelSource s;
    s.name = "triple";
    s.params = {accel::KernelParam::out("x")};
    s.code["toy-scale"] = "3";
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> d(-100.0f, 100.0f);
    std::vector<float> x(1000 + rng() % 1000);
    for (auto& v : x) v = d(rng);
    auto X = accel::Tensor::from_host(dev, {x.size()}, x);
    accel::UserKernel(s).launch(accel::geometry_1d(x.size(), 64, dev->info().limits), {X});
    const std::vector<float> y = X.download();
    for (std::size_t i = 0; i < x.size(); ++i)
        if (y[i] != 3.0f * x[i]) {
            std::cout << "toy-scale kernel: y[" << i << "] = " << y[i] << ", expected " << 3.0f * x[i] << "\n";
            return 1;
        }
    accel::KernelSource other = s;
    other.code = {{"opencl", "__kernel void triple(__global float* x) {}"}};
    try {
        accel::UserKernel(other).build(*dev);
        std::cout << "a kernel without toy-scale code was built on toy:0\n";
        return 1;
    } catch (const accel::Unsupported& e) {
        if (!std::strstr(e.what(), "toy-scale")) {
            std::cout << "the refusal does not name toy-scale: " << e.what() << "\n";
            return 1;
        }
    }
    std::cout << "toy-scale kernel: " << x.size() << " elements tripled\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "toy-kernel") return toy_kernel();
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
