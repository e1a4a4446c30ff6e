// OpenCL backend: the op kernels (arguments already validated by ops/). Each
// k_* sets the arguments of its kernel from kernels/*.cl and enqueues it.
#include "opencl_device.hpp"

#include <accel/error.hpp>

namespace accel {
namespace opencl {

namespace {

cl_mem mem(DeviceHandle h) { return static_cast<cl_mem>(h); }
cl_ulong ul(std::size_t v) { return static_cast<cl_ulong>(v); }
cl_int flag(bool v) { return v ? 1 : 0; }

cl_int activation_code(Activation a) {  // as activate() in kernels/common.cl
    return a == Activation::sigmoid ? 1 : a == Activation::relu ? 2 : 0;
}

template <class T>
void set_arg(cl_kernel k, cl_uint i, const T& v) {
    check_cl(clSetKernelArg(k, i, sizeof(T), &v), "clSetKernelArg(" + std::to_string(i) + ")");
}

// A null cl_mem becomes a NULL __global pointer, as clSetKernelArg allows.
void set_arg(cl_kernel k, cl_uint i, const cl_mem& v) {
    check_cl(clSetKernelArg(k, i, sizeof(cl_mem), v ? &v : nullptr), "clSetKernelArg(" + std::to_string(i) + ")");
}

}  // namespace

template <class... Args>
void OpenclDevice::launch(Kernel which, const LaunchGeometry& g, Stream& s, const Args&... args) {
    // A leased kernel set: no other thread sets these kernels' arguments
    // until the enqueue below has captured them.
    note_runtime_user_thread();
    struct Lease {
        OpenclDevice& device;
        KernelSet* set;
        ~Lease() { device.release_kernels(set); }
    } lease{*this, acquire_kernels()};
    cl_kernel k = (*lease.set)[static_cast<std::size_t>(which)];
    cl_uint i = 0;
    (set_arg(k, i++, args), ...);
    const std::size_t local[3] = {g.block.x, g.block.y, g.block.z};
    const std::size_t global[3] = {g.grid.x * g.block.x, g.grid.y * g.block.y, g.grid.z * g.block.z};
    const cl_uint dims = g.grid.z * g.block.z > 1 ? 3 : g.grid.y * g.block.y > 1 ? 2 : 1;
    check_cl(clEnqueueNDRangeKernel(static_cast<OpenclStream&>(s).queue(), k, dims, nullptr, global, local, 0, nullptr,
                                    nullptr),
             "clEnqueueNDRangeKernel", " with " + g.to_string());
}

void OpenclDevice::check_tiled_geometry(const LaunchGeometry& g, std::size_t m, std::size_t n, const char* op) const {
    const GemmParams& p = gemm_;
    const std::size_t need_x = ceil_div(n, p.tile_cols()), need_y = ceil_div(m, p.tile_rows());
    if (g.block != Dim3{p.bx, p.by, 1} || g.grid.z != 1 || g.grid.x < need_x || g.grid.y < need_y)
        throw InvalidArgument(std::string(op) + " (native, " + selector() + "): launch geometry " + g.to_string() +
                              " is not accepted; the gemm kernel needs block(" + std::to_string(p.bx) + "," +
                              std::to_string(p.by) + ",1) and a grid of at least (" + std::to_string(need_x) + "," +
                              std::to_string(need_y) + ",1) to cover the " + std::to_string(m) + "x" +
                              std::to_string(n) + " output with " + std::to_string(p.tile_rows()) + "x" +
                              std::to_string(p.tile_cols()) + " tiles (rows x columns)");
}

void OpenclDevice::k_add(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t n, const LaunchGeometry& g,
                         Stream& s) {
    launch(Kernel::add, g, s, mem(a), mem(b), mem(c), ul(n));
}

void OpenclDevice::k_sigmoid(DeviceHandle x, DeviceHandle y, std::size_t n, const LaunchGeometry& g, Stream& s) {
    launch(Kernel::sigmoid, g, s, mem(x), mem(y), ul(n));
}

void OpenclDevice::k_relu(DeviceHandle x, DeviceHandle y, std::size_t n, const LaunchGeometry& g, Stream& s) {
    launch(Kernel::relu, g, s, mem(x), mem(y), ul(n));
}

void OpenclDevice::k_relu_backward(DeviceHandle dy, DeviceHandle x, DeviceHandle dx, std::size_t n,
                                   const LaunchGeometry& g, Stream& s) {
    launch(Kernel::relu_backward, g, s, mem(dy), mem(x), mem(dx), ul(n));
}

void OpenclDevice::k_sigmoid_backward(DeviceHandle dy, DeviceHandle y, DeviceHandle dx, std::size_t n,
                                      const LaunchGeometry& g, Stream& s) {
    launch(Kernel::sigmoid_backward, g, s, mem(dy), mem(y), mem(dx), ul(n));
}

void OpenclDevice::k_matmul(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t m, std::size_t n,
                            std::size_t k, bool ta, bool tb, const LaunchGeometry& g, Stream& s) {
    check_tiled_geometry(g, m, n, "matmul");
    launch(Kernel::gemm, g, s, mem(a), mem(b), mem(c), cl_mem{nullptr}, cl_int{0}, cl_int{0}, ul(m), ul(n),
           ul(k), flag(ta), flag(tb));
}

void OpenclDevice::k_dense(DeviceHandle x, DeviceHandle w, DeviceHandle bias, DeviceHandle y, std::size_t batch,
                           std::size_t in, std::size_t out, Activation act, const LaunchGeometry& g, Stream& s) {
    check_tiled_geometry(g, batch, out, "dense");
    launch(Kernel::gemm, g, s, mem(x), mem(w), mem(y), mem(bias), flag(bias != nullptr),
           activation_code(act), ul(batch), ul(out), ul(in), cl_int{0}, cl_int{1});
}

void OpenclDevice::k_bias_activation(DeviceHandle bias, DeviceHandle y, std::size_t rows, std::size_t cols,
                                     bool read_y, Activation act, const LaunchGeometry& g, Stream& s) {
    launch(Kernel::bias_activation, g, s, mem(bias), mem(y), flag(bias != nullptr), flag(read_y), activation_code(act),
           ul(rows), ul(cols));
}

void OpenclDevice::k_column_sum(DeviceHandle x, DeviceHandle y, std::size_t rows, std::size_t cols,
                                const LaunchGeometry& g, Stream& s) {
    launch(Kernel::column_sum, g, s, mem(x), mem(y), ul(rows), ul(cols));
}

void OpenclDevice::k_bce_with_logits(DeviceHandle z, DeviceHandle t, DeviceHandle l, std::size_t n,
                                     const LaunchGeometry& g, Stream& s) {
    launch(Kernel::bce_with_logits, g, s, mem(z), mem(t), mem(l), ul(n));
}

void OpenclDevice::k_bce_with_logits_backward(DeviceHandle z, DeviceHandle t, DeviceHandle dz, std::size_t n,
                                              float scale, const LaunchGeometry& g, Stream& s) {
    launch(Kernel::bce_with_logits_backward, g, s, mem(z), mem(t), mem(dz), ul(n), cl_float{scale});
}

void OpenclDevice::k_adam_step(DeviceHandle p, DeviceHandle grad, DeviceHandle m, DeviceHandle v, std::size_t n,
                               float beta1, float beta2, float eps, float step_size, float bc2_sqrt,
                               const LaunchGeometry& g, Stream& s) {
    launch(Kernel::adam_step, g, s, mem(p), mem(grad), mem(m), mem(v), ul(n), cl_float{beta1}, cl_float{beta2},
           cl_float{eps}, cl_float{step_size}, cl_float{bc2_sqrt});
}

void OpenclDevice::fma_throughput(DeviceHandle y, std::size_t n, std::size_t iterations, const LaunchGeometry& g,
                                    Stream& s) {
    launch(Kernel::fma_throughput, g, s, mem(y), ul(n), ul(iterations));
}

void OpenclDevice::launch_empty(Stream& s) {
    launch(Kernel::empty, LaunchGeometry{{1, 1, 1}, {1, 1, 1}}, s);
}

}  // namespace opencl
}  // namespace accel
