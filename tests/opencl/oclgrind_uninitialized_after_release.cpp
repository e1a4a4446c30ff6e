// Minimal reproduction of an Oclgrind 21.10 false positive, kept so that the
// check it concerns can be turned back on once Oclgrind is fixed.
//
// With OCLGRIND_UNINITIALIZED=1, a buffer created after a smaller buffer was
// released reuses the released buffer's slot, and Oclgrind's shadow memory
// keeps the old, smaller extent: every byte past it reads as uninitialized
// even after a kernel stored to it. Here round 1 works on 1 element, round 2
// on 7; round 2's `produce` writes all 7 elements and `column_copy` reads
// them back, yet Oclgrind reports "Uninitialized value written to global
// memory" for elements 1..6, while the values are right (printed; checked).
// Without the releases, or with equal sizes, nothing is reported.
//
// accel's conformance run on Oclgrind therefore keeps the uninitialized-value
// check off (tests/CMakeLists.txt); this program is run as a test that passes
// while Oclgrind still reports the false positive and fails once it does not,
// saying to turn the check back on.
//
// Exit status: 0 when the values are right, 1 when not, 77 when no Oclgrind
// platform is registered.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {
const char* kSource = R"CL(
__kernel void produce(__global const float* z, __global float* l, ulong n) {
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) l[i] = 2.0f * z[i];
}
__kernel void column_copy(__global const float* x, __global float* y, ulong n) {
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = x[i];
}
)CL";

cl_platform_id oclgrind_platform() {
    cl_uint count = 0;
    if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return nullptr;
    std::vector<cl_platform_id> platforms(count);
    clGetPlatformIDs(count, platforms.data(), nullptr);
    for (cl_platform_id p : platforms) {
        char name[256] = {};
        clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
        if (std::strstr(name, "Oclgrind")) return p;
    }
    return nullptr;
}
}  // namespace

int main() {
    cl_platform_id platform = oclgrind_platform();
    if (!platform) {
        std::puts("no Oclgrind platform registered: skipped");
        return 77;
    }
    cl_device_id device = nullptr;
    cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr);
    cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    cl_program program = clCreateProgramWithSource(context, 1, &kSource, nullptr, &err);
    if (clBuildProgram(program, 1, &device, "", nullptr, nullptr) != CL_SUCCESS) {
        std::puts("clBuildProgram failed");
        return 1;
    }
    cl_kernel produce = clCreateKernel(program, "produce", &err);
    cl_kernel copy = clCreateKernel(program, "column_copy", &err);
    bool right = true;
    for (cl_ulong n : {cl_ulong{1}, cl_ulong{7}}) {
        std::vector<float> z(n), y(n);
        for (cl_ulong i = 0; i < n; ++i) z[i] = float(i) - 3.0f;
        const std::size_t bytes = n * sizeof(float);
        cl_mem bz = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, z.data(), &err);
        cl_mem bl = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
        cl_mem by = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
        clSetKernelArg(produce, 0, sizeof bz, &bz);
        clSetKernelArg(produce, 1, sizeof bl, &bl);
        clSetKernelArg(produce, 2, sizeof n, &n);
        clSetKernelArg(copy, 0, sizeof bl, &bl);
        clSetKernelArg(copy, 1, sizeof by, &by);
        clSetKernelArg(copy, 2, sizeof n, &n);
        const std::size_t global = 64, local = 64;
        clEnqueueNDRangeKernel(queue, produce, 1, nullptr, &global, &local, 0, nullptr, nullptr);
        clEnqueueNDRangeKernel(queue, copy, 1, nullptr, &global, &local, 0, nullptr, nullptr);
        clEnqueueReadBuffer(queue, by, CL_TRUE, 0, bytes, y.data(), 0, nullptr, nullptr);
        for (cl_ulong i = 0; i < n; ++i) right = right && y[i] == 2.0f * z[i];
        clReleaseMemObject(bz);
        clReleaseMemObject(bl);
        clReleaseMemObject(by);
    }
    clReleaseKernel(produce);
    clReleaseKernel(copy);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    std::puts(right ? "values right" : "values WRONG");
    return right ? 0 : 1;
}
