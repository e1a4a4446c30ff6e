// CUDA backend: the op kernels (arguments already validated by ops/): check
// the geometry the tiled kernels need, make the device current, launch.
#include "cuda_device.hpp"

#include "kernels/kernels.hpp"

#include <accel/error.hpp>

namespace accel {
namespace cuda {

namespace {

const float* in(DeviceHandle h) { return static_cast<const float*>(h); }
float* out(DeviceHandle h) { return static_cast<float*>(h); }

dim3 dim(const Dim3& d) {
    return dim3(static_cast<unsigned>(d.x), static_cast<unsigned>(d.y), static_cast<unsigned>(d.z));
}

// The geometry was checked against the device limits (which fit unsigned).
Launch launch(const LaunchGeometry& g, Stream& s) {
    return Launch{dim(g.grid), dim(g.block), static_cast<CudaStream&>(s).handle()};
}

Epilogue epilogue(Activation a) {
    switch (a) {
        case Activation::sigmoid: return Epilogue::sigmoid;
        case Activation::relu: return Epilogue::relu;
        case Activation::none: break;
    }
    return Epilogue::none;
}

// The tiled kernel is written for one block shape and does not loop over
// tiles: reject anything else, naming what would be accepted.
void check_tiled(Op op, const LaunchGeometry& g, std::size_t rows, std::size_t cols) {
    const Dim3 need_block{kMatmulThreads, kMatmulThreads, 1};
    const std::size_t gx = ceil_div(rows, kMatmulTile), gy = ceil_div(cols, kMatmulTile);
    const std::string want = "block (" + std::to_string(kMatmulThreads) + "," + std::to_string(kMatmulThreads) +
                             ",1) and grid of at least (" + std::to_string(gx) + "," + std::to_string(gy) +
                             ",1) with grid.z = 1 for a " + std::to_string(rows) + "x" + std::to_string(cols) +
                             " output (one block per 64x64 tile, row tiles along x); leave Options::geometry unset "
                             "for that default";
    if (g.block != need_block)
        throw InvalidArgument(std::string(op_name(op)) + ": launch geometry " + g.to_string() +
                              " rejected: the CUDA tiled kernel accepts only " + want);
    if (g.grid.x < gx || g.grid.y < gy || g.grid.z != 1)
        throw InvalidArgument(std::string(op_name(op)) + ": launch geometry " + g.to_string() +
                              " does not cover the output: the CUDA tiled kernel needs " + want);
}

}  // namespace

void CudaDevice::k_add(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t n, const LaunchGeometry& g,
                       Stream& s) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(launch_add(in(a), in(b), out(c), n, launch(g, s)));
}

void CudaDevice::k_sigmoid(DeviceHandle x, DeviceHandle y, std::size_t n, const LaunchGeometry& g, Stream& s) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(launch_sigmoid(in(x), out(y), n, launch(g, s)));
}

void CudaDevice::k_relu(DeviceHandle x, DeviceHandle y, std::size_t n, const LaunchGeometry& g, Stream& s) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(launch_relu(in(x), out(y), n, launch(g, s)));
}

void CudaDevice::k_relu_backward(DeviceHandle dy, DeviceHandle x, DeviceHandle dx, std::size_t n,
                                 const LaunchGeometry& g, Stream& s) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(launch_relu_backward(in(dy), in(x), out(dx), n, launch(g, s)));
}

void CudaDevice::k_sigmoid_backward(DeviceHandle dy, DeviceHandle y, DeviceHandle dx, std::size_t n,
                                    const LaunchGeometry& g, Stream& s) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(launch_sigmoid_backward(in(dy), in(y), out(dx), n, launch(g, s)));
}

void CudaDevice::k_matmul(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t m, std::size_t n,
                          std::size_t k, bool ta, bool tb, const LaunchGeometry& g, Stream& s) {
    const CurrentDevice current(ordinal_);
    check_tiled(Op::matmul, g, m, n);
    ACCEL_CUDA_CHECK(launch_matmul(in(a), in(b), out(c), m, n, k, ta, tb, nullptr, Epilogue::none, launch(g, s)));
}

void CudaDevice::k_dense(DeviceHandle x, DeviceHandle w, DeviceHandle bias, DeviceHandle y, std::size_t batch,
                         std::size_t in_f, std::size_t out_f, Activation act, const LaunchGeometry& g, Stream& s) {
    const CurrentDevice current(ordinal_);
    check_tiled(Op::dense, g, batch, out_f);
    ACCEL_CUDA_CHECK(
        launch_matmul(in(x), in(w), out(y), batch, out_f, in_f, false, true, in(bias), epilogue(act), launch(g, s)));
}

void CudaDevice::k_gemm_vendor(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t m, std::size_t n,
                               std::size_t k, bool ta, bool tb, float beta, Stream& s) {
    const CurrentDevice current(ordinal_);
    cublas_gemm(blas_, in(a), in(b), out(c), m, n, k, ta, tb, beta, static_cast<CudaStream&>(s).handle());
}

void CudaDevice::k_bias_activation(DeviceHandle bias, DeviceHandle y, std::size_t rows, std::size_t cols, bool read_y,
                                   Activation act, const LaunchGeometry& g, Stream& s) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(launch_bias_activation(out(y), in(bias), rows, cols, read_y, epilogue(act), launch(g, s)));
}

void CudaDevice::k_column_sum(DeviceHandle x, DeviceHandle y, std::size_t rows, std::size_t cols,
                              const LaunchGeometry& g, Stream& s) {
    const std::size_t threads = g.block.x * g.block.y * g.block.z;
    if (threads > kColumnSumMaxThreads)  // partial sums live in a shared array of that size
        throw InvalidArgument("column_sum: launch geometry " + g.to_string() + " rejected: the CUDA kernel accepts at "
                              "most " + std::to_string(kColumnSumMaxThreads) + " threads per block");
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(launch_column_sum(in(x), out(y), rows, cols, launch(g, s)));
}

void CudaDevice::k_bce_with_logits(DeviceHandle z, DeviceHandle t, DeviceHandle l, std::size_t n,
                                   const LaunchGeometry& g, Stream& s) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(launch_bce_with_logits(in(z), in(t), out(l), n, launch(g, s)));
}

void CudaDevice::k_bce_with_logits_backward(DeviceHandle z, DeviceHandle t, DeviceHandle dz, std::size_t n,
                                            float scale, const LaunchGeometry& g, Stream& s) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(launch_bce_with_logits_backward(in(z), in(t), out(dz), n, scale, launch(g, s)));
}

void CudaDevice::k_adam_step(DeviceHandle p, DeviceHandle grad, DeviceHandle m, DeviceHandle v, std::size_t n,
                             float beta1, float beta2, float eps, float step_size, float bc2_sqrt,
                             const LaunchGeometry& g, Stream& s) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(
        launch_adam_step(out(p), in(grad), out(m), out(v), n, beta1, beta2, eps, step_size, bc2_sqrt, launch(g, s)));
}

void CudaDevice::fma_throughput(DeviceHandle y, std::size_t n, std::size_t iterations, const LaunchGeometry& g,
                                  Stream& s) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(launch_fma_throughput(out(y), n, iterations, launch(g, s)));
}

void CudaDevice::launch_empty(Stream& s) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(cuda::launch_empty(launch(LaunchGeometry{{1, 1, 1}, {1, 1, 1}}, s).stream));
}

}  // namespace cuda
}  // namespace accel
