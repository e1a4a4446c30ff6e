// custom_kernel: a program's own kernels on whichever backend is chosen.
// The textbook vector add (1-D grid of 256-thread blocks) and the 2-D matrix
// add (16×16 blocks, thread (x, y) = element (row y, column x)) written once
// per backend language — OpenCL C, CUDA C++, Vulkan GLSL and a C++ callable
// for the host — launched through accel::UserKernel with accel's geometry,
// tensors and streams on every available device, and checked bitwise against
// accel::ops::add. Prints the CPU-vs-device table: kernel time of the own
// kernel and of ops::add, and whether the results are identical.
#include <example_util.hpp>

#include <accel/user_kernel.hpp>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

using accel::HostBlock;
using accel::KernelParam;
using accel::KernelSource;
using accel::ParamType;

constexpr std::size_t kBlock1d = 256, kTile = 16;

// c[i] = a[i] + b[i] for i < n: one element per thread, striding by the
// whole grid where the device caps it below n threads (Vulkan devices allow
// 65535 work-groups per dimension, so 2^24 elements in blocks of 256 need
// 65537).
KernelSource vector_add_source() {
    KernelSource s;
    s.name = "vector_add";
    s.params = {KernelParam::in("a"), KernelParam::in("b"), KernelParam::out("c"),
                KernelParam::scalar("n", ParamType::u32)};
    s.code["opencl"] = R"(
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, uint n) {
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) c[i] = a[i] + b[i];
})";
    s.code["cuda"] = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) c[i] = a[i] + b[i];
})";
    s.code["glsl"] = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Scalars { uint n; };
void main() {
    for (uint i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) c[i] = a[i] + b[i];
})";
    s.host = [](const HostBlock& blk) {
        const float* a = blk.tensor<const float>(0);
        const float* b = blk.tensor<const float>(1);
        float* c = blk.tensor<float>(2);
        const auto n = blk.scalar<std::uint32_t>(3);
        const std::size_t stride = blk.grid_dim.x * blk.block_dim.x;
        for (std::size_t t = 0; t < blk.block_dim.x; ++t)
            for (std::size_t i = blk.block_idx.x * blk.block_dim.x + t; i < n; i += stride) c[i] = a[i] + b[i];
    };
    return s;
}

// C[row, col] = A[row, col] + B[row, col] on an M×N row-major matrix:
// thread (x, y) of the 2-D grid is (column x, row y).
KernelSource matrix_add_source() {
    KernelSource s;
    s.name = "matrix_add";
    s.params = {KernelParam::in("a"), KernelParam::in("b"), KernelParam::out("c"),
                KernelParam::scalar("rows", ParamType::u32), KernelParam::scalar("cols", ParamType::u32)};
    s.code["opencl"] = R"(
__kernel void matrix_add(__global const float* a, __global const float* b, __global float* c, uint rows, uint cols) {
    const size_t col = get_global_id(0), row = get_global_id(1);
    if (row < rows && col < cols) c[row * cols + col] = a[row * cols + col] + b[row * cols + col];
})";
    s.code["cuda"] = R"(
extern "C" __global__ void matrix_add(const float* a, const float* b, float* c, unsigned rows, unsigned cols) {
    const unsigned col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) c[row * cols + col] = a[row * cols + col] + b[row * cols + col];
})";
    s.code["glsl"] = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Scalars { uint rows; uint cols; };
void main() {
    const uint col = gl_GlobalInvocationID.x, row = gl_GlobalInvocationID.y;
    if (row < rows && col < cols) c[row * cols + col] = a[row * cols + col] + b[row * cols + col];
})";
    s.host = [](const HostBlock& blk) {
        const float* a = blk.tensor<const float>(0);
        const float* b = blk.tensor<const float>(1);
        float* c = blk.tensor<float>(2);
        const auto rows = blk.scalar<std::uint32_t>(3), cols = blk.scalar<std::uint32_t>(4);
        for (std::size_t ty = 0; ty < blk.block_dim.y; ++ty) {
            const std::size_t row = blk.block_idx.y * blk.block_dim.y + ty;
            for (std::size_t tx = 0; tx < blk.block_dim.x; ++tx) {
                const std::size_t col = blk.block_idx.x * blk.block_dim.x + tx;
                if (row < rows && col < cols) c[row * cols + col] = a[row * cols + col] + b[row * cols + col];
            }
        }
    };
    return s;
}

bool bitwise_equal(const std::vector<float>& x, const std::vector<float>& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

}  // namespace

int main(int argc, char** argv) try {
    CLI::App app{"custom_kernel: the program's own vector add and 2-D matrix add kernels (OpenCL C, CUDA C++, "
                 "Vulkan GLSL, host C++)\nlaunched through accel::UserKernel on every available device, checked "
                 "bitwise against ops::add.",
                 "custom_kernel"};
    bool quick = false;
    app.add_flag("--quick", quick, "small sizes only");
    std::string backends;
    example::add_backends_option(app, backends);
    if (const auto rc = tool_cli::parse(app, argc, argv)) return *rc;
    accel::UserKernel vector_add(vector_add_source()), matrix_add(matrix_add_source());
    const std::vector<std::size_t> lengths = quick ? std::vector<std::size_t>{1, 1000, 100003}
                                                   : std::vector<std::size_t>{1, 1000, 100003, 1 << 24};
    std::vector<std::pair<std::size_t, std::size_t>> shapes{{32, 32}, {100, 200}, {1000, 1000}};
    if (!quick) shapes.push_back({4096, 4096});
    const auto devices = example::devices(backends);

    std::printf("custom_kernel: own kernels vs ops::add (vector add: blocks of %zu; matrix add: %zux%zu blocks).\n"
                "'same' = the own kernel's result is bitwise identical to ops::add's on that device.\n\n",
                kBlock1d, kTile, kTile);
    std::printf("%-10s %-11s %-13s %-30s %10s %10s %s\n", "device", "kernel", "size", "geometry", "own ms",
                "ops::add ms", "result");
    bool all_ok = true;
    auto run = [&](const std::shared_ptr<accel::Device>& d, accel::UserKernel& k, const std::string& size,
                   std::size_t rows, std::size_t cols, const accel::LaunchGeometry& g,
                   const std::vector<float>& a, const std::vector<float>& b) {
        const accel::Shape shape = rows == 1 ? accel::Shape{cols} : accel::Shape{rows, cols};
        auto A = accel::Tensor::from_host(d, shape, a), B = accel::Tensor::from_host(d, shape, b);
        accel::Tensor C(d, shape), R(d, shape);
        const auto launch = [&] {
            if (rows == 1)
                k.launch(g, {A, B, C, cols});
            else
                k.launch(g, {A, B, C, rows, cols});
        };
        try {
            launch();
        } catch (const accel::Unsupported& e) {
            std::printf("%-10s %-11s %-13s skipped: %s\n", d->selector().c_str(), k.source().name.c_str(),
                        size.c_str(), e.what());
            return;
        }
        accel::ops::add(A, B, R);
        const bool same = bitwise_equal(C.download(), R.download());
        all_ok &= same;
        const double own_ms = example::kernel_ms(*d, launch), add_ms = example::kernel_ms(*d, [&] { accel::ops::add(A, B, R); });
        std::printf("%-10s %-11s %-13s %-30s %10.4f %10.4f %s\n", d->selector().c_str(), k.source().name.c_str(),
                    size.c_str(), g.to_string().c_str(), own_ms, add_ms, same ? "same" : "DIFFERENT");
    };
    for (const auto& d : devices) {
        const auto& limits = d->info().limits;
        for (std::size_t n : lengths) {
            const auto a = example::random_floats(n, 1), b = example::random_floats(n, 2);
            run(d, vector_add, std::to_string(n), 1, n, accel::geometry_1d(n, kBlock1d, limits), a, b);
        }
        for (const auto& [m, n] : shapes) {
            const auto a = example::random_floats(m * n, 3), b = example::random_floats(m * n, 4);
            accel::LaunchGeometry g;
            g.block = {kTile, kTile, 1};
            g.grid = {accel::ceil_div(n, kTile), accel::ceil_div(m, kTile), 1};
            run(d, matrix_add, std::to_string(m) + " x " + std::to_string(n), m, n, g, a, b);
        }
    }
    return all_ok ? 0 : 1;
} catch (const accel::Error& e) {
    std::fprintf(stderr, "custom_kernel: %s\n", e.what());
    return 1;
}
