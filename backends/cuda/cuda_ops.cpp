// CUDA backend: the op kernels, registered per (op, dtype, path) (arguments
// already validated by ops/): check the geometry the tiled kernels need, make
// the device current, launch. One template, register_dtype<T>, serves the
// four storage types; the launchers compute in Compute<T> (kernels.hpp).
#include "cuda_device.hpp"
#include "../common/kernel_table.hpp"

#include "kernels/kernels.hpp"

#include <accel/error.hpp>

#include <type_traits>

namespace accel {
namespace cuda {

namespace {


dim3 dim(const Dim3& d) {
    return dim3(static_cast<unsigned>(d.x), static_cast<unsigned>(d.y), static_cast<unsigned>(d.z));
}

// The geometry was checked against the device limits (which fit unsigned).
Launch launch(const LaunchGeometry& g, Stream& s) {
    return Launch{dim(g.grid), dim(g.block), static_cast<CudaStream&>(s).handle()};
}

Epilogue epilogue(Activation a) { return static_cast<Epilogue>(a); }  // the same codes

// The matmul tile the front-end chose (do_tile_layout); launch_matmul rejects any other.
MatmulTile tile_of(const KernelArgs& a) {
    return {static_cast<unsigned>(a.tile.tile_rows), static_cast<unsigned>(a.tile.tile_cols)};
}

}  // namespace

template <class T>
void CudaDevice::register_dtype(DType dt) {
    using F = Compute<T>;
    const OpPath nat = OpPath::native;
    // The elementwise ops of the table, through one launcher (kernels/elementwise.cu).
    for (Op op : elementwise_ops_of_every_backend())
        kernel_table().add(op, dt, nat, [this, op](const KernelArgs& a) {
            const CurrentDevice current(ordinal_);
            ACCEL_CUDA_CHECK(launch_elementwise(op, in<T>(a.in[0]), in<T>(a.in[1]),
                                                out<T>(a.out[0]), a.n, launch(a.geometry, *a.stream)));
        });
    // matmul and dense: the tensor-core kernel for f16/bf16 where the device has it, else the SIMT one.
    const auto gemm = [this](const KernelArgs& a, const GemmArgs& p, const T* bias, Epilogue act) {
        const CurrentDevice current(ordinal_);
        const Launch l = launch(a.geometry, *a.stream);
#ifndef ACCEL_HIP
        if constexpr (!std::is_same<T, F>::value) {  // f16, bf16
            if (tensor_cores_) {
                ACCEL_CUDA_CHECK(launch_matmul_mma(in<T>(a.in[0]), in<T>(a.in[1]), out<T>(a.out[0]), p.m, p.n, p.k,
                                                   p.trans_a, p.trans_b, bias, act, tile_of(a), l));
                return;
            }
        }
#endif
        ACCEL_CUDA_CHECK(launch_matmul(in<T>(a.in[0]), in<T>(a.in[1]), out<T>(a.out[0]), p.m, p.n, p.k, p.trans_a,
                                       p.trans_b, bias, act, tile_of(a), l));
    };
    kernel_table().add(Op::matmul, dt, nat, [gemm](const KernelArgs& a) {
        gemm(a, GemmArgs::of(a), static_cast<const T*>(nullptr), Epilogue::none);
    });
    kernel_table().add(Op::dense, dt, nat, [gemm](const KernelArgs& a) {
        gemm(a, DenseArgs::of(a).gemm(), in<T>(a.in[2]), epilogue(a.act));  // x·Wᵀ
    });
    kernel_table().add(Op::bias_activation, dt, nat, [this](const KernelArgs& a) {
        const CurrentDevice current(ordinal_);
        const MatrixArgs p = MatrixArgs::of(a);
        ACCEL_CUDA_CHECK(launch_bias_activation(out<T>(a.out[0]), in<T>(a.in[0]), p.rows, p.cols, a.scalars[0] != 0,
                                                epilogue(p.act), launch(a.geometry, *a.stream)));
    });
    kernel_table().add(Op::column_sum, dt, nat, [this](const KernelArgs& a) {
        const LaunchGeometry& g = a.geometry;
        const std::size_t threads = g.block.x * g.block.y * g.block.z;
        if (threads > kColumnSumMaxThreads)  // partial sums live in a shared array of that size
            throw InvalidArgument("column_sum: launch geometry " + g.to_string() + " rejected: the " ACCEL_GPU_RUNTIME
                                  " kernel accepts "
                                  "at most " + std::to_string(kColumnSumMaxThreads) + " threads per block");
        const CurrentDevice current(ordinal_);
        const MatrixArgs p = MatrixArgs::of(a);
        ACCEL_CUDA_CHECK(launch_column_sum(in<T>(a.in[0]), out<T>(a.out[0]), p.rows, p.cols, launch(g, *a.stream)));
    });
    kernel_table().add(Op::bce_with_logits_backward, dt, nat, [this](const KernelArgs& a) {
        const CurrentDevice current(ordinal_);
        ACCEL_CUDA_CHECK(launch_bce_with_logits_backward(in<T>(a.in[0]), in<T>(a.in[1]), out<T>(a.out[0]), a.n,
                                                         static_cast<F>(a.scalars[0]), launch(a.geometry, *a.stream)));
    });
    for (Op op : {Op::scale, Op::triad})
        kernel_table().add(op, dt, nat, [this, triad = op == Op::triad](const KernelArgs& a) {
            const CurrentDevice current(ordinal_);
            ACCEL_CUDA_CHECK(launch_scaled(in<T>(a.in[0]), triad ? in<T>(a.in[1]) : nullptr, out<T>(a.out[0]), a.n,
                                           static_cast<F>(a.scalars[0]), launch(a.geometry, *a.stream)));
        });
    kernel_table().add(Op::dot, dt, nat, [this](const KernelArgs& a) {
        const LaunchGeometry& g = a.geometry;
        if (g.block.x * g.block.y * g.block.z > kDotMaxThreads)  // the block's sums live in a shared array of that size
            throw InvalidArgument("dot: launch geometry " + g.to_string() + " rejected: the " ACCEL_GPU_RUNTIME
                                  " kernel accepts at most " + std::to_string(kDotMaxThreads) + " threads per block");
        const CurrentDevice current(ordinal_);
        ACCEL_CUDA_CHECK(launch_dot(in<T>(a.in[0]), in<T>(a.in[1]), out<F>(DotArgs::of(a).partials), out<T>(a.out[0]),
                                    a.n, launch(g, *a.stream)));
    });
    // convert: y (dtype dt) = x (a.src_dtype) rounded once to dt.
    kernel_table().add(Op::convert, dt, nat, [this](const KernelArgs& a) {
        const CurrentDevice current(ordinal_);
        const Launch l = launch(a.geometry, *a.stream);
        const auto run = [&](auto source) {
            using S = decltype(source);
            return launch_convert(in<S>(a.in[0]), out<T>(a.out[0]), a.n, l);
        };
        switch (a.src_dtype) {
            case DType::f32: ACCEL_CUDA_CHECK(run(float{})); return;
            case DType::f64: ACCEL_CUDA_CHECK(run(double{})); return;
            case DType::f16: ACCEL_CUDA_CHECK(run(__half{})); return;
            case DType::bf16: ACCEL_CUDA_CHECK(run(__nv_bfloat16{})); return;
        }
        throw InvalidArgument("convert: source dtype " + std::to_string(static_cast<int>(a.src_dtype)) +
                              " is not one of f32, f64, f16, bf16");
    });
    // adam_step: in[1] = grad; out = p, m, v (updated in place).
    kernel_table().add(Op::adam_step, dt, nat, [this](const KernelArgs& a) {
        const auto h = AdamScalarArgs::of(a);
        const CurrentDevice current(ordinal_);
        ACCEL_CUDA_CHECK(launch_adam_step(out<T>(a.out[0]), in<T>(a.in[1]), out<T>(a.out[1]), out<T>(a.out[2]), a.n,
                                          F(h.beta1), F(h.beta2), F(h.eps), F(h.step_size), F(h.bias_correction2_sqrt),
                                          launch(a.geometry, *a.stream)));
    });
    // The vendor path ignores the geometry: the library picks its own launches.
    if (blas_)
        kernel_table().add(Op::gemm, dt, OpPath::vendor, [this](const KernelArgs& a) {
            const CurrentDevice current(ordinal_);
            const GemmArgs p = GemmArgs::of(a);
            vendor_gemm(*blas_, in<T>(a.in[0]), in<T>(a.in[1]), out<T>(a.out[0]), p.m, p.n, p.k, p.trans_a, p.trans_b,
                        a.scalars[0], static_cast<CudaStream&>(*a.stream).handle());
        });
}

void CudaDevice::register_kernels() {
    // The kernel table: every op natively in every dtype; vendor gemm in
    // every dtype when the vendor BLAS started.
    std::vector<DType> vendor;
    if (blas_) vendor.assign(std::begin(kAllDTypes), std::end(kAllDTypes));
    kernel_table().claim({{native_ops_of_every_backend(), {std::begin(kAllDTypes), std::end(kAllDTypes)}, OpPath::native},
                   {{Op::gemm}, vendor, OpPath::vendor}});
    register_dtype<float>(DType::f32);
    register_dtype<double>(DType::f64);
    register_dtype<__half>(DType::f16);
    register_dtype<__nv_bfloat16>(DType::bf16);
}

void CudaDevice::fma_throughput(DeviceHandle y, DType dtype, std::size_t n, std::size_t iterations,
                                const LaunchGeometry& g, Stream& s) {
    if (dtype == DType::f16)
        throw Unsupported("fma_throughput: " + selector() + " has no f16 probe (its f16 kernels accumulate in f32 "
                          "or on the matrix engine: see matrix_throughput)");
    const CurrentDevice current(ordinal_);
    if (dtype == DType::f64)
        ACCEL_CUDA_CHECK(launch_fma_throughput(out<double>(y), n, iterations, launch(g, s)));
    else
        ACCEL_CUDA_CHECK(launch_fma_throughput(out<float>(y), n, iterations, launch(g, s)));
}

void CudaDevice::matrix_throughput(DeviceHandle y, DType dtype, std::size_t n, std::size_t iterations, Stream& s) {
#ifdef ACCEL_HIP
    (void)y, (void)dtype, (void)n, (void)iterations, (void)s;
    throw Unsupported("the HIP build has no matrix-engine probe");
#else
    if (!tensor_cores_)
        throw Unsupported(std::string("mma.sync m16n8k16 on ") + dtype_name(dtype) + " operands needs compute capability " +
                          std::to_string(kTensorCoreGemmMinArch / 10) + "." + std::to_string(kTensorCoreGemmMinArch % 10) +
                          " (" + selector() + ": no tensor cores of that kind)");
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(launch_matrix_throughput(out<float>(y), n, iterations, dtype == DType::bf16,
                                              static_cast<CudaStream&>(s).handle()));
#endif
}

GemmCompute CudaDevice::gemm_compute(DType dtype, OpPath path) const noexcept {
    // The native f16/bf16 kernel is the tensor-core one where the device has them (register_dtype).
    if ((dtype == DType::f16 || dtype == DType::bf16) && (path == OpPath::vendor || tensor_cores_))
        return {GemmCompute::Unit::matrix, dtype};
    return gemm_compute_default(dtype);
}

void CudaDevice::launch_empty(Stream& s) {
    const CurrentDevice current(ordinal_);
    ACCEL_CUDA_CHECK(cuda::launch_empty(launch(LaunchGeometry{{1, 1, 1}, {1, 1, 1}}, s).stream));
}

std::string CudaDevice::do_unsupported_reason(Op op, DType, OpPath path) const {
    if (path == OpPath::vendor && op_info(op).has_vendor_path)
        return "the vendor BLAS did not start: " + blas_description_;
    return "";
}

}  // namespace cuda
}  // namespace accel
