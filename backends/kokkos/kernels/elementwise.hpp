// Kokkos backend: elementwise kernels as functors, one index per call, run
// with a RangePolicy over [0, n) (see KokkosDevice for the chunk size).
#pragma once

#include "views.hpp"

namespace accel {
namespace kokkos {

/// c[i] = a[i] + b[i].
struct AddFn {
    ConstView a, b;
    FloatView c;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const { c(i) = a(i) + b(i); }
};

/// y[i] = act(x[i]) for act ∈ {sigmoid, relu}; x may alias y (in place).
struct ActivateFn {
    ConstView x;
    FloatView y;
    int act;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const { y(i) = activate(x(i), act); }
};

/// dx[i] = x[i] > 0 ? dy[i] : 0.
struct ReluBackwardFn {
    ConstView dy, x;
    FloatView dx;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const { dx(i) = x(i) > 0.0f ? dy(i) : 0.0f; }
};

/// dx[i] = dy[i] * y[i] * (1 - y[i]).
struct SigmoidBackwardFn {
    ConstView dy, y;
    FloatView dx;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const { dx(i) = dy(i) * y(i) * (1.0f - y(i)); }
};

/// l[i] = bce1(z[i], t[i]).
struct BceFn {
    ConstView z, t;
    FloatView l;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const { l(i) = bce1(z(i), t(i)); }
};

/// dz[i] = scale * (sigmoid(z[i]) - t[i]).
struct BceBackwardFn {
    ConstView z, t;
    FloatView dz;
    float scale;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const { dz(i) = scale * (sigmoid1(z(i)) - t(i)); }
};

/// PyTorch's Adam per element (see Device::k_adam_step).
struct AdamFn {
    FloatView p;
    ConstView g;
    FloatView m, v;
    float beta1, beta2, eps, step_size, bc2_sqrt;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
        const float gi = g(i);
        const float mi = beta1 * m(i) + (1.0f - beta1) * gi;
        const float vi = beta2 * v(i) + (1.0f - beta2) * gi * gi;
        m(i) = mi;
        v(i) = vi;
        p(i) -= step_size * mi / (kmath::sqrt(vi) / bc2_sqrt + eps);
    }
};

/// The fma_throughput probe (see Device::k_fma_throughput): 8 independent
/// chains a_j = a_j * 0.9999 + 1e-4 per work-item, y[i] = Σ_j a_j.
struct FmaProbeFn {
    FloatView y;
    Index iterations;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
        float a[8];
        for (int j = 0; j < 8; ++j) a[j] = static_cast<float>(i) * 1e-9f + static_cast<float>(j);
        for (Index it = 0; it < iterations; ++it)
            for (int j = 0; j < 8; ++j) a[j] = a[j] * 0.9999f + 1e-4f;
        float s = 0.0f;
        for (int j = 0; j < 8; ++j) s += a[j];
        y(i) = s;
    }
};

/// Elements per call of the host-space fma_throughput probe (FmaProbeHostFn).
constexpr int kFmaLanes = 16;

/// Host spaces only: the probe for elements [begin, min(end, begin +
/// kFmaLanes)) with the FmaProbeFn recurrence, the lanes as vector lanes.
/// Defined in kernels/host_loops.cpp (multi-versioned).
void host_fma_block(float* y, Index begin, Index end, Index iterations);

/// The fma_throughput probe on host spaces: index b covers the kFmaLanes
/// elements from b·kFmaLanes, so the 8 chains of 16 neighbouring elements
/// run as vector instructions (FmaProbeFn's scalar chains reached 10 GFLOP/s
/// on a CPU whose vector units give 300). Same values as FmaProbeFn.
struct FmaProbeHostFn {
    FloatView y;
    Index n, iterations;
    void operator()(Index b) const { host_fma_block(y.data(), b * kFmaLanes, n, iterations); }
};

/// y[c] = Σ_r x[r*cols + c], one column per index, summed in row order.
struct ColumnSumFn {
    ConstView x;
    FloatView y;
    Index rows, cols;
    KOKKOS_INLINE_FUNCTION void operator()(Index c) const {
        float s = 0.0f;
        for (Index r = 0; r < rows; ++r) s += x(r * cols + c);
        y(c) = s;
    }
};

/// y[r,c] = act((read_y ? y[r,c] : 0) + bias[c]) over y[rows, cols] flattened
/// (bias empty: no bias): the vendor path's epilogue and its K = 0 result.
struct BiasActivationFn {
    ConstView bias;
    FloatView y;
    Index cols;
    bool read_y;
    int act;
    KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
        const float v = (read_y ? y(i) : 0.0f) + (bias.data() ? bias(i % cols) : 0.0f);
        y(i) = activate(v, act);
    }
};

}  // namespace kokkos
}  // namespace accel
