// accel-opencl-launch: what one accel op costs on an OpenCL device beyond a
// bare enqueue of a kernel doing the same work.
//
// For each platform named (a piece of its CL_PLATFORM_NAME or CL_PLATFORM_VENDOR,
// case-insensitive, as accel's `opencl:NAME` selectors match), in
// interleaved rounds:
//   bare   clSetKernelArg × 4 + clEnqueueNDRangeKernel of a one-element add
//          (NDRange 1) on a queue with profiling enabled, as accel's are;
//   accel  ops::add of two one-element f32 tensors on the device's default
//          stream (validation, path, geometry, accel's own add kernel).
// Each round times --calls back-to-back launches and one finish; the table
// gives the median of the rounds' per-call microseconds and accel / bare.
// Exit status: 0 measured, 1 a platform or device was not found or a call
// failed, 2 usage error.
#include <accel/accel.hpp>
#include <accel/ops.hpp>
#include <tool_cli.hpp>

#define CL_TARGET_OPENCL_VERSION 120  // the 1.2 API accel's backend uses (clCreateCommandQueue)
#include <CL/cl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// The same work as accel's add of one element: c = a + b where in range.
const char* const kBareAdd =
    "__kernel void add(__global const float* a, __global const float* b, __global float* c, ulong n) {\n"
    "    const ulong i = get_global_id(0);\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

void check(cl_int code, const char* call) {
    if (code != CL_SUCCESS)
        throw std::runtime_error(std::string(call) + " failed with OpenCL error " + std::to_string(code));
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// A bare OpenCL setup of the first device of the first platform whose name or
// vendor contains `piece`: context, profiling queue, the add kernel, three buffers.
class Bare {
public:
    explicit Bare(const std::string& piece) {
        cl_uint count = 0;
        check(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
        std::vector<cl_platform_id> platforms(count);
        check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
        cl_platform_id platform = nullptr;
        for (cl_platform_id p : platforms) {
            char name[256] = {}, vendor[256] = {};
            check(clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr), "clGetPlatformInfo");
            check(clGetPlatformInfo(p, CL_PLATFORM_VENDOR, sizeof vendor - 1, vendor, nullptr), "clGetPlatformInfo");
            if (lower(std::string(name) + " " + vendor).find(lower(piece)) != std::string::npos) {
                platform = p;
                break;
            }
        }
        if (!platform) throw std::runtime_error("no OpenCL platform's name or vendor contains '" + piece + "'");
        check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device_, nullptr), "clGetDeviceIDs");
        cl_int err = CL_SUCCESS;
        context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
        check(err, "clCreateContext");
        queue_ = clCreateCommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE, &err);
        check(err, "clCreateCommandQueue");
        const char* source = kBareAdd;
        program_ = clCreateProgramWithSource(context_, 1, &source, nullptr, &err);
        check(err, "clCreateProgramWithSource");
        check(clBuildProgram(program_, 1, &device_, "", nullptr, nullptr), "clBuildProgram");
        kernel_ = clCreateKernel(program_, "add", &err);
        check(err, "clCreateKernel");
        for (cl_mem& m : mem_) {
            m = clCreateBuffer(context_, CL_MEM_READ_WRITE, sizeof(float), nullptr, &err);
            check(err, "clCreateBuffer");
        }
    }
    Bare(const Bare&) = delete;
    Bare& operator=(const Bare&) = delete;
    ~Bare() {
        for (cl_mem m : mem_)
            if (m) clReleaseMemObject(m);
        if (kernel_) clReleaseKernel(kernel_);
        if (program_) clReleaseProgram(program_);
        if (queue_) clReleaseCommandQueue(queue_);
        if (context_) clReleaseContext(context_);
    }

    void launch() {
        const cl_ulong n = 1;
        const std::size_t global = 1;
        for (cl_uint i = 0; i < 3; ++i) check(clSetKernelArg(kernel_, i, sizeof(cl_mem), &mem_[i]), "clSetKernelArg");
        check(clSetKernelArg(kernel_, 3, sizeof n, &n), "clSetKernelArg");
        check(clEnqueueNDRangeKernel(queue_, kernel_, 1, nullptr, &global, &global, 0, nullptr, nullptr),
              "clEnqueueNDRangeKernel");
    }
    void finish() { check(clFinish(queue_), "clFinish"); }

private:
    cl_device_id device_ = nullptr;
    cl_context context_ = nullptr;
    cl_command_queue queue_ = nullptr;
    cl_program program_ = nullptr;
    cl_kernel kernel_ = nullptr;
    cl_mem mem_[3] = {nullptr, nullptr, nullptr};
};

// Microseconds per call of `calls` launches and one finish.
template <class Launch, class Finish>
double us_per_call(int calls, Launch&& launch, Finish&& finish) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) launch();
    finish();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Per-call cost of accel's add of one element on OpenCL platforms against a bare enqueue of the same "
                 "work (interleaved rounds, medians)"};
    std::vector<std::string> platforms{"pocl", "intel"};
    int calls = 1000;
    int rounds = 31;
    app.add_option("--platforms", platforms, "pieces of platform names, as in accel's opencl:NAME (default pocl,intel)")
        ->delimiter(',');
    app.add_option("--calls", calls, "launches per round (default 1000)")->check(CLI::Range(1, 10000000));
    app.add_option("--rounds", rounds, "rounds, bare and accel alternating (default 31)")->check(CLI::Range(1, 100000));
    if (const auto code = tool_cli::parse(app, argc, argv)) return *code;

    std::printf("%-10s %10s %10s %13s\n", "platform", "bare us", "accel us", "accel / bare");
    int status = 0;
    for (const std::string& piece : platforms) {
        try {
            Bare bare(piece);
            auto device = accel::open_device("opencl:" + piece);
            const std::vector<float> one{1.0f};
            const auto a = accel::Tensor::from_host(device, {1}, one, accel::DType::f32);
            const auto b = accel::Tensor::from_host(device, {1}, one, accel::DType::f32);
            accel::Tensor c(device, {1}, accel::DType::f32);
            std::vector<double> bare_us, accel_us;
            for (int r = 0; r <= rounds; ++r) {  // round 0 warms both up
                const double tb = us_per_call(calls, [&] { bare.launch(); }, [&] { bare.finish(); });
                const double ta = us_per_call(calls, [&] { accel::ops::add(a, b, c); }, [&] { device->synchronize(); });
                if (r == 0) continue;
                bare_us.push_back(tb);
                accel_us.push_back(ta);
            }
            const double mb = median(bare_us), ma = median(accel_us);
            std::printf("%-10s %10.2f %10.2f %13.2f\n", piece.c_str(), mb, ma, ma / mb);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "accel-opencl-launch: %s: %s\n", piece.c_str(), e.what());
            status = 1;
        }
    }
    return status;
}
