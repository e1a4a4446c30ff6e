// Interop with OpenCL both ways (accel/interop/opencl.hpp), on an OpenCL
// device under test: a cl_mem the program made, wrapped as a tensor and used
// by ops::matmul; a result read back through accel's own queue; a stream over
// the program's queue ordering accel's op after the program's kernel; the
// errors of a foreign or misaligned handle and of an unsuitable queue.
#include "support/check.hpp"

#include <accel/interop/opencl.hpp>
#include <accel/user_kernel.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace accel;
using namespace accel_test;
namespace cl = accel::interop::opencl;

namespace {

bool on_opencl() {
    if (device()->info().backend == "opencl") return true;
    MESSAGE("skipped: " << device()->selector() << " is not an OpenCL device");
    return false;
}

// A buffer of the device's context holding `v`, owned by the test.
struct ProgramBuffer {
    cl_mem mem = nullptr;
    ProgramBuffer(cl_context ctx, cl_command_queue q, const std::vector<float>& v) {
        cl_int err = CL_SUCCESS;
        mem = clCreateBuffer(ctx, CL_MEM_READ_WRITE, v.size() * sizeof(float), nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(clEnqueueWriteBuffer(q, mem, CL_TRUE, 0, v.size() * sizeof(float), v.data(), 0, nullptr, nullptr) ==
                CL_SUCCESS);
    }
    ~ProgramBuffer() { clReleaseMemObject(mem); }
};

}  // namespace

TEST_CASE("a cl_mem the program made is a tensor ops::matmul reads, and its result reads back through accel's queue") {
    if (!on_opencl()) return;
    auto g = rng(4201);
    const std::size_t m = 37, k = 19, n = 23;
    const auto a = uniform(g, m * k), b = uniform(g, k * n);
    cl_context ctx = cl::context(*device());
    cl_command_queue q = cl::queue(device()->default_stream());
    ProgramBuffer ma(ctx, q, a), mb(ctx, q, b);
    {
        Tensor A = cl::tensor_over(device(), ma.mem, 0, {m, k}), B = cl::tensor_over(device(), mb.mem, 0, {k, n});
        Tensor C(device(), {m, n});
        ops::matmul(A, B, C);
        // Read C with the OpenCL API on accel's own queue (in order after the matmul).
        const cl::Memory cm = cl::memory(C);
        std::vector<float> got(m * n);
        REQUIRE(clEnqueueReadBuffer(q, cm.mem, CL_TRUE, cm.offset, got.size() * sizeof(float), got.data(), 0, nullptr,
                                    nullptr) == CL_SUCCESS);
        expect_close(got, reference::matmul(a, b, m, n, k), threshold(Op::matmul), "matmul over program cl_mem");
    }
    // Writes through a tensor reach the program's buffer (zero copy).
    std::vector<float> twice(m * k);
    {
        Tensor A = cl::tensor_over(device(), ma.mem, 0, {m, k});
        Tensor T = Tensor::from_host(device(), {m, k}, a);
        ops::add(T, T, A);
        device()->synchronize();
    }
    REQUIRE(clEnqueueReadBuffer(q, ma.mem, CL_TRUE, 0, twice.size() * sizeof(float), twice.data(), 0, nullptr,
                                nullptr) == CL_SUCCESS);
    for (std::size_t i = 0; i < twice.size(); ++i) REQUIRE(twice[i] == a[i] + a[i]);
}

TEST_CASE("a stream over the program's queue runs accel's op after the program's own kernel") {
    if (!on_opencl()) return;
    cl_context ctx = cl::context(*device());
    cl_device_id id = cl::device_id(*device());
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(ctx, id, CL_QUEUE_PROFILING_ENABLE, &err);
    REQUIRE(err == CL_SUCCESS);
    // The program's kernel, built with the OpenCL API: fills x with a slow-to-compute value.
    const char* text = R"(__kernel void fill(__global float* x, uint n) {
        const size_t i = get_global_id(0);
        if (i >= n) return;
        float v = 0;
        for (int r = 0; r < 200; ++r) v += (float)((i + r) % 7);
        x[i] = v;
    })";
    cl_program p = clCreateProgramWithSource(ctx, 1, &text, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(clBuildProgram(p, 1, &id, "", nullptr, nullptr) == CL_SUCCESS);
    cl_kernel fill = clCreateKernel(p, "fill", &err);
    REQUIRE(err == CL_SUCCESS);
    const std::size_t n = 1 << 16;
    {
        auto stream = cl::stream_over(*device(), q);
        REQUIRE(cl::queue(*stream) == q);  // accel's work goes to the program's queue itself
        Tensor X(device(), {n}), Y(device(), {n});
        cl_mem xm = cl::memory(X).mem;
        const cl_uint un = static_cast<cl_uint>(n);
        REQUIRE(clSetKernelArg(fill, 0, sizeof xm, &xm) == CL_SUCCESS);
        REQUIRE(clSetKernelArg(fill, 1, sizeof un, &un) == CL_SUCCESS);
        const std::size_t global = n;
        REQUIRE(clEnqueueNDRangeKernel(q, fill, 1, nullptr, &global, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
        ops::Options o;
        o.stream = stream.get();
        ops::add(X, X, Y, o);  // enqueued behind fill on the same queue, no host wait between
        stream->synchronize();
        const auto y = Y.download();
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i) {
            float v = 0;
            for (int r = 0; r < 200; ++r) v += static_cast<float>((i + r) % 7);
            wrong += y[i] != v + v;
        }
        CHECK_MESSAGE(wrong == 0, wrong << " of " << n << " elements not 2·fill");
    }
    // The queue is still the program's: usable after the stream is gone.
    CHECK(clFinish(q) == CL_SUCCESS);
    clReleaseKernel(fill);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
}

TEST_CASE("unsuitable OpenCL handles are clear errors") {
    if (!on_opencl()) return;
    cl_context ctx = cl::context(*device());
    cl_device_id id = cl::device_id(*device());
    cl_int err = CL_SUCCESS;
    // A queue without profiling, and one out of order (where the device allows it).
    cl_command_queue plain = clCreateCommandQueue(ctx, id, 0, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(contains(message_of([&] { (void)cl::stream_over(*device(), plain); }), "CL_QUEUE_PROFILING_ENABLE"));
    clReleaseCommandQueue(plain);
    // A range past the end and a misaligned offset of a program buffer.
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(contains(message_of([&] { (void)cl::tensor_over(device(), m, 0, {2000}); }), "4096 bytes"));
    CHECK(contains(message_of([&] { (void)cl::tensor_over(device(), m, 4, {8}); }), "CL_DEVICE_MEM_BASE_ADDR_ALIGN"));
    CHECK(contains(message_of([&] { (void)cl::tensor_over(device(), nullptr, 0, {8}); }), "null handle"));
    clReleaseMemObject(m);
    // A build failure carries the build log.
    KernelSource bad;
    bad.name = "broken";
    bad.code["opencl"] = "__kernel void broken(__global float* x) { x[0] = undefined_name; }";
    bad.params = {KernelParam::out("x")};
    UserKernel k(bad);
    const std::string why = message_of([&] { k.build(*device()); });
    CHECK(contains(why, "build log"));
    CHECK(contains(why, "undefined_name"));
    // A signature that does not match the kernel's parameters.
    KernelSource mismatched = bad;
    mismatched.name = "two";
    mismatched.code["opencl"] = "__kernel void two(__global float* x, uint n) { x[0] = n; }";
    UserKernel k2(mismatched);
    CHECK(contains(message_of([&] { k2.build(*device()); }), "takes 2 argument(s), its declared signature 1"));
}

TEST_CASE("a built OpenCL kernel is cached on disk, and a damaged cache file is never trusted") {
    if (!on_opencl()) return;
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("accel-interop-cache-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    ScopedEnv cache("ACCEL_CACHE_DIR", dir.c_str());
    auto g = rng(4401);
    KernelSource s;
    s.name = "scale";
    s.params = {KernelParam::in("x"), KernelParam::out("y"), KernelParam::scalar("n", ParamType::u32)};
    // A source no other test builds: its own cache file.
    s.code["opencl"] = "__kernel void scale(__global const float* x, __global float* y, uint n) {\n"
               "    const size_t i = get_global_id(0);\n    if (i < n) y[i] = 3.0f * x[i];  /* " +
               std::to_string(g()) + " */\n}";
    const std::size_t n = 777;
    const auto x = uniform(g, n);
    auto check_run = [&](const char* when) {
        UserKernel k(s);  // a new kernel object: built again, from the cache when it holds it
        auto X = Tensor::from_host(device(), {n}, x);
        Tensor Y(device(), {n});
        k.launch(geometry_1d(n, 64, device()->info().limits), {X, Y, n});
        const auto y = Y.download();
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i) wrong += y[i] != 3.0f * x[i];
        CHECK_MESSAGE(wrong == 0, when << ": " << wrong << " of " << n << " wrong");
    };
    check_run("first build");
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir / "opencl-kernels")) files.push_back(e.path());
    REQUIRE(files.size() == 1);
    // Intact: accel's header ("accelCL1", the data's length) and exactly that much data.
    // (Its size may change between builds: PoCL's binaries grow once a kernel has run.)
    auto intact = [&] { return cache_file_intact(files[0].string(), "accelCL1"); };
    CHECK(intact());
    const auto intact_size = fs::file_size(files[0]);
    check_run("from the cache");
    // Garbage of the same size, then a truncated file: each run passes and writes an intact file again.
    {
        std::ofstream f(files[0], std::ios::binary | std::ios::trunc);
        f << std::string(intact_size, 'x');
    }
    check_run("after garbage");
    CHECK(intact());
    fs::resize_file(files[0], fs::file_size(files[0]) / 2);
    check_run("after truncation");
    CHECK(intact());
    fs::remove_all(dir);
}
