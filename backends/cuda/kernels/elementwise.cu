// CUDA backend: elementwise kernels, column_sum and the dense epilogue.
//
// One grid-stride kernel template runs a per-element functor over [0, n), so
// any grid/block the caller gives (within the device limits) is correct: a
// small grid loops, a large one leaves threads idle. __launch_bounds__(1024)
// keeps register use low enough for the largest block a device allows.
#include "device_math.cuh"
#include "kernels.hpp"
#include "launch.cuh"

#include <cstdint>

namespace accel {
namespace cuda {

namespace {

template <class Body>
__global__ void __launch_bounds__(1024) each_element(std::size_t n, Body body) {
    for (std::size_t i = flat_thread_index(); i < n; i += flat_thread_count()) body(i);
}

template <class Body>
cudaError_t run(std::size_t n, const Launch& l, Body body) {
    return launch_kernel(each_element<Body>, l, n, body);
}

// ---- per-element bodies (the math of accel/device.hpp) -----------------------

struct AddBody {
    const float *a, *b;
    float* c;
    __device__ void operator()(std::size_t i) const { c[i] = a[i] + b[i]; }
};

struct SigmoidBody {
    const float* x;
    float* y;
    __device__ void operator()(std::size_t i) const { y[i] = sigmoid1(x[i]); }
};

struct ReluBody {
    const float* x;
    float* y;
    __device__ void operator()(std::size_t i) const { y[i] = relu1(x[i]); }
};

struct ReluBackwardBody {
    const float *dy, *x;
    float* dx;
    __device__ void operator()(std::size_t i) const { dx[i] = x[i] > 0.0f ? dy[i] : 0.0f; }
};

struct SigmoidBackwardBody {
    const float *dy, *y;
    float* dx;
    __device__ void operator()(std::size_t i) const { dx[i] = dy[i] * y[i] * (1.0f - y[i]); }
};

// max(z,0) - z*t + log1p(exp(-|z|)): expf of a non-positive argument only
// (max 2 ulp), log1pf max 1 ulp.
struct BceBody {
    const float *z, *t;
    float* l;
    __device__ void operator()(std::size_t i) const {
        const float zi = z[i];
        l[i] = fmaxf(zi, 0.0f) - zi * t[i] + log1pf(expf(-fabsf(zi)));
    }
};

struct BceBackwardBody {
    const float *z, *t;
    float* dz;
    float scale;
    __device__ void operator()(std::size_t i) const { dz[i] = scale * (sigmoid1(z[i]) - t[i]); }
};

// torch.optim.Adam, single-tensor form (see Device::k_adam_step).
struct AdamBody {
    float *p, *m, *v;
    const float* g;
    float beta1, beta2, eps, step_size, bc2_sqrt;
    __device__ void operator()(std::size_t i) const {
        const float gi = g[i];
        const float mi = beta1 * m[i] + (1.0f - beta1) * gi;
        const float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] -= step_size * mi / (sqrtf(vi) / bc2_sqrt + eps);
    }
};

// 8 independent accumulators per item so the FMA pipes stay busy.
struct FmaBody {
    float* y;
    std::size_t iterations;
    __device__ void operator()(std::size_t i) const {
        float a[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) a[j] = static_cast<float>(i) * 1e-9f + static_cast<float>(j);
        for (std::size_t it = 0; it < iterations; ++it) {
#pragma unroll
            for (int j = 0; j < 8; ++j) a[j] = fmaf(a[j], 0.9999f, 1e-4f);
        }
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < 8; ++j) s += a[j];
        y[i] = s;
    }
};

struct BiasActivationBody {
    float* y;
    const float* bias;
    std::size_t cols;
    bool read_y;
    Epilogue act;
    __device__ void operator()(std::size_t i) const {
        const float v = (read_y ? y[i] : 0.0f) + (bias ? bias[i % cols] : 0.0f);
        y[i] = activate(v, act);
    }
};

// add on float4s: n4 = n/4 vectors, then the scalar tail [4*n4, n).
__global__ void __launch_bounds__(1024) add_vec4(const float4* a, const float4* b, float4* c, std::size_t n4,
                                                 const float* as, const float* bs, float* cs, std::size_t n) {
    const std::size_t first = flat_thread_index(), stride = flat_thread_count();
    for (std::size_t i = first; i < n4; i += stride) {
        const float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    for (std::size_t i = 4 * n4 + first; i < n; i += stride) cs[i] = as[i] + bs[i];
}

// column_sum: each block owns chunks of `width` adjacent columns (grid-stride
// over chunks) and splits the rows of a chunk over its threads: thread t is
// column lane t % width and row lane t / width, and sums rows lane, lane +
// lanes, ... of its column. When width == cols a warp reads consecutive
// addresses, otherwise runs of `width` floats. The row lanes' partial sums
// meet in shared memory and one thread per column adds them in lane order, so
// a given launch geometry always gives the same bits, and no atomics are
// needed (one block writes each column).
__global__ void __launch_bounds__(1024) column_sum_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                          std::size_t rows, std::size_t cols) {
    __shared__ float partial[kColumnSumMaxThreads];
    const unsigned threads = block_thread_count(), t = block_thread_index();
    unsigned width = threads < kColumnSumWidth ? threads : kColumnSumWidth;
    if (cols < width) width = static_cast<unsigned>(cols);
    const unsigned lanes = threads / width, col_lane = t % width, row_lane = t / width;
    const std::size_t chunks = (cols + width - 1) / width;
    // The trip count is the same for every thread of a block: the barriers are uniform.
    for (std::size_t chunk = flat_block_index(); chunk < chunks; chunk += flat_block_count()) {
        const std::size_t c = chunk * width + col_lane;
        float s = 0.0f;
        if (row_lane < lanes && c < cols)
            for (std::size_t r = row_lane; r < rows; r += lanes) s += x[r * cols + c];
        partial[t] = s;
        __syncthreads();
        if (row_lane == 0 && c < cols) {
            float total = 0.0f;
            for (unsigned l = 0; l < lanes; ++l) total += partial[l * width + col_lane];
            y[c] = total;
        }
        __syncthreads();  // the next chunk overwrites partial[]
    }
}

__global__ void empty_kernel() {}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Below this the scalar kernel is as fast and the vector path is not worth a branch.
constexpr std::size_t kVectorMinElements = 4096;

}  // namespace

cudaError_t launch_add(const float* a, const float* b, float* c, std::size_t n, const Launch& l) {
    if (n >= kVectorMinElements && aligned16(a) && aligned16(b) && aligned16(c)) {
        return launch_kernel(add_vec4, l, reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b),
                             reinterpret_cast<float4*>(c), n / 4, a, b, c, n);
    }
    return run(n, l, AddBody{a, b, c});
}

cudaError_t elementwise_image_status() {
    cudaFuncAttributes attr{};
    return cudaFuncGetAttributes(&attr, empty_kernel);
}

cudaError_t launch_empty(cudaStream_t stream) { return launch_kernel(empty_kernel, Launch{dim3(1), dim3(1), stream}); }

cudaError_t launch_sigmoid(const float* x, float* y, std::size_t n, const Launch& l) {
    return run(n, l, SigmoidBody{x, y});
}

cudaError_t launch_relu(const float* x, float* y, std::size_t n, const Launch& l) { return run(n, l, ReluBody{x, y}); }

cudaError_t launch_relu_backward(const float* dy, const float* x, float* dx, std::size_t n, const Launch& l) {
    return run(n, l, ReluBackwardBody{dy, x, dx});
}

cudaError_t launch_sigmoid_backward(const float* dy, const float* y, float* dx, std::size_t n, const Launch& l) {
    return run(n, l, SigmoidBackwardBody{dy, y, dx});
}

cudaError_t launch_bce_with_logits(const float* z, const float* t, float* out, std::size_t n, const Launch& l) {
    return run(n, l, BceBody{z, t, out});
}

cudaError_t launch_bce_with_logits_backward(const float* z, const float* t, float* dz, std::size_t n, float scale,
                                            const Launch& l) {
    return run(n, l, BceBackwardBody{z, t, dz, scale});
}

cudaError_t launch_adam_step(float* p, const float* g, float* m, float* v, std::size_t n, float beta1, float beta2,
                             float eps, float step_size, float bias_correction2_sqrt, const Launch& l) {
    return run(n, l, AdamBody{p, m, v, g, beta1, beta2, eps, step_size, bias_correction2_sqrt});
}

cudaError_t launch_fma_throughput(float* y, std::size_t n, std::size_t iterations, const Launch& l) {
    return run(n, l, FmaBody{y, iterations});
}

cudaError_t launch_column_sum(const float* x, float* y, std::size_t rows, std::size_t cols, const Launch& l) {
    return launch_kernel(column_sum_kernel, l, x, y, rows, cols);
}

cudaError_t launch_bias_activation(float* y, const float* bias, std::size_t rows, std::size_t cols, bool read_y,
                                   Epilogue act, const Launch& l) {
    return run(rows * cols, l, BiasActivationBody{y, bias, cols, read_y, act});
}

}  // namespace cuda
}  // namespace accel
