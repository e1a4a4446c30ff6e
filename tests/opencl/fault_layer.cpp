// An OpenCL loader layer for tests (OpenCL 3.0 layers, loaded by ocl-icd
// from OPENCL_LAYERS=<this file>): forwards every call to the implementation
// below it (PoCL in the tests), except that the N-th call of one chosen
// entry point, counted from when the fault was set, fails with a chosen
// error code without reaching the implementation — what a real driver does
// when it runs out of memory, resets a hung kernel or fails a build.
//
// Controlled from the test process through the C functions below (the test
// dlopen()s this file with RTLD_NOLOAD once OpenCL is loaded): the entry
// points the layer can fail are the ones accel's OpenCL backend calls.
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl_layer.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>

// Every entry point the layer can fail (those backends/opencl calls).
#define FAULT_LAYER_ENTRY_POINTS(X)                                                                          \
    X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext)           \
    X(clReleaseContext) X(clCreateCommandQueue) X(clCreateCommandQueueWithProperties) X(clRetainCommandQueue)  \
    X(clReleaseCommandQueue) X(clCreateBuffer) X(clReleaseMemObject) X(clCreateProgramWithSource)              \
    X(clBuildProgram) X(clGetProgramBuildInfo) X(clReleaseProgram) X(clCreateKernel) X(clReleaseKernel)        \
    X(clSetKernelArg) X(clEnqueueNDRangeKernel) X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer)                 \
    X(clEnqueueCopyBuffer) X(clEnqueueMarkerWithWaitList) X(clWaitForEvents) X(clGetEventProfilingInfo)        \
    X(clReleaseEvent) X(clFinish) X(clFlush)

namespace {

const cl_icd_dispatch* g_target = nullptr;
cl_icd_dispatch g_layer;

struct Fault {
    std::mutex mutex;
    std::string call;  // "" : none
    long nth = 0;
    cl_int code = CL_SUCCESS;
    long seen = 0;        // calls of `call` since the fault was set
    bool fired = false;
};
Fault& fault() {
    static Fault* f = new Fault;  // never destroyed: calls may come during exit
    return *f;
}

// Whether this call of `name` is the one that fails; its code in *code.
bool fires(const char* name, cl_int* code) {
    Fault& f = fault();
    std::lock_guard<std::mutex> lock(f.mutex);
    if (f.fired || f.call != name) return false;
    if (++f.seen != f.nth) return false;
    f.fired = true;
    *code = f.code;
    return true;
}

// A failed call: cl_int-returning entry points return the code; the others
// (clCreate*) return null and store the code in their last argument, errcode_ret.
template <class R, class... A>
R fail(cl_int code, A... args) {
    if constexpr (std::is_same_v<R, cl_int>) {
        return code;
    } else {
        if constexpr (sizeof...(A) > 0) {
            using Last = std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>;
            if constexpr (std::is_same_v<Last, cl_int*>) {
                cl_int* errcode_ret = std::get<sizeof...(A) - 1>(std::forward_as_tuple(args...));
                if (errcode_ret) *errcode_ret = code;
            }
        }
        return R{};
    }
}

template <class F, F cl_icd_dispatch::*Member, const char* Name>
struct Wrap;
template <class R, class... A, R(CL_API_CALL* cl_icd_dispatch::*Member)(A...), const char* Name>
struct Wrap<R(CL_API_CALL*)(A...), Member, Name> {
    static R CL_API_CALL call(A... args) {
        cl_int code = CL_SUCCESS;
        if (fires(Name, &code)) return fail<R>(code, args...);
        return (g_target->*Member)(args...);
    }
};

#define FAULT_LAYER_NAME(name) constexpr char k_##name[] = #name;
FAULT_LAYER_ENTRY_POINTS(FAULT_LAYER_NAME)
#undef FAULT_LAYER_NAME

bool known(const char* name) {
#define FAULT_LAYER_KNOWN(n) \
    if (!std::strcmp(name, #n)) return true;
    FAULT_LAYER_ENTRY_POINTS(FAULT_LAYER_KNOWN)
#undef FAULT_LAYER_KNOWN
    return false;
}

}  // namespace

extern "C" {

/// Makes the `nth` (≥ 1) call of entry point `call` from now on fail with
/// `code`, once; replaces a fault set before. Returns 0, or -1 for an entry
/// point the layer does not wrap or nth < 1.
__attribute__((visibility("default"))) int cl_fault_set(const char* call, long nth, int code) {
    if (!call || !known(call) || nth < 1) return -1;
    Fault& f = fault();
    std::lock_guard<std::mutex> lock(f.mutex);
    f.call = call;
    f.nth = nth;
    f.code = code;
    f.seen = 0;
    f.fired = false;
    return 0;
}

/// Clears the fault.
__attribute__((visibility("default"))) void cl_fault_clear() {
    Fault& f = fault();
    std::lock_guard<std::mutex> lock(f.mutex);
    f.call.clear();
    f.fired = false;
}

/// 1 once the fault set last has fired, else 0.
__attribute__((visibility("default"))) int cl_fault_fired() {
    Fault& f = fault();
    std::lock_guard<std::mutex> lock(f.mutex);
    return f.fired ? 1 : 0;
}

/// Whether the loader initialized the layer (1) or not (0).
__attribute__((visibility("default"))) int cl_fault_layer_active() { return g_target ? 1 : 0; }

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name, size_t param_value_size, void* param_value,
                                               size_t* param_value_size_ret) {
    if (param_name == CL_LAYER_API_VERSION) {
        const cl_layer_api_version v = CL_LAYER_API_VERSION_100;
        if (param_value) {
            if (param_value_size < sizeof v) return CL_INVALID_VALUE;
            std::memcpy(param_value, &v, sizeof v);
        }
        if (param_value_size_ret) *param_value_size_ret = sizeof v;
        return CL_SUCCESS;
    }
    if (param_name == CL_LAYER_NAME) {
        static const char name[] = "accel test fault layer";
        if (param_value) {
            if (param_value_size < sizeof name) return CL_INVALID_VALUE;
            std::memcpy(param_value, name, sizeof name);
        }
        if (param_value_size_ret) *param_value_size_ret = sizeof name;
        return CL_SUCCESS;
    }
    return CL_INVALID_VALUE;
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch* target_dispatch,
                                            cl_uint* num_entries_ret, const cl_icd_dispatch** layer_dispatch_ret) {
    const cl_uint ours = sizeof(cl_icd_dispatch) / sizeof(void*);
    if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret || num_entries < ours) return CL_INVALID_VALUE;
    g_target = target_dispatch;
    g_layer = *target_dispatch;  // everything forwards unchanged ...
#define FAULT_LAYER_WRAP(name) \
    g_layer.name = &Wrap<decltype(g_layer.name), &cl_icd_dispatch::name, k_##name>::call;
    FAULT_LAYER_ENTRY_POINTS(FAULT_LAYER_WRAP)  // ... but these may fail
#undef FAULT_LAYER_WRAP
    *num_entries_ret = ours;
    *layer_dispatch_ret = &g_layer;
    return CL_SUCCESS;
}

}  // extern "C"
