// CUDA backend: elementwise kernels, column_sum and the dense epilogue, in
// every storage type (kernels.hpp).
//
// One grid-stride kernel template runs a per-element functor over [0, n), so
// any grid/block the caller gives (within the device limits) is correct: a
// small grid loops, a large one leaves threads idle. __launch_bounds__(1024)
// keeps register use low enough for the largest block a device allows.
#include "device_math.cuh"
#include "kernels.hpp"
#include "launch.cuh"
#ifndef ACCEL_HIP
#include "warp_mma.cuh"  // the matrix-engine probe
#endif

#include <cstdint>
#include <type_traits>

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

// ---- per-element bodies (the math of the op table) ------------------------------
// Each loads T, computes in F = Compute<T>, and stores T (rounded once).

// The formulas of the op table's elementwise ops: y = f(a, b) for one
// element in F = Compute<T>; kInputs 1: b is not read (its pointer may be null).
namespace formula {
struct Add {
    static constexpr int kInputs = 2;
    template <class F>
    __device__ F operator()(F a, F b) const { return a + b; }
};
struct Mul {
    static constexpr int kInputs = 2;
    template <class F>
    __device__ F operator()(F a, F b) const { return a * b; }
};
struct Copy {
    static constexpr int kInputs = 1;
    template <class F>
    __device__ F operator()(F x, F) const { return x; }
};
struct Sigmoid {
    static constexpr int kInputs = 1;
    template <class F>
    __device__ F operator()(F x, F) const { return sigmoid1(x); }
};
struct Relu {
    static constexpr int kInputs = 1;
    template <class F>
    __device__ F operator()(F x, F) const { return relu1(x); }
};
struct ReluBackward {  // a = dy, b = x
    static constexpr int kInputs = 2;
    template <class F>
    __device__ F operator()(F dy, F x) const { return x > F(0) ? dy : F(0); }
};
struct SigmoidBackward {  // a = dy, b = y = σ(x)
    static constexpr int kInputs = 2;
    template <class F>
    __device__ F operator()(F dy, F y) const { return dy * y * (F(1) - y); }
};
// The gelu ops (backends/common/gelu_math.hpp); a = dy, b = x for the backward ones.
template <Op kOp>
struct Gelu {
    static constexpr int kInputs = kOp == Op::gelu || kOp == Op::gelu_tanh ? 1 : 2;
    template <class F>
    __device__ F operator()(F a, F b) const { return gelu_math::of<kOp, DeviceMath>(a, b); }
};
// max(z,0) - z*t + log1p(exp(-|z|)): exp of a non-positive argument only.
struct Bce {  // a = z, b = t
    static constexpr int kInputs = 2;
    template <class F>
    __device__ F operator()(F z, F t) const {
        return math::fmax(z, F(0)) - z * t + math::log1p(math::exp(-math::fabs(z)));
    }
};
}  // namespace formula

// y[i] = Formula(a[i], b[i]), loaded as T, computed in Compute<T>, rounded once.
template <class T, class Formula>
struct ElementwiseBody {
    const T *a, *b;
    T* y;
    __device__ void operator()(std::size_t i) const {
        using F = Compute<T>;
        const F bi = Formula::kInputs == 2 ? to_compute(b[i]) : F(0);
        y[i] = from_compute<T>(Formula{}(to_compute(a[i]), bi));
    }
};

template <class T>
struct BceBackwardBody {
    using F = Compute<T>;
    const T *z, *t;
    T* dz;
    F scale;
    __device__ void operator()(std::size_t i) const {
        dz[i] = from_compute<T>(scale * (sigmoid1(to_compute(z[i])) - to_compute(t[i])));
    }
};

// scale y = s·x and triad y = x + s·c (c given): BabelStream's mul and triad.
template <class T>
struct ScaledBody {
    using F = Compute<T>;
    const T *x, *c;
    T* y;
    F s;
    __device__ void operator()(std::size_t i) const {
        y[i] = from_compute<T>(c ? to_compute(x[i]) + s * to_compute(c[i]) : s * to_compute(x[i]));
    }
};

// torch.optim.Adam, single-tensor form (the adam_step op): p is updated from
// the unrounded m and v, then each of p, m, v is rounded once to T.
template <class T>
struct AdamBody {
    using F = Compute<T>;
    T *p, *m, *v;
    const T* g;
    F beta1, beta2, eps, step_size, bc2_sqrt;
    __device__ void operator()(std::size_t i) const {
        const F gi = to_compute(g[i]);
        const F mi = beta1 * to_compute(m[i]) + (F(1) - beta1) * gi;
        const F vi = beta2 * to_compute(v[i]) + (F(1) - beta2) * gi * gi;
        m[i] = from_compute<T>(mi);
        v[i] = from_compute<T>(vi);
        p[i] = from_compute<T>(to_compute(p[i]) - step_size * mi / (math::sqrt(vi) / bc2_sqrt + eps));
    }
};

// 8 independent accumulators per item so the FMA pipes stay busy.
// F: float or double (the probe's compute type).
template <class F>
struct FmaBody {
    F* y;
    std::size_t iterations;
    __device__ void operator()(std::size_t i) const {
        F a[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) a[j] = static_cast<F>(static_cast<float>(i) * 1e-9f + static_cast<float>(j));
        for (std::size_t it = 0; it < iterations; ++it) {
#pragma unroll
            for (int j = 0; j < 8; ++j) a[j] = math::fma(a[j], F(0.9999f), F(1e-4f));
        }
        F s = 0;
#pragma unroll
        for (int j = 0; j < 8; ++j) s += a[j];
        y[i] = s;
    }
};

template <class T>
struct BiasActivationBody {
    using F = Compute<T>;
    T* y;
    const T* bias;
    std::size_t cols;
    bool read_y;
    Epilogue act;
    __device__ void operator()(std::size_t i) const {
        const F v = (read_y ? to_compute(y[i]) : F(0)) + (bias ? to_compute(bias[i % cols]) : F(0));
        y[i] = from_compute<T>(activate(v, act));
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

// The block's threads' values sum[0..threads) added in a fixed tree
// (pairs 1 apart, then 2, 4, ...): sum[0] holds the total. Every thread of
// the block calls it.
template <class F>
__device__ void block_tree_sum(F* sum, unsigned t, unsigned threads) {
    __syncthreads();
    for (unsigned s = 1; s < threads; s *= 2) {
        if (t % (2 * s) == 0 && t + s < threads) sum[t] += sum[t + s];
        __syncthreads();
    }
}

// dot (kernels.hpp): each thread's grid-stride chain, then the block's tree
// into partials[block].
template <class T>
__global__ void __launch_bounds__(1024) dot_blocks_kernel(const T* __restrict__ a, const T* __restrict__ b,
                                                          Compute<T>* __restrict__ partials, std::size_t n) {
    using F = Compute<T>;
    __shared__ F sum[kDotMaxThreads];
    const unsigned t = block_thread_index(), threads = block_thread_count();
    F acc = F(0);
    for (std::size_t i = flat_thread_index(); i < n; i += flat_thread_count()) acc += to_compute(a[i]) * to_compute(b[i]);
    sum[t] = acc;
    block_tree_sum(sum, t, threads);
    if (t == 0) partials[flat_block_index()] = sum[0];
}

// dot's total: one block; thread t takes partials t, t + threads, ... in
// order, then the tree; y[0] rounded once.
template <class T>
__global__ void __launch_bounds__(1024) dot_total_kernel(const Compute<T>* __restrict__ partials, std::size_t blocks,
                                                         T* __restrict__ y) {
    using F = Compute<T>;
    __shared__ F sum[kDotMaxThreads];
    const unsigned t = block_thread_index(), threads = block_thread_count();
    F acc = F(0);
    for (std::size_t j = t; j < blocks; j += threads) acc += partials[j];
    sum[t] = acc;
    block_tree_sum(sum, t, threads);
    if (t == 0) y[0] = from_compute<T>(sum[0]);
}

// column_sum (kernels.hpp): each block owns chunks of `width` adjacent
// columns (grid-stride over chunks) and splits the rows of a chunk over its
// threads: thread t is column lane t % width and row lane t / width, and sums
// rows lane, lane + lanes, ... of its column. The row lanes' partial sums
// then meet: in whole warps, width divides the warp width, so the lanes of
// one column within a warp are `width` apart and shuffles down by
// warp/2, ..., width add them into the warp's first `width` lanes; those
// warp sums meet in shared memory and one thread per column adds them in
// warp order. A block of partial warps (which shuffles must not read) adds
// every row lane's sum in shared memory instead. Either way a given geometry
// and warp width always give the same bits, and no atomics are needed (one
// block writes each column). Sums are kept in F = Compute<T>; each column's
// total is rounded once to T.
template <class T>
__global__ void __launch_bounds__(1024) column_sum_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                          std::size_t rows, std::size_t cols) {
    using F = Compute<T>;
    __shared__ F partial[kColumnSumMaxThreads];
    const unsigned threads = block_thread_count(), t = block_thread_index();
    const unsigned warp = warpSize;  // the device's: 32 or 64
    const bool whole_warps = threads % warp == 0;
    unsigned width = 1;
    if (whole_warps) {
        while (width * 2 <= warp && width * 2 <= cols) width *= 2;
    } else {  // min(warp, threads, cols)
        width = warp < threads ? warp : threads;
        if (cols < width) width = static_cast<unsigned>(cols);
    }
    const unsigned lanes = threads / width, col_lane = t % width, row_lane = t / width;
    const std::size_t chunks = (cols + width - 1) / width;
    // The trip count is the same for every thread of a block: the barriers and shuffles are uniform.
    for (std::size_t chunk = flat_block_index(); chunk < chunks; chunk += flat_block_count()) {
        const std::size_t c = chunk * width + col_lane;
        F s = F(0);
        if (row_lane < lanes && c < cols)
            for (std::size_t r = row_lane; r < rows; r += lanes) s += to_compute(x[r * cols + c]);
        unsigned sums = lanes;  // partial sums per column in shared memory
        if (whole_warps) {
            for (unsigned d = warp / 2; d >= width; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
            sums = threads / warp;
            if (t % warp < width) partial[(t / warp) * width + col_lane] = s;
        } else {
            partial[t] = s;
        }
        __syncthreads();
        if (row_lane == 0 && c < cols) {
            F total = F(0);
            for (unsigned l = 0; l < sums; ++l) total += partial[l * width + col_lane];
            y[c] = from_compute<T>(total);
        }
        __syncthreads();  // the next chunk overwrites partial[]
    }
}

__global__ void empty_kernel() {}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// y[i] = x[i] converted from S to T (convert_to: one rounding).
template <class S, class T>
struct ConvertBody {
    const S* x;
    T* y;
    __device__ void operator()(std::size_t i) const { y[i] = convert_to<T>(x[i]); }
};

// Below this the scalar kernel is as fast and the vector path is not worth a branch.
constexpr std::size_t kVectorMinElements = 4096;

}  // namespace

template <class T>
cudaError_t launch_elementwise(Op op, const T* a, const T* b, T* y, std::size_t n, const Launch& l) {
    switch (op) {
        case Op::add:
            if constexpr (std::is_same<T, float>::value) {
                if (n >= kVectorMinElements && aligned16(a) && aligned16(b) && aligned16(y))
                    return launch_kernel(add_vec4, l, reinterpret_cast<const float4*>(a),
                                         reinterpret_cast<const float4*>(b), reinterpret_cast<float4*>(y), n / 4, a, b,
                                         y, n);
            }
            return run(n, l, ElementwiseBody<T, formula::Add>{a, b, y});
        case Op::mul: return run(n, l, ElementwiseBody<T, formula::Mul>{a, b, y});
        case Op::copy: return run(n, l, ElementwiseBody<T, formula::Copy>{a, b, y});
        case Op::sigmoid: return run(n, l, ElementwiseBody<T, formula::Sigmoid>{a, b, y});
        case Op::relu: return run(n, l, ElementwiseBody<T, formula::Relu>{a, b, y});
        case Op::relu_backward: return run(n, l, ElementwiseBody<T, formula::ReluBackward>{a, b, y});
        case Op::sigmoid_backward: return run(n, l, ElementwiseBody<T, formula::SigmoidBackward>{a, b, y});
        case Op::bce_with_logits: return run(n, l, ElementwiseBody<T, formula::Bce>{a, b, y});
        case Op::gelu: return run(n, l, ElementwiseBody<T, formula::Gelu<Op::gelu>>{a, b, y});
        case Op::gelu_tanh: return run(n, l, ElementwiseBody<T, formula::Gelu<Op::gelu_tanh>>{a, b, y});
        case Op::gelu_backward: return run(n, l, ElementwiseBody<T, formula::Gelu<Op::gelu_backward>>{a, b, y});
        case Op::gelu_tanh_backward:
            return run(n, l, ElementwiseBody<T, formula::Gelu<Op::gelu_tanh_backward>>{a, b, y});
        default: return cudaErrorInvalidValue;  // no kernel here for this op
    }
}

cudaError_t elementwise_image_status() {
    cudaFuncAttributes attr{};
    return cudaFuncGetAttributes(&attr, empty_kernel);
}

cudaError_t launch_empty(cudaStream_t stream) { return launch_kernel(empty_kernel, Launch{dim3(1), dim3(1), stream}); }

template <class T>
cudaError_t launch_bce_with_logits_backward(const T* z, const T* t, T* dz, std::size_t n, Compute<T> scale,
                                            const Launch& l) {
    return run(n, l, BceBackwardBody<T>{z, t, dz, scale});
}

template <class T>
cudaError_t launch_scaled(const T* x, const T* c, T* y, std::size_t n, Compute<T> s, const Launch& l) {
    return run(n, l, ScaledBody<T>{x, c, y, s});
}

template <class T>
cudaError_t launch_dot(const T* a, const T* b, Compute<T>* partials, T* y, std::size_t n, const Launch& l) {
    if (cudaError_t e = launch_kernel(dot_blocks_kernel<T>, l, a, b, partials, n)) return e;
    const Launch total{dim3(1), l.block, l.stream};
    return launch_kernel(dot_total_kernel<T>, total, partials, static_cast<std::size_t>(l.grid.x) * l.grid.y * l.grid.z, y);
}

template <class T>
cudaError_t launch_adam_step(T* p, const T* g, T* m, T* v, std::size_t n, Compute<T> beta1, Compute<T> beta2,
                             Compute<T> eps, Compute<T> step_size, Compute<T> bias_correction2_sqrt, const Launch& l) {
    return run(n, l, AdamBody<T>{p, m, v, g, beta1, beta2, eps, step_size, bias_correction2_sqrt});
}

cudaError_t launch_fma_throughput(float* y, std::size_t n, std::size_t iterations, const Launch& l) {
    return run(n, l, FmaBody<float>{y, iterations});
}

cudaError_t launch_fma_throughput(double* y, std::size_t n, std::size_t iterations, const Launch& l) {
    return run(n, l, FmaBody<double>{y, iterations});
}

#ifndef ACCEL_HIP
// The matrix-engine probe (accel::Probes::matrix_throughput): each warp keeps
// 8 independent accumulator tiles of mma.sync m16n8k16 (f32), chain j
// starting at j, and runs `iterations` rounds of C_j += A·B with every value
// of A and B 1/4 (0x3400 in f16, 0x3E80 in bf16), so each round adds
// exactly 16/16 = 1. Device code for sm_80 and newer; older devices trap.
// Whole warps only: n is a multiple of 32 and blocks of 128 threads, so a
// warp is all in or all out.
template <class T>
__global__ void matrix_probe_kernel(float* y, std::size_t n, std::size_t iterations) {
    const std::size_t t = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= n) return;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    (void)y, (void)iterations;
    __trap();  // launched only where the device has sm_80's mma.sync (CudaDevice::matrix_throughput)
#else
    const std::uint32_t q = std::is_same<T, __nv_bfloat16>::value ? 0x3E803E80u : 0x34003400u;  // two 1/4 per register
    const warp::FragmentA a{{q, q, q, q}};
    const warp::FragmentB b{{q, q}};
    warp::FragmentC c[8];
    for (int j = 0; j < 8; ++j)
        for (float& v : c[j].r) v = float(j);
    for (std::size_t it = 0; it < iterations; ++it) {
#pragma unroll
        for (int j = 0; j < 8; ++j) warp::mma<T>(c[j], a, b);
    }
    float s = 0;
    for (int j = 0; j < 8; ++j)
        for (float v : c[j].r) s += v;
    y[t] = s;
#endif
}

cudaError_t launch_matrix_throughput(float* y, std::size_t n, std::size_t iterations, bool bf16, cudaStream_t stream) {
    const Launch l{dim3(unsigned((n + 127) / 128)), dim3(128), stream};
    return bf16 ? launch_kernel(matrix_probe_kernel<__nv_bfloat16>, l, y, n, iterations)
                : launch_kernel(matrix_probe_kernel<__half>, l, y, n, iterations);
}
#endif

template <class T>
cudaError_t launch_column_sum(const T* x, T* y, std::size_t rows, std::size_t cols, const Launch& l) {
    return launch_kernel(column_sum_kernel<T>, l, x, y, rows, cols);
}

template <class T>
cudaError_t launch_bias_activation(T* y, const T* bias, std::size_t rows, std::size_t cols, bool read_y,
                                   Epilogue act, const Launch& l) {
    return run(rows * cols, l, BiasActivationBody<T>{y, bias, cols, read_y, act});
}

template <class S, class T>
cudaError_t launch_convert(const S* x, T* y, std::size_t n, const Launch& l) {
    return run(n, l, ConvertBody<S, T>{x, y});
}

// The launchers of kernels.hpp, for every storage type.
#define ACCEL_CUDA_ELEMENTWISE(T)                                                                                    \
    template cudaError_t launch_elementwise<T>(Op, const T*, const T*, T*, std::size_t, const Launch&);               \
    template cudaError_t launch_bce_with_logits_backward<T>(const T*, const T*, T*, std::size_t, Compute<T>,         \
                                                            const Launch&);                                          \
    template cudaError_t launch_scaled<T>(const T*, const T*, T*, std::size_t, Compute<T>, const Launch&);           \
    template cudaError_t launch_dot<T>(const T*, const T*, Compute<T>*, T*, std::size_t, const Launch&);             \
    template cudaError_t launch_adam_step<T>(T*, const T*, T*, T*, std::size_t, Compute<T>, Compute<T>, Compute<T>,  \
                                             Compute<T>, Compute<T>, const Launch&);                                 \
    template cudaError_t launch_column_sum<T>(const T*, T*, std::size_t, std::size_t, const Launch&);                \
    template cudaError_t launch_bias_activation<T>(T*, const T*, std::size_t, std::size_t, bool, Epilogue,           \
                                                   const Launch&);
ACCEL_CUDA_FOR_EACH_STORAGE(ACCEL_CUDA_ELEMENTWISE)
#undef ACCEL_CUDA_ELEMENTWISE

// launch_convert for every (source, target) pair of storage types.
#define ACCEL_CUDA_CONVERT_TO(T, S) template cudaError_t launch_convert<S, T>(const S*, T*, std::size_t, const Launch&);
#define ACCEL_CUDA_CONVERT_FROM(S)                                                                      \
    ACCEL_CUDA_CONVERT_TO(float, S)                                                                     \
    ACCEL_CUDA_CONVERT_TO(double, S) ACCEL_CUDA_CONVERT_TO(__half, S) ACCEL_CUDA_CONVERT_TO(__nv_bfloat16, S)
ACCEL_CUDA_FOR_EACH_STORAGE(ACCEL_CUDA_CONVERT_FROM)
#undef ACCEL_CUDA_CONVERT_FROM
#undef ACCEL_CUDA_CONVERT_TO

}  // namespace cuda
}  // namespace accel
