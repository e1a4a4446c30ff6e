// Host backend: the op kernels (arguments already validated by ops/).
#include "host_device.hpp"

#include "kernels/elementwise.hpp"
#include "kernels/matmul.hpp"
#include "kernels/parallel.hpp"

#include <cmath>

namespace accel {
namespace host {

namespace {
const float* in(DeviceHandle h) { return static_cast<const float*>(h); }
float* out(DeviceHandle h) { return static_cast<float*>(h); }

// Elementwise: block.x elements per task, each task a plain loop.
template <class Body>
void each(std::size_t n, const LaunchGeometry& g, Body body) {
    parallel_for(n, g.block.x, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) body(i);
    });
}

void apply_activation(float* y, std::size_t n, Activation act) {
    if (act == Activation::relu)
        for (std::size_t i = 0; i < n; ++i) y[i] = relu1(y[i]);
    else if (act == Activation::sigmoid)
        sigmoid_range(y, y, 0, n);
}
}  // namespace

void matmul_vendor(const Cblas& blas, const float* a, const float* b, float* c, std::size_t m, std::size_t n,
                   std::size_t k, bool ta, bool tb, float beta);

void HostDevice::k_add(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t n, const LaunchGeometry& g,
                       Stream&) {
    const float *x = in(a), *y = in(b);
    float* z = out(c);
    each(n, g, [=](std::size_t i) { z[i] = x[i] + y[i]; });
}

void HostDevice::k_sigmoid(DeviceHandle x, DeviceHandle y, std::size_t n, const LaunchGeometry& g, Stream&) {
    const float* xi = in(x);
    float* yo = out(y);
    parallel_for(n, g.block.x, [&](std::size_t b, std::size_t e) { sigmoid_range(xi, yo, b, e); });
}

void HostDevice::k_relu(DeviceHandle x, DeviceHandle y, std::size_t n, const LaunchGeometry& g, Stream&) {
    const float* xi = in(x);
    float* yo = out(y);
    each(n, g, [=](std::size_t i) { yo[i] = relu1(xi[i]); });
}

void HostDevice::k_relu_backward(DeviceHandle dy, DeviceHandle x, DeviceHandle dx, std::size_t n,
                                 const LaunchGeometry& g, Stream&) {
    const float *d = in(dy), *xi = in(x);
    float* o = out(dx);
    each(n, g, [=](std::size_t i) { o[i] = xi[i] > 0.0f ? d[i] : 0.0f; });
}

void HostDevice::k_sigmoid_backward(DeviceHandle dy, DeviceHandle y, DeviceHandle dx, std::size_t n,
                                    const LaunchGeometry& g, Stream&) {
    const float *d = in(dy), *yi = in(y);
    float* o = out(dx);
    each(n, g, [=](std::size_t i) { o[i] = d[i] * yi[i] * (1.0f - yi[i]); });
}

void HostDevice::k_matmul(DeviceHandle a, DeviceHandle b, DeviceHandle c, std::size_t m, std::size_t n,
                          std::size_t k, bool ta, bool tb, OpPath path, const LaunchGeometry&, Stream&) {
    if (path == OpPath::vendor)
        matmul_vendor(cblas(), in(a), in(b), out(c), m, n, k, ta, tb, 0.0f);
    else
        matmul_native(in(a), in(b), out(c), m, n, k, ta, tb);
}

void HostDevice::k_dense(DeviceHandle x, DeviceHandle w, DeviceHandle bias, DeviceHandle y, std::size_t batch,
                         std::size_t in_f, std::size_t out_f, Activation act, OpPath path, const LaunchGeometry&,
                         Stream&) {
    float* yo = out(y);
    const float* bv = in(bias);
    if (path == OpPath::vendor) {
        // Epilogue via BLAS: y = bias broadcast, then y += x·Wᵀ (beta = 1).
        for (std::size_t r = 0; r < batch; ++r)
            for (std::size_t o = 0; o < out_f; ++o) yo[r * out_f + o] = bv ? bv[o] : 0.0f;
        matmul_vendor(cblas(), in(x), in(w), yo, batch, out_f, in_f, false, true, 1.0f);
        apply_activation(yo, batch * out_f, act);
        return;
    }
    matmul_native(in(x), in(w), yo, batch, out_f, in_f, false, true);
    parallel_for(batch, 16, [&](std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r) {
            float* row = yo + r * out_f;
            if (bv)
                for (std::size_t o = 0; o < out_f; ++o) row[o] += bv[o];
            apply_activation(row, out_f, act);
        }
    });
}

void HostDevice::k_column_sum(DeviceHandle x, DeviceHandle y, std::size_t rows, std::size_t cols,
                              const LaunchGeometry&, Stream&) {
    const float* xi = in(x);
    float* yo = out(y);
    // Columns split across threads; each column summed in row order.
    parallel_for(cols, 64, [&](std::size_t c0, std::size_t c1) {
        for (std::size_t c = c0; c < c1; ++c) yo[c] = 0.0f;
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = c0; c < c1; ++c) yo[c] += xi[r * cols + c];
    });
}

void HostDevice::k_bce_with_logits(DeviceHandle z, DeviceHandle t, DeviceHandle l, std::size_t n,
                                   const LaunchGeometry& g, Stream&) {
    const float *zi = in(z), *ti = in(t);
    float* lo = out(l);
    each(n, g, [=](std::size_t i) { lo[i] = bce1(zi[i], ti[i]); });
}

void HostDevice::k_bce_with_logits_backward(DeviceHandle z, DeviceHandle t, DeviceHandle dz, std::size_t n,
                                            float scale, const LaunchGeometry& g, Stream&) {
    const float *zi = in(z), *ti = in(t);
    float* o = out(dz);
    each(n, g, [=](std::size_t i) { o[i] = scale * (sigmoid1(zi[i]) - ti[i]); });
}

void HostDevice::k_adam_step(DeviceHandle p, DeviceHandle grad, DeviceHandle m, DeviceHandle v, std::size_t n,
                             float beta1, float beta2, float eps, float step_size, float bc2_sqrt,
                             const LaunchGeometry& g, Stream&) {
    float *pp = out(p), *mm = out(m), *vv = out(v);
    const float* gg = in(grad);
    each(n, g, [=](std::size_t i) { adam1(pp[i], gg[i], mm[i], vv[i], beta1, beta2, eps, step_size, bc2_sqrt); });
}

void HostDevice::k_fma_throughput(DeviceHandle y, std::size_t n, std::size_t iterations, const LaunchGeometry& g,
                                  Stream&) {
    float* yo = out(y);
    parallel_for(n, g.block.x, [&](std::size_t b, std::size_t e) { fma_probe(yo, b, e, iterations); });
}

}  // namespace host
}  // namespace accel
