// A program's own kernels (accel::UserKernel) on the device under test:
// results against ops::add and the float64 oracle on fresh random data, the
// errors of a bad launch, and threads launching at once. A backend that
// builds no program kernels yet says so (Unsupported) and its cases are
// reported skipped.
#include "support/check.hpp"

#include <accel/user_kernel.hpp>

#include <cstring>
#include <stdexcept>
#include <thread>

using namespace accel;
using namespace accel_test;

namespace {

// y[i] = alpha·x[i] + y[i] for i < n (saxpy), in every backend's language.
KernelSource saxpy_source() {
    KernelSource s;
    s.name = "saxpy";
    s.params = {KernelParam::in("x"), KernelParam::out("y"), KernelParam::scalar("alpha", ParamType::f32),
                KernelParam::scalar("n", ParamType::u32)};
    s.code["opencl"] = R"(
__kernel void saxpy(__global const float* x, __global float* y, float alpha, uint n) {
    const size_t i = get_global_id(0);
    if (i < n) y[i] = alpha * x[i] + y[i];
})";
    s.code["cuda"] = R"(
extern "C" __global__ void saxpy(const float* x, float* y, float alpha, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + y[i];
})";
    s.code["glsl"] = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Scalars { float alpha; uint n; };
void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i < n) y[i] = alpha * x[i] + y[i];
})";
    s.host = [](const HostBlock& b) {
        const float* x = b.tensor<const float>(0);
        float* y = b.tensor<float>(1);
        const float alpha = b.scalar<float>(2);
        const auto n = b.scalar<std::uint32_t>(3);
        for (std::size_t t = 0; t < b.block_dim.x; ++t) {
            const std::size_t i = b.block_idx.x * b.block_dim.x + t;
            if (i < n) y[i] = alpha * x[i] + y[i];
        }
    };
    return s;
}

// c = a + b, 1-D, as ops::add computes it (bitwise comparable).
KernelSource add_source() {
    KernelSource s;
    s.name = "my_add";
    s.params = {KernelParam::in("a"), KernelParam::in("b"), KernelParam::out("c"), KernelParam::scalar("n", ParamType::u64)};
    s.code["opencl"] = R"(
__kernel void my_add(__global const float* a, __global const float* b, __global float* c, ulong n) {
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) c[i] = a[i] + b[i];
})";
    s.code["cuda"] = R"(
extern "C" __global__ void my_add(const float* a, const float* b, float* c, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        c[i] = a[i] + b[i];
})";
    // A 64-bit scalar needs shaderInt64 (a device without it: Unsupported, the cases skipped).
    s.code["glsl"] = R"(#version 450
#extension GL_ARB_gpu_shader_int64 : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Scalars { uint64_t n; };
void main() {
    const uint64_t stride = uint64_t(gl_NumWorkGroups.x) * gl_WorkGroupSize.x;
    for (uint64_t i = gl_GlobalInvocationID.x; i < n; i += stride) c[uint(i)] = a[uint(i)] + b[uint(i)];
})";
    s.host = [](const HostBlock& blk) {
        const float* a = blk.tensor<const float>(0);
        const float* b = blk.tensor<const float>(1);
        float* c = blk.tensor<float>(2);
        const auto n = blk.scalar<std::uint64_t>(3);
        const std::size_t stride = blk.grid_dim.x * blk.block_dim.x;
        for (std::size_t t = 0; t < blk.block_dim.x; ++t)
            for (std::size_t i = blk.block_idx.x * blk.block_dim.x + t; i < n; i += stride) c[i] = a[i] + b[i];
    };
    return s;
}

// Whether the device builds and runs program kernels (the CUDA emulation
// compiles them with NVRTC but runs no device code); a MESSAGE says why not.
bool builds_kernels(UserKernel& k) {
    KernelSource noop;
    noop.name = "noop";
    noop.params = {KernelParam::out("x")};
    noop.code["opencl"] = "__kernel void noop(__global float* x) {}";
    noop.code["cuda"] = "extern \"C\" __global__ void noop(float* x) {}";
    noop.code["glsl"] = "#version 450\nlayout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;\n"
                "layout(std430, set = 0, binding = 0) buffer X { float x[]; };\nvoid main() {}\n";
    noop.host = [](const HostBlock&) {};
    try {
        k.build(*device());
        Tensor x(device(), {1});
        UserKernel(noop).launch(LaunchGeometry{{1, 1, 1}, {1, 1, 1}}, {x});
        return true;
    } catch (const Unsupported& e) {
        MESSAGE("skipped: " << device()->selector() << " runs no program kernels: " << std::string(e.what()));
        return false;
    }
}

bool bitwise_equal(const std::vector<float>& x, const std::vector<float>& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("a program's own kernel computes what ops::add and the oracle compute, at every length") {
    UserKernel add(add_source()), saxpy(saxpy_source());
    if (!builds_kernels(add)) return;
    auto g = rng(41);
    const auto& limits = device()->info().limits;
    for (std::size_t n : {std::size_t{1}, std::size_t{255}, std::size_t{256}, std::size_t{257}, std::size_t{4099},
                          std::size_t{100003}}) {
        CAPTURE(n);
        const auto a = uniform(g, n), b = uniform(g, n);
        auto A = Tensor::from_host(device(), {n}, a), B = Tensor::from_host(device(), {n}, b);
        Tensor C(device(), {n}), R(device(), {n});
        // A grid smaller than n / block: the kernel's grid-stride loop covers the rest.
        LaunchGeometry geom = geometry_1d(n, 64, limits);
        geom.grid.x = std::max<std::size_t>(1, geom.grid.x / 3);
        add.launch(geom, {A, B, C, n});
        ops::add(A, B, R);
        const auto got = C.download();
        CHECK(bitwise_equal(got, R.download()));
        expect_close(got, reference::add(a, b), threshold(Op::add), "my_add");

        const float alpha = uniform(g, 1, -2.0f, 2.0f)[0];
        saxpy.launch(geometry_1d(n, 128, limits), {A, C, alpha, n});
        // Judged at the size of its terms: alpha·a + c may cancel to near 0.
        reference::Vec want(n), scale(n);
        for (std::size_t i = 0; i < n; ++i) {
            want[i] = double(alpha) * a[i] + double(got[i]);
            scale[i] = std::abs(double(alpha) * a[i]) + std::abs(double(got[i]));
        }
        expect_close_at_scale(C.download(), want, scale, threshold(Op::add), "saxpy");
    }
}

TEST_CASE("a bad launch of a program's kernel is a clear error naming what was wrong") {
    UserKernel saxpy(saxpy_source());
    if (!builds_kernels(saxpy)) return;
    const std::size_t n = 100;
    auto X = Tensor::from_host(device(), {n}, std::vector<float>(n, 1.0f));
    Tensor Y(device(), {n});
    Tensor Yd(device(), {n}, DType::f64);
    const auto g = geometry_1d(n, 64, device()->info().limits);
    CHECK(contains(message_of([&] { saxpy.launch(g, {X, Y, 2.0f}); }), "3 argument(s) given, its signature has 4"));
    CHECK(contains(message_of([&] { saxpy.launch(g, {X, 1, 2.0f, n}); }), "'y'"));
    CHECK(contains(message_of([&] { saxpy.launch(g, {X, Y, X, n}); }), "a tensor given; pass a scalar"));
    CHECK(contains(message_of([&] { saxpy.launch(g, {X, Yd, 2.0f, n}); }), "pass a f32 tensor"));
    CHECK(contains(message_of([&] { saxpy.launch(g, {X, Y, 2.0, n}); }), "pass a float"));
    CHECK(contains(message_of([&] { saxpy.launch(g, {X, Y, 2.0f, std::uint64_t{1} << 32}); }),
                   "does not fit u32"));
    CHECK(contains(message_of([&] { saxpy.launch(g, {X, Y, 2.0f, -1}); }), "does not fit u32"));
    LaunchGeometry too_big = g;
    too_big.block.x = device()->info().limits.max_block_size + 1;
    CHECK(contains(message_of([&] { saxpy.launch(too_big, {X, Y, 2.0f, n}); }), "kernel 'saxpy'"));
    CHECK_THROWS_AS(saxpy.launch(too_big, {X, Y, 2.0f, n}), InvalidArgument);
    CHECK_THROWS_AS(UserKernel(KernelSource{}), InvalidArgument);

    // A kernel without code for this backend names the field to fill.
    KernelSource empty;
    empty.name = "nothing_here";
    UserKernel none(empty);
    const std::string why = message_of([&] { none.build(*device()); });
    CHECK(contains(why, "nothing_here"));
    CHECK(contains(why, "KernelSource::"));
}

TEST_CASE("four threads launching program kernels on one device each get their own results") {
    UserKernel add(add_source());
    if (!builds_kernels(add)) return;
    std::vector<std::string> failures(4);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < 4; ++t)
        pool.emplace_back([&, t] {
            try {
                auto g = rng(4100 + t);
                auto stream = device()->create_stream();
                for (int round = 0; round < 25; ++round) {
                    const std::size_t n = 1 + g() % 5000;
                    const auto a = uniform(g, n), b = uniform(g, n);
                    auto A = Tensor::from_host(device(), {n}, a), B = Tensor::from_host(device(), {n}, b);
                    Tensor C(device(), {n});
                    add.launch(geometry_1d(n, 128, device()->info().limits), {A, B, C, n}, *stream);
                    stream->synchronize();
                    const auto got = C.download();
                    for (std::size_t i = 0; i < n; ++i)
                        if (got[i] != a[i] + b[i]) {
                            failures[t] = "thread " + std::to_string(t) + " round " + std::to_string(round) +
                                          ": element " + std::to_string(i) + " of " + std::to_string(n) + " wrong";
                            return;
                        }
                }
            } catch (const std::exception& e) {
                failures[t] = "thread " + std::to_string(t) + " threw: " + e.what();
            }
        });
    for (auto& th : pool) th.join();
    for (const auto& f : failures) CHECK_MESSAGE(f.empty(), f);
}

TEST_CASE("a device refuses another runtime's queries, naming both") {
    const std::string other = device()->info().backend == "opencl" ? "cuda" : "opencl";
    const std::string msg =
        message_of([&] { (void)device()->native_object(other, "context"); });
    CHECK(contains(msg, other));
    CHECK(contains(msg, device()->info().backend));
    CHECK_THROWS_AS((void)device()->native_queue(other, device()->default_stream()), InvalidArgument);
    CHECK_THROWS_AS((void)device()->adopt_native_memory(other, NativeMemory{1, 0, 4}), InvalidArgument);
}

TEST_CASE("a C++ kernel that throws fails its launch with the message, not the process") {
    KernelSource s;
    s.name = "throws_in_block_3";
    s.params = {KernelParam::out("x")};
    s.host = [](const HostBlock& b) {
        if (b.block_idx.x == 3) throw std::runtime_error("block 3 refuses");
    };
    UserKernel k(s);
    if (!builds_kernels(k)) return;
    Tensor X(device(), {64});
    LaunchGeometry g;
    g.grid = {8, 1, 1};
    g.block = {8, 1, 1};
    const std::string msg = message_of([&] { k.launch(g, {X}); });
    CHECK(contains(msg, "throws_in_block_3"));
    CHECK(contains(msg, "block 3 refuses"));
    CHECK_THROWS_AS(k.launch(g, {X}), DeviceError);
}

TEST_CASE("host memory the program owns is a tensor through the host's interop, written in place") {
    if (device()->info().backend != "host") {
        MESSAGE("skipped: " << device()->selector() << " is not the host device");
        return;
    }
    auto g = rng(4501);
    const std::size_t n = 1 + g() % 5000;
    const auto a = uniform(g, n);
    std::vector<float> owned(n + 3, -1.0f);  // the tensor over elements 1..n; 0 and n+1.. untouched
    {
        Tensor A = Tensor::from_host(device(), {n}, a);
        Tensor Out = Tensor::over_native_memory(
            device(), "host", NativeMemory{reinterpret_cast<std::uint64_t>(owned.data()), sizeof(float), n * sizeof(float)},
            {n}, DType::f32);
        const NativeMemory back = device()->native_memory("host", Out.buffer());
        CHECK(back.handle == reinterpret_cast<std::uint64_t>(owned.data() + 1));
        ops::add(A, A, Out);
        CHECK_THROWS_AS(Tensor::over_native_memory(device(), "host", NativeMemory{1, 0, 8}, {3}, DType::f32),
                        InvalidArgument);  // 8 bytes for 12
    }
    CHECK(owned[0] == -1.0f);
    CHECK(owned[n + 1] == -1.0f);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += owned[i + 1] != a[i] + a[i];
    CHECK_MESSAGE(wrong == 0, wrong << " of " << n << " wrong");
}

TEST_CASE("a kernel written with accel 0.1's per-language fields builds and runs as code[] does") {
    UserKernel current(saxpy_source());
    if (!builds_kernels(current)) return;
    const KernelSource now = saxpy_source();
    KernelSource old;
    old.name = now.name;
    old.params = now.params;
    old.host = now.host;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    old.opencl = now.code_for("opencl");
    old.cuda = now.code_for("cuda");
    old.glsl = now.code_for("glsl");
#pragma GCC diagnostic pop
    UserKernel deprecated(old);
    auto g = rng(43);
    const std::size_t n = 1000;
    const auto x = uniform(g, n), y = uniform(g, n);
    auto X = Tensor::from_host(device(), {n}, x);
    auto Y1 = Tensor::from_host(device(), {n}, y), Y2 = Tensor::from_host(device(), {n}, y);
    const LaunchGeometry geom = geometry_1d(n, 64, device()->info().limits);
    current.launch(geom, {X, Y1, 0.5f, n});
    deprecated.launch(geom, {X, Y2, 0.5f, n});
    CHECK(bitwise_equal(Y1.download(), Y2.download()));
}

TEST_CASE("a kernel with no code in any of the device's languages is Unsupported naming them") {
    const auto& languages = device()->info().kernel_languages;
    if (languages.empty()) {
        MESSAGE("skipped: " << device()->selector() << " builds no program kernels");
        return;
    }
    KernelSource s;
    s.name = "elsewhere";
    s.params = {KernelParam::out("x")};
    s.code["a-language-no-backend-takes"] = "x";
    const std::string msg = message_of<Unsupported>([&] { UserKernel(s).build(*device()); });
    CAPTURE(msg);
    for (const auto& l : languages) CHECK(contains(msg, l));
    CHECK(contains(msg, "the kernel has a-language-no-backend-takes"));
    CHECK(contains(msg, "KernelSource::"));
}
